//! Full deployment's start and setup state (spec 3.1, 5.4 item 5): the
//! setup-only mode, the first admin (setup code or seeded), replicas seeing
//! the change without a restart, the encryption key checks, and the UI API's
//! absence in proxy mode.

use serde_json::{json, Value};

use crate::common::{
    admin_env, client, FullEnv, Gateway, ProxyEnv, TestDb, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP,
};

async fn error_type(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    (
        status,
        body["error"]["type"].as_str().unwrap_or("").to_owned(),
    )
}

/// 3.1: no admin -> /v1 503 while health and the UI API work; the first
/// completed sign-in makes that user Admin and opens /v1 on every replica.
async fn setup_state_gates_v1(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let replica = env.replica().await;
    let http = client();

    assert_eq!(
        http.get(env.url("/health")).send().await.unwrap().status(),
        200
    );
    let status: Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["setup_complete"], false);
    for base in [&env.gateway.base, &replica.base] {
        let resp = http.get(format!("{base}/v1/models")).send().await.unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(status, 503);
        assert_eq!(body["error"]["type"], "setup_required");
        assert!(body["error"]["message"].as_str().unwrap().contains("/_ui/"));
    }

    let ui = env.ui();
    let resp = ui
        .post(
            "/_ui/api/setup",
            json!({"setup_code": env.setup_code().await, "email": "Root@Example.com",
                   "password": "a long enough password"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["email"], "root@example.com");
    assert_eq!(body["role"], "Admin");
    assert_eq!(body["needs_2fa_setup"], true);
    assert_eq!(body["must_change_password"], false);

    // Setup is complete on both replicas, without a restart; /v1 now wants a key.
    for base in [&env.gateway.base, &replica.base] {
        let resp = http.get(format!("{base}/v1/models")).send().await.unwrap();
        assert_eq!(error_type(resp).await, (401, "auth_error".to_owned()));
        let resp = http
            .post(format!("{base}/v1/chat/completions"))
            .bearer_auth("sk-anything")
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(error_type(resp).await, (401, "auth_error".to_owned()));
        let status: Value = crate::common::UiClient::new(base)
            .get("/_ui/api/status")
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(status["setup_complete"], true);
    }
}

/// The setup code is required, and setup happens once even when raced.
async fn setup_code_is_checked_and_used_once(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let code = env.setup_code().await;
    let body = |email: &str, code: &str| json!({"setup_code": code, "email": email, "password": "a long enough password"});
    let resp = env
        .ui()
        .post("/_ui/api/setup", body("a@example.com", "wrong"))
        .await;
    assert_eq!(error_type(resp).await, (403, "forbidden".to_owned()));
    let resp = env
        .ui()
        .post(
            "/_ui/api/setup",
            json!({"setup_code": code, "email": "a@example.com", "password": "short"}),
        )
        .await;
    assert_eq!(error_type(resp).await, (400, "validation_error".to_owned()));
    // Long enough, but on the common-password list (any case): refused.
    let resp = env
        .ui()
        .post(
            "/_ui/api/setup",
            json!({"setup_code": code, "email": "a@example.com", "password": "1QAZ2wsx3EDC"}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let refusal: Value = resp.json().await.unwrap();
    assert_eq!(refusal["error"]["type"], "validation_error");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("common or breached passwords"),
        "{refusal}"
    );

    let (a, b) = (env.ui(), env.ui());
    let (ra, rb) = tokio::join!(
        a.post("/_ui/api/setup", body("a@example.com", &code)),
        b.post("/_ui/api/setup", body("b@example.com", &code))
    );
    let mut statuses = [ra.status().as_u16(), rb.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 409], "exactly one first admin");
    let resp = env
        .ui()
        .post("/_ui/api/setup", body("c@example.com", &code))
        .await;
    assert_eq!(error_type(resp).await, (409, "conflict".to_owned()));
}

/// INITIAL_ADMIN_* seed the first admin (2FA on with the secret), on the
/// first run only.
async fn initial_admin_is_seeded_on_first_run_only(db: TestDb) {
    let mut env = FullEnv::start(db, &admin_env()).await;
    let status: Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["setup_complete"], true);
    let ui = env.admin().await;
    let me: Value = ui.get("/_ui/api/auth/me").await.json().await.unwrap();
    assert_eq!(me["email"], ADMIN_EMAIL);
    assert_eq!(me["role"], "Admin");
    assert_eq!(me["totp_enabled"], true);
    assert_eq!(me["auth_method"], "password");

    // A restart with other INITIAL_ADMIN_* values changes nothing.
    let mut config = env.config.clone();
    config.initial_admin_email = Some("other@example.com".into());
    config.initial_admin_password = Some("another long password".into());
    let old = std::mem::replace(&mut env.gateway, Gateway::start(config).await);
    old.stop().await.unwrap();
    let ui = env.ui();
    let (status, _) = ui.login("other@example.com", "another long password").await;
    assert_eq!(status, 401);
    let (status, body) = ui.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!((status, &body["needs_2fa"]), (200, &json!(true)));
    let users: Value = env
        .admin()
        .await
        .get("/_ui/api/users")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(users["count"], 1);
    let _ = ADMIN_TOTP;
}

/// A different key at start is a clear error, never garbage later.
async fn wrong_encryption_key_stops_the_start(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let mut config = env.config.clone();
    config.config_encryption_key = Some("ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=".into());
    let err = Gateway::start(config).await.wait().await.unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("encryption key does not match"), "{text}");
    assert!(!text.contains("ZmVkY2Jh"), "the key is never printed");
}

/// Without CONFIG_ENCRYPTION_KEY a key file is generated (0600) and reused;
/// without the file the database's secrets cannot be read: start-up error.
async fn generated_key_file(db: TestDb) {
    let dir = crate::common::TempDir::new();
    let mut config = crate::common::full_config(&db, &dir, &admin_env());
    config.config_encryption_key = None;
    let gw = Gateway::start(config.clone()).await;
    let resp = crate::common::UiClient::new(&gw.base)
        .get("/_ui/api/status")
        .await;
    assert_eq!(resp.status(), 200);
    gw.stop().await.unwrap();
    let key_file = dir.path().join("encryption.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // The SQLite file the gateway created is its owner's only, too.
        if let Some(path) = db.url.strip_prefix("sqlite://") {
            let mode = std::fs::metadata(path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
    // Reused: the same key opens the store again.
    let gw = Gateway::start(config.clone()).await;
    let resp = crate::common::UiClient::new(&gw.base)
        .get("/_ui/api/status")
        .await;
    assert_eq!(resp.status(), 200);
    gw.stop().await.unwrap();
    // Lost: a new key is generated, and the store refuses it.
    std::fs::remove_file(&key_file).unwrap();
    let err = Gateway::start(config).await.wait().await.unwrap_err();
    assert!(format!("{err:#}").contains("encryption key does not match"));
}

crate::both_stores!(
    setup_state_gates_v1,
    setup_code_is_checked_and_used_once,
    initial_admin_is_seeded_on_first_run_only,
    wrong_encryption_key_stops_the_start,
    generated_key_file,
);

/// Proxy mode has no UI API.
#[tokio::test]
async fn proxy_mode_has_no_ui_api() {
    let env = ProxyEnv::start(&[]).await;
    for path in ["/_ui/api/status", "/_ui/api/auth/me"] {
        let resp = client().get(env.url(path)).send().await.unwrap();
        assert_eq!(
            error_type(resp).await,
            (404, "not_found".to_owned()),
            "{path}"
        );
    }
    let resp = client()
        .post(env.url("/_ui/api/auth/login"))
        .json(&json!({"email": "a@b.c", "password": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}
