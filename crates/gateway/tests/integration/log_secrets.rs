//! No secret reaches the log (OWASP ASVS 4.0 7.1.1, 7.1.2): the release
//! binary's logic, run in full mode at the most verbose settings (`LOG_LEVEL
//! =debug`, `DEBUG_MODE=all`, which also logs request bodies) through the
//! calls that carry secrets: sign-in with password and TOTP, an API key
//! created and used, a secret configuration value stored, the password
//! changed, sign-out. Every secret planted on the way is then searched for
//! in everything the process wrote.

use std::fs::File;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{
    free_port, totp_code, TempDir, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, TEST_KEY,
};

const NEW_PASSWORD: &str = "planted new password 4711";
const SSO_SECRET: &str = "planted-sso-client-secret-0815";
const BODY_SECRET: &str = "sk-planted-body-secret-1234567890";

#[tokio::test]
async fn no_planted_secret_reaches_the_log() {
    let dir = TempDir::new();
    let port = free_port();
    let log_path = dir.path().join("gateway.log");
    let log = File::create(&log_path).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"))
        .env_clear()
        .current_dir(std::env::temp_dir())
        .env("SERVER_HOST", "127.0.0.1")
        .env("SERVER_PORT", port.to_string())
        .env("DATA_DIR", dir.path())
        .env("CONFIG_ENCRYPTION_KEY", TEST_KEY)
        .env("COOKIE_SECURE", "false")
        .env("UPSTREAM_API_ENDPOINT", "http://127.0.0.1:9")
        .env("UPSTREAM_OIDC_ENDPOINT", "http://127.0.0.1:9")
        .env("INITIAL_ADMIN_EMAIL", ADMIN_EMAIL)
        .env("INITIAL_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .env("INITIAL_ADMIN_TOTP_SECRET", ADMIN_TOTP)
        .env("LOG_LEVEL", "debug")
        .env("DEBUG_MODE", "all")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let mut up = false;
    for _ in 0..300 {
        if http.get(format!("{base}/health")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(up, "the gateway did not start");

    let ui = UiClient::new(&base);
    let signed_in = ui
        .login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 0)
        .await;
    assert_eq!(signed_in["role"], "Admin", "{signed_in}");
    let session = ui.session_id().unwrap();
    let csrf = ui.csrf().unwrap();

    let created: Value = ui
        .post("/_ui/api/keys", json!({"label": "planted"}))
        .await
        .json()
        .await
        .unwrap();
    let key = created["key"].as_str().unwrap().to_owned();
    // The key used on /v1, with a secret in the (logged) body as well.
    let resp = http
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({
            "model": "claude-sonnet-4.5",
            "messages": [{"role": "user", "content": "hi"}],
            "api_key": BODY_SECRET,
        }))
        .send()
        .await
        .unwrap();
    assert_ne!(resp.status(), 401, "the new key was refused");

    let resp = ui
        .put("/_ui/api/config", json!({"sso_client_secret": SSO_SECRET}))
        .await;
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    let resp = ui
        .post(
            "/_ui/api/auth/password/change",
            json!({"current_password": ADMIN_PASSWORD, "new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    assert_eq!(
        ui.post("/_ui/api/auth/logout", json!({})).await.status(),
        200
    );

    let _ = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status();
    let _ = child.wait();
    let logs = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        logs.contains("request body"),
        "DEBUG_MODE=all logged no body: the run did not exercise the body log"
    );
    let current_totp = totp_code(ADMIN_TOTP, 0);
    let planted = [
        ("the admin's password", ADMIN_PASSWORD),
        ("the new password", NEW_PASSWORD),
        ("the TOTP secret", ADMIN_TOTP),
        ("the encryption key", TEST_KEY),
        ("the session id", session.as_str()),
        ("the CSRF token", csrf.as_str()),
        ("the API key", key.as_str()),
        ("the API key's secret part", &key[12..]),
        ("the SSO client secret", SSO_SECRET),
        ("a secret in a request body", BODY_SECRET),
        ("a TOTP code", current_totp.as_str()),
    ];
    for (what, secret) in planted {
        assert!(
            !logs.contains(secret),
            "{what} reached the log:\n{}",
            logs.lines()
                .filter(|l| l.contains(secret))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
