//! 2FA enrollment over HTTP (spec 3.4, 5.4 item 4; interfaces.md 6).

use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{totp_code, FullEnv, TestDb, UiClient};

async fn setup_admin(env: &FullEnv) -> UiClient {
    let ui = env.ui();
    let resp = ui
        .post(
            "/_ui/api/setup",
            json!({"setup_code": env.setup_code().await, "email": "root@example.com",
                   "password": "root password 123"}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    ui
}

/// 3.4 rows 1 and 2: setup returns the secret, URI and QR code; a valid
/// code turns 2FA on and returns 8 recovery codes; then setup is refused.
async fn enrollment(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let ui = setup_admin(&env).await;
    let resp = ui.get("/_ui/api/auth/2fa/setup").await;
    assert_eq!(resp.status(), 200);
    let setup: Value = resp.json().await.unwrap();
    let secret = setup["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32);
    assert!(secret
        .bytes()
        .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)));
    let uri = setup["otpauth_uri"].as_str().unwrap();
    assert!(uri.starts_with("otpauth://totp/"), "{uri}");
    assert!(uri.contains("root%40example.com") && uri.contains(&format!("secret={secret}")));
    let qr = setup["qr_code_data_url"].as_str().unwrap();
    let svg = base64::engine::general_purpose::STANDARD
        .decode(qr.strip_prefix("data:image/svg+xml;base64,").unwrap())
        .unwrap();
    assert!(String::from_utf8(svg).unwrap().contains("<svg"));

    // A wrong code leaves 2FA off.
    let resp = ui
        .post("/_ui/api/auth/2fa/verify", json!({"code": "000000"}))
        .await;
    assert_eq!(resp.status(), 400);
    let me: Value = ui.get("/_ui/api/auth/me").await.json().await.unwrap();
    assert_eq!(me["totp_enabled"], false);

    let resp = ui
        .post(
            "/_ui/api/auth/2fa/verify",
            json!({"code": totp_code(secret, 0)}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["ok"], true);
    let codes: Vec<&str> = body["recovery_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 8);
    let mut distinct = codes.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8);
    assert!(codes
        .iter()
        .all(|c| c.len() == 10 && c.bytes().all(|b| b.is_ascii_alphanumeric())));
    let me: Value = ui.get("/_ui/api/auth/me").await.json().await.unwrap();
    assert_eq!(me["totp_enabled"], true);

    // 2FA is on: enrollment is refused both ways.
    assert_eq!(ui.get("/_ui/api/auth/2fa/setup").await.status(), 409);
    let resp = ui
        .post(
            "/_ui/api/auth/2fa/verify",
            json!({"code": totp_code(secret, 1)}),
        )
        .await;
    assert_eq!(resp.status(), 409);

    // The next sign-in needs the second step; the enrollment code is spent.
    let next = env.ui();
    let (_, body) = next.login("root@example.com", "root password 123").await;
    let token = body["login_token"].as_str().unwrap().to_owned();
    let (status, _) = next.second_factor(&token, &totp_code(secret, 0)).await;
    assert_eq!(status, 401, "the enrollment's code cannot sign in again");
    let (status, _) = next.second_factor(&token, codes[0]).await;
    assert_eq!(status, 200);
}

/// Verify without setup is refused; a second setup replaces the first secret.
async fn setup_is_required_and_replaced(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let ui = setup_admin(&env).await;
    let resp = ui
        .post("/_ui/api/auth/2fa/verify", json!({"code": "123456"}))
        .await;
    assert_eq!(resp.status(), 400);
    let first: Value = ui
        .get("/_ui/api/auth/2fa/setup")
        .await
        .json()
        .await
        .unwrap();
    let second: Value = ui
        .get("/_ui/api/auth/2fa/setup")
        .await
        .json()
        .await
        .unwrap();
    assert_ne!(first["secret"], second["secret"]);
    let old = totp_code(first["secret"].as_str().unwrap(), 0);
    let new = totp_code(second["secret"].as_str().unwrap(), 0);
    if old != new {
        let resp = ui
            .post("/_ui/api/auth/2fa/verify", json!({"code": old}))
            .await;
        assert_eq!(resp.status(), 400);
    }
    let resp = ui
        .post("/_ui/api/auth/2fa/verify", json!({"code": new}))
        .await;
    assert_eq!(resp.status(), 200);
}

/// Enrollment needs a session and the CSRF token.
async fn enrollment_needs_a_session(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let anonymous = env.ui();
    assert_eq!(anonymous.get("/_ui/api/auth/2fa/setup").await.status(), 401);
    let ui = setup_admin(&env).await;
    let resp = ui
        .http
        .post(format!("{}/_ui/api/auth/2fa/verify", env.gateway.base))
        .json(&json!({"code": "123456"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
}

crate::both_stores!(
    enrollment,
    setup_is_required_and_replaced,
    enrollment_needs_a_session
);
