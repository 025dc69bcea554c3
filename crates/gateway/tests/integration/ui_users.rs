//! Roles and user administration over HTTP (spec 5.6, 4.3; interfaces.md
//! 6): admin-only routes, one user and another's records, the last admin,
//! admin password reset, the domain allowlist, status and system.

use serde_json::{json, Value};

use crate::common::{admin_env, FullEnv, TestDb, USER_PASSWORD_2};

async fn json_of(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// A User calling admin routes gets 403 `forbidden`; one user cannot read
/// or change another's account.
async fn users_cannot_reach_admin_routes_or_others(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let bob = env.new_user(&admin, "bob@example.com", "User").await;
    let ui = &bob.client;

    let alice_path = format!("/_ui/api/users/{}", alice.id);
    let forbidden = [
        ui.get("/_ui/api/users").await,
        ui.get(&alice_path).await,
        ui.put(&format!("{alice_path}/role"), json!({"role": "Admin"}))
            .await,
        ui.put(
            &format!("/_ui/api/users/{}/role", bob.id),
            json!({"role": "Admin"}),
        )
        .await,
        ui.delete(&alice_path).await,
        ui.post(
            "/_ui/api/admin/users/create",
            json!({"email": "x@example.com", "password": "long enough password", "role": "Admin"}),
        )
        .await,
        ui.post(
            &format!("/_ui/api/admin/users/{}/reset-password", alice.id),
            json!({"new_password": "taken over password"}),
        )
        .await,
        ui.get("/_ui/api/domains").await,
        ui.post("/_ui/api/domains", json!({"domain": "evil.example"}))
            .await,
        ui.delete("/_ui/api/domains/example.com").await,
    ];
    for resp in forbidden {
        let url = resp.url().clone();
        let (status, body) = json_of(resp).await;
        assert_eq!(status, 403, "{url}");
        assert_eq!(body["error"]["type"], "forbidden", "{url}");
    }
    // Bob sees himself; Alice is untouched and can still sign in.
    let (_, me) = json_of(ui.get("/_ui/api/auth/me").await).await;
    assert_eq!(me["email"], "bob@example.com");
    assert_eq!(me["role"], "User");
    assert_eq!(ui.get("/_ui/api/system").await.status(), 200);
    let again = env.ui();
    let (status, body) = again.login("alice@example.com", USER_PASSWORD_2).await;
    assert_eq!((status, &body["needs_2fa"]), (200, &json!(true)));
    let (_, detail) = json_of(admin.get(&alice_path).await).await;
    assert_eq!(detail["role"], "User");
}

/// List, detail, create, role change and delete, with their errors.
async fn admin_manages_users(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let (status, list) = json_of(admin.get("/_ui/api/users").await).await;
    assert_eq!(status, 200);
    assert_eq!(list["count"], 1);
    let me = &list["users"][0];
    assert_eq!(me["email"], "admin@example.com");
    for field in [
        "id",
        "role",
        "auth_method",
        "totp_enabled",
        "must_change_password",
        "sso_linked",
        "created_at",
        "last_login_at",
    ] {
        assert!(me.get(field).is_some(), "{field}");
    }
    assert!(me["created_at"].as_str().unwrap().ends_with('Z'));

    let create = |email: &str, password: &str, role: &str| json!({"email": email, "password": password, "role": role});
    let (status, body) = json_of(
        admin
            .post(
                "/_ui/api/admin/users/create",
                create("New@Example.com", "long enough password", "User"),
            )
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    let id = body["user_id"].as_str().unwrap().to_owned();
    for (body, expected) in [
        (
            create("new@example.com", "long enough password", "User"),
            409,
        ),
        (create("other@example.com", "short", "User"), 400),
        (
            create("other@example.com", "long enough password", "Root"),
            400,
        ),
        (create("not-an-email", "long enough password", "User"), 400),
    ] {
        let resp = admin
            .post("/_ui/api/admin/users/create", body.clone())
            .await;
        assert_eq!(resp.status(), expected, "{body}");
    }

    let path = format!("/_ui/api/users/{id}");
    let (status, detail) = json_of(admin.get(&path).await).await;
    assert_eq!(status, 200);
    assert_eq!(detail["email"], "new@example.com");
    assert_eq!(detail["must_change_password"], true);
    assert_eq!(detail["auth_method"], "password");
    let (status, changed) = json_of(
        admin
            .put(&format!("{path}/role"), json!({"role": "Admin"}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(changed["role"], "Admin");
    let resp = admin
        .put(&format!("{path}/role"), json!({"role": "Owner"}))
        .await;
    assert_eq!(resp.status(), 400);

    let (status, body) = json_of(admin.delete(&path).await).await;
    assert_eq!((status, body), (200, json!({"ok": true})));
    assert_eq!(admin.get(&path).await.status(), 404);
    assert_eq!(admin.delete(&path).await.status(), 404);
    assert_eq!(admin.get("/_ui/api/users/not-a-uuid").await.status(), 404);
}

/// The last admin can be neither demoted nor deleted (409); with a second
/// admin both work.
async fn last_admin_is_protected(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let (_, me) = json_of(admin.get("/_ui/api/auth/me").await).await;
    let path = format!("/_ui/api/users/{}", me["user_id"].as_str().unwrap());
    let (status, body) = json_of(
        admin
            .put(&format!("{path}/role"), json!({"role": "User"}))
            .await,
    )
    .await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["type"], "conflict");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("last admin"));
    assert_eq!(admin.delete(&path).await.status(), 409);

    let second = env.new_user(&admin, "second@example.com", "Admin").await;
    let resp = second
        .client
        .put(&format!("{path}/role"), json!({"role": "User"}))
        .await;
    assert_eq!(resp.status(), 200);
    // The demoted admin's session follows at once.
    assert_eq!(admin.get("/_ui/api/users").await.status(), 403);
    // Now the second admin is the last one.
    let own = format!("/_ui/api/users/{}", second.id);
    assert_eq!(second.client.delete(&own).await.status(), 409);
    assert_eq!(second.client.delete(&path).await.status(), 200);
    assert_eq!(
        admin.get("/_ui/api/auth/me").await.status(),
        401,
        "deleted with its sessions"
    );
}

/// An admin reset ends the user's sessions and forces a password change:
/// such a session reaches only password change, me and logout.
async fn admin_reset_forces_a_password_change(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let user = env.new_user(&admin, "carol@example.com", "User").await;
    let resp = admin
        .post(
            &format!("/_ui/api/admin/users/{}/reset-password", user.id),
            json!({"new_password": "short"}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let resp = admin
        .post(
            &format!("/_ui/api/admin/users/{}/reset-password", user.id),
            json!({"new_password": "temporary password 1"}),
        )
        .await;
    assert_eq!(json_of(resp).await, (200, json!({"ok": true})));
    assert_eq!(user.client.get("/_ui/api/auth/me").await.status(), 401);

    let ui = env.ui();
    let (status, _) = ui.login("carol@example.com", USER_PASSWORD_2).await;
    assert_eq!(status, 401, "the old password is gone");
    let (_, body) = ui.login("carol@example.com", "temporary password 1").await;
    let (status, body) = ui
        .second_factor(
            body["login_token"].as_str().unwrap(),
            &user.recovery_codes[0],
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["must_change_password"], true);
    for path in ["/_ui/api/system", "/_ui/api/auth/2fa/setup"] {
        assert_eq!(ui.get(path).await.status(), 403, "{path}");
    }
    let (_, me) = json_of(ui.get("/_ui/api/auth/me").await).await;
    assert_eq!(me["must_change_password"], true);

    let change =
        |current: &str, new: &str| json!({"current_password": current, "new_password": new});
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            change("wrong password", "final password 99"),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            change("temporary password 1", "temporary password 1"),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            change("temporary password 1", "tiny"),
        )
        .await;
    assert_eq!(resp.status(), 400);
    // A password on the common-password list is refused like a short one.
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            change("temporary password 1", "QazWsxEdcRfv"),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            change("temporary password 1", "final password 99"),
        )
        .await;
    assert_eq!(json_of(resp).await, (200, json!({"ok": true})));
    assert_eq!(ui.get("/_ui/api/system").await.status(), 200);
    let (_, me) = json_of(ui.get("/_ui/api/auth/me").await).await;
    assert_eq!(me["must_change_password"], false);
    let (status, _) = env
        .ui()
        .login("carol@example.com", "temporary password 1")
        .await;
    assert_eq!(status, 401);
}

/// The domain allowlist endpoints.
async fn domain_allowlist(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let (status, body) = json_of(admin.get("/_ui/api/domains").await).await;
    assert_eq!((status, body), (200, json!({"domains": [], "count": 0})));
    let (status, body) = json_of(
        admin
            .post("/_ui/api/domains", json!({"domain": " @Example.COM "}))
            .await,
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!({"ok": true, "domain": "example.com"}))
    );
    assert_eq!(
        admin
            .post("/_ui/api/domains", json!({"domain": "example.com"}))
            .await
            .status(),
        409
    );
    assert_eq!(
        admin
            .post("/_ui/api/domains", json!({"domain": "not a domain"}))
            .await
            .status(),
        400
    );
    assert_eq!(
        admin.post("/_ui/api/domains", json!({})).await.status(),
        400
    );
    let (_, list) = json_of(admin.get("/_ui/api/domains").await).await;
    assert_eq!(list["count"], 1);
    assert_eq!(list["domains"][0]["domain"], "example.com");
    assert!(list["domains"][0]["added_by"].is_string());
    assert!(list["domains"][0]["created_at"].is_string());
    let (status, body) = json_of(admin.delete("/_ui/api/domains/Example.com").await).await;
    assert_eq!((status, body), (200, json!({"ok": true})));
    assert_eq!(
        admin.delete("/_ui/api/domains/example.com").await.status(),
        404
    );
}

/// `GET /_ui/api/status` (public) and `GET /_ui/api/system` (signed in).
async fn status_and_system(db: TestDb) {
    let backend = db.backend;
    let env = FullEnv::start(db, &admin_env()).await;
    let (status, body) = json_of(env.ui().get("/_ui/api/status").await).await;
    assert_eq!(status, 200);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "setup_complete",
            "mode",
            "version",
            "auth_google_enabled",
            "auth_password_enabled"
        ]
    );
    assert_eq!(body["mode"], "full");
    assert_eq!(body["auth_google_enabled"], false);
    assert_eq!(body["auth_password_enabled"], true);
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));

    assert_eq!(env.ui().get("/_ui/api/system").await.status(), 401);
    let admin = env.admin().await;
    let (status, system) = json_of(admin.get("/_ui/api/system").await).await;
    assert_eq!(status, 200);
    assert_eq!(system["database"]["kind"], backend);
    assert_eq!(system["database"]["schema_version"], 13, "{system}");
    assert_eq!(system["mode"], "full");
    assert!(system["uptime_secs"].is_u64());
    assert!(system["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(system["build"].as_object().unwrap().contains_key("commit"));
    assert!(
        system["build"]["built_at"].is_null()
            || system["build"]["built_at"].as_str().unwrap().ends_with('Z')
    );
    assert_eq!(system["pending_restart"], serde_json::json!([]));
    // This replica's heartbeat is written at start.
    let mut replicas = Vec::new();
    for _ in 0..50 {
        let (_, system) = json_of(admin.get("/_ui/api/system").await).await;
        replicas = system["replicas"].as_array().cloned().unwrap_or_default();
        if !replicas.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(replicas.len(), 1, "{replicas:?}");
    assert_eq!(replicas[0]["version"], env!("CARGO_PKG_VERSION"));
    assert!(!replicas[0]["hostname"].as_str().unwrap().is_empty());
    assert_eq!(admin.get("/_ui/api/nope").await.status(), 404);

    // Users see the version and the mode only.
    let user = env.new_user(&admin, "user@example.com", "User").await;
    let (status, system) = json_of(user.client.get("/_ui/api/system").await).await;
    assert_eq!(status, 200);
    let keys: Vec<&String> = system.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["version", "mode"]);
}

crate::both_stores!(
    users_cannot_reach_admin_routes_or_others,
    admin_manages_users,
    last_admin_is_protected,
    admin_reset_forces_a_password_change,
    domain_allowlist,
    status_and_system,
);
