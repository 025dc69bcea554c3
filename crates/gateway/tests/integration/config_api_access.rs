//! Who may use the configuration API: an admin with a session and the CSRF
//! token; a User gets 403, a missing or wrong CSRF token 403, no session 401.

use serde_json::json;

use crate::both_stores;
use crate::common::{admin_env, FullEnv, TestDb, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP};

const PATHS: [&str; 3] = [
    "/_ui/api/config",
    "/_ui/api/config/schema",
    "/_ui/api/config/history",
];

both_stores!(only_admins_with_csrf_reach_the_config_api);

async fn only_admins_with_csrf_reach_the_config_api(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;

    // No session.
    let anonymous = env.ui();
    for path in PATHS {
        assert_eq!(anonymous.get(path).await.status(), 401, "{path}");
    }
    assert_eq!(
        anonymous
            .put("/_ui/api/config", json!({"http_max_retries": 5}))
            .await
            .status(),
        401
    );

    let admin = env.ui();
    admin
        .login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 0)
        .await;
    for path in PATHS {
        assert_eq!(admin.get(path).await.status(), 200, "{path}");
    }

    // A User (password + 2FA, unrestricted) is refused every call.
    let resp = admin
        .post(
            "/_ui/api/admin/users/create",
            json!({"email": "user@example.com", "password": "user password 0123", "role": "User"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let user = env.ui();
    let (status, body) = user.login("user@example.com", "user password 0123").await;
    assert_eq!(status, 200, "{body}");
    // An account an admin created must change its password, then enroll 2FA.
    let resp = user
        .post(
            "/_ui/api/auth/password/change",
            json!({"current_password": "user password 0123", "new_password": "another password 4567"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    user.enroll_2fa().await;
    for path in PATHS {
        let resp = user.get(path).await;
        assert_eq!(resp.status(), 403, "{path}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["type"], "forbidden");
    }
    assert_eq!(
        user.put("/_ui/api/config", json!({"http_max_retries": 5}))
            .await
            .status(),
        403
    );

    // The admin without the CSRF header, and with a wrong one.
    let url = env.url("/_ui/api/config");
    let resp = admin
        .http
        .put(&url)
        .json(&json!({"http_max_retries": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "forbidden");
    let resp = admin
        .http
        .put(&url)
        .header("x-csrf-token", "not-the-token")
        .json(&json!({"http_max_retries": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);

    // Nothing of the refused calls was stored.
    let history: serde_json::Value = admin
        .get("/_ui/api/config/history")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(history["count"], 0, "{history}");

    // With the token it works.
    let resp = admin
        .put("/_ui/api/config", json!({"http_max_retries": 5}))
        .await;
    assert_eq!(resp.status(), 200);
}
