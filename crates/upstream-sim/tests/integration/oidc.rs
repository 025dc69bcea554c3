//! The SSO OIDC flows over HTTP, and their tokens on the API side.

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::{OidcConfig, SimConfig, SimHandle};

use crate::common::*;

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

async fn post(sim: &SimHandle, path: &str, body: Value) -> (u16, Option<String>, Value) {
    let resp = client()
        .post(format!("{}{path}", sim.oidc_url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let kind = resp
        .headers()
        .get("x-amzn-errortype")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, kind, resp.json().await.unwrap())
}

async fn register(sim: &SimHandle) -> (String, String) {
    let (status, _, reg) = post(
        sim,
        "/client/register",
        json!({"clientName": "gateway", "clientType": "public",
               "scopes": ["codewhisperer:completions", "codewhisperer:analysis", "codewhisperer:conversations"],
               "grantTypes": [DEVICE_GRANT, "refresh_token"]}),
    )
    .await;
    assert_eq!(status, 200, "{reg}");
    for key in [
        "clientId",
        "clientSecret",
        "clientIdIssuedAt",
        "clientSecretExpiresAt",
    ] {
        assert!(!reg[key].is_null(), "{key}");
    }
    assert!(
        reg["clientSecretExpiresAt"].as_u64().unwrap() > reg["clientIdIssuedAt"].as_u64().unwrap()
    );
    (
        reg["clientId"].as_str().unwrap().to_owned(),
        reg["clientSecret"].as_str().unwrap().to_owned(),
    )
}

async fn start_device(sim: &SimHandle, id: &str, secret: &str) -> Value {
    let (status, _, dev) = post(
        sim,
        "/device_authorization",
        json!({"clientId": id, "clientSecret": secret, "startUrl": "https://view.awsapps.com/start"}),
    )
    .await;
    assert_eq!(status, 200, "{dev}");
    dev
}

async fn poll(
    sim: &SimHandle,
    id: &str,
    secret: &str,
    device_code: &str,
) -> (u16, Option<String>, Value) {
    post(
        sim,
        "/token",
        json!({"grantType": DEVICE_GRANT, "clientId": id, "clientSecret": secret, "deviceCode": device_code}),
    )
    .await
}

async fn refresh(
    sim: &SimHandle,
    id: &str,
    secret: &str,
    token: &str,
) -> (u16, Option<String>, Value) {
    post(
        sim,
        "/token",
        json!({"grantType": "refresh_token", "clientId": id, "clientSecret": secret, "refreshToken": token}),
    )
    .await
}

fn sim_config(oidc: OidcConfig) -> SimConfig {
    SimConfig {
        oidc,
        ..SimConfig::default()
    }
}

#[tokio::test]
async fn device_flow_pending_then_tokens_that_the_api_accepts() {
    let sim = sim_with(sim_config(OidcConfig {
        approve_after: Some(2),
        ..OidcConfig::default()
    }))
    .await;
    let (id, secret) = register(&sim).await;
    let dev = start_device(&sim, &id, &secret).await;
    assert_eq!(dev["interval"], 1);
    assert_eq!(dev["expiresIn"], 600);
    let user_code = dev["userCode"].as_str().unwrap();
    assert_eq!(user_code.len(), 9);
    let complete = dev["verificationUriComplete"].as_str().unwrap();
    assert!(complete.starts_with(dev["verificationUri"].as_str().unwrap()));
    assert!(complete.ends_with(user_code));
    let code = dev["deviceCode"].as_str().unwrap();

    for _ in 0..2 {
        let (status, kind, err) = poll(&sim, &id, &secret, code).await;
        assert_eq!(status, 400);
        assert_eq!(kind.as_deref(), Some("AuthorizationPendingException"));
        assert_eq!(err["error"], "authorization_pending");
        assert!(err["error_description"].is_string());
    }
    let (status, _, tokens) = poll(&sim, &id, &secret, code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["tokenType"], "Bearer");
    assert_eq!(tokens["expiresIn"], 3600);
    let access = tokens["accessToken"].as_str().unwrap();
    let refresh_token = tokens["refreshToken"].as_str().unwrap();
    assert!(sim.refresh_token_live(refresh_token));
    assert_eq!(chat(&sim, access, &chat_body("hi")).await.status(), 200);

    // The device code is spent.
    let (status, _, err) = poll(&sim, &id, &secret, code).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

#[tokio::test]
async fn slow_down_expired_and_denied() {
    let sim = sim_with(sim_config(OidcConfig {
        approve_after: Some(0),
        slow_down_once: true,
        ..OidcConfig::default()
    }))
    .await;
    let (id, secret) = register(&sim).await;
    let dev = start_device(&sim, &id, &secret).await;
    let code = dev["deviceCode"].as_str().unwrap();
    let (_, kind, err) = poll(&sim, &id, &secret, code).await;
    assert_eq!(err["error"], "slow_down");
    assert_eq!(kind.as_deref(), Some("SlowDownException"));
    assert_eq!(poll(&sim, &id, &secret, code).await.0, 200);

    sim.update_oidc(|c| c.device_code_ttl = Duration::ZERO);
    let dev = start_device(&sim, &id, &secret).await;
    let (_, _, err) = poll(&sim, &id, &secret, dev["deviceCode"].as_str().unwrap()).await;
    assert_eq!(err["error"], "expired_token");

    sim.update_oidc(|c| {
        c.device_code_ttl = Duration::from_secs(600);
        c.slow_down_once = false;
        c.deny = true;
    });
    let dev = start_device(&sim, &id, &secret).await;
    let (_, _, err) = poll(&sim, &id, &secret, dev["deviceCode"].as_str().unwrap()).await;
    assert_eq!(err["error"], "access_denied");
}

#[tokio::test]
async fn manual_approval_in_the_browser_or_by_handle() {
    let sim = sim_with(sim_config(OidcConfig {
        approve_after: None,
        ..OidcConfig::default()
    }))
    .await;
    let (id, secret) = register(&sim).await;
    let dev = start_device(&sim, &id, &secret).await;
    let code = dev["deviceCode"].as_str().unwrap();
    for _ in 0..3 {
        assert_eq!(
            poll(&sim, &id, &secret, code).await.2["error"],
            "authorization_pending"
        );
    }
    let page = client()
        .get(dev["verificationUriComplete"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(poll(&sim, &id, &secret, code).await.0, 200);

    let dev = start_device(&sim, &id, &secret).await;
    assert!(sim.deny_device(dev["userCode"].as_str().unwrap()));
    let (_, _, err) = poll(&sim, &id, &secret, dev["deviceCode"].as_str().unwrap()).await;
    assert_eq!(err["error"], "access_denied");
}

#[tokio::test]
async fn refresh_grant_with_seeded_credentials_rotation_and_rejection() {
    let sim = sim_with(sim_config(OidcConfig {
        access_token_ttl: Duration::from_secs(5),
        rotate_refresh_tokens: true,
        ..OidcConfig::default()
    }))
    .await;
    let creds = sim.seed_credentials();
    let (status, _, tokens) = refresh(
        &sim,
        &creds.client_id,
        &creds.client_secret,
        &creds.refresh_token,
    )
    .await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["expiresIn"], 5);
    assert_eq!(tokens["tokenType"], "Bearer");
    let rotated = tokens["refreshToken"].as_str().unwrap().to_owned();
    assert_ne!(rotated, creds.refresh_token);
    assert!(!sim.refresh_token_live(&creds.refresh_token));
    let access = tokens["accessToken"].as_str().unwrap();
    assert_eq!(chat(&sim, access, &chat_body("hi")).await.status(), 200);

    // The retired refresh token is dead.
    let (status, kind, err) = refresh(
        &sim,
        &creds.client_id,
        &creds.client_secret,
        &creds.refresh_token,
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(kind.as_deref(), Some("InvalidGrantException"));

    // Without rotation, no refreshToken comes back.
    sim.update_oidc(|c| c.rotate_refresh_tokens = false);
    let (_, _, tokens) = refresh(&sim, &creds.client_id, &creds.client_secret, &rotated).await;
    assert!(tokens.get("refreshToken").is_none());
    assert!(tokens["accessToken"].is_string());

    sim.update_oidc(|c| c.reject_refresh = true);
    let (_, _, err) = refresh(&sim, &creds.client_id, &creds.client_secret, &rotated).await;
    assert_eq!(err["error"], "invalid_grant");
}

#[tokio::test]
async fn request_errors() {
    let sim = sim().await;
    let (id, secret) = register(&sim).await;
    let (status, kind, err) = refresh(&sim, &id, "wrong", "x").await;
    assert_eq!(
        (status, err["error"].as_str()),
        (401, Some("invalid_client"))
    );
    assert_eq!(kind.as_deref(), Some("InvalidClientException"));

    let (status, _, err) = post(
        &sim,
        "/token",
        json!({"grantType": "authorization_code", "clientId": id, "clientSecret": secret}),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );

    let (status, _, err) = post(
        &sim,
        "/device_authorization",
        json!({"clientId": id, "clientSecret": secret}),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_request"))
    );
    assert!(err["error_description"]
        .as_str()
        .unwrap()
        .contains("startUrl"));

    let (status, _, err) = post(
        &sim,
        "/client/register",
        json!({"clientName": "x", "clientType": "confidential"}),
    )
    .await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_client_metadata"))
    );

    let resp = client()
        .post(format!("{}/token", sim.oidc_url()))
        .body("grant_type=refresh_token")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400, "form-encoded bodies are refused");
}

#[tokio::test]
async fn oidc_routes_also_live_under_the_api_prefix() {
    let sim = sim().await;
    let creds = sim.seed_credentials();
    let resp = client()
        .post(format!("{}/oidc/token", sim.base_url()))
        .json(
            &json!({"grantType": "refresh_token", "clientId": creds.client_id,
            "clientSecret": creds.client_secret, "refreshToken": creds.refresh_token}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let tokens: Value = resp.json().await.unwrap();
    let access = tokens["accessToken"].as_str().unwrap();
    assert_eq!(chat(&sim, access, &chat_body("hi")).await.status(), 200);
    let recorded = sim.requests_to("/token");
    assert_eq!(recorded.len(), 1, "recorded once, with the OIDC path");
    assert_eq!(recorded[0].service, upstream_sim::Service::Oidc);
}
