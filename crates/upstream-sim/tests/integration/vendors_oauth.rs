//! The messages vendor's OAuth token endpoint: refresh with rotation (JSON and
//! form bodies), the new access token accepted by the API, rejection, client
//! id pinning, and the expired-token 401 that makes a client refresh.

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::{Service, SimHandle};

use crate::common::*;
use crate::vendors_support::*;

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";

fn token_url(sim: &SimHandle) -> String {
    format!("{}/v1/oauth/token", sim.messages_vendor_oauth_url())
}

async fn refresh_json(sim: &SimHandle, refresh_token: &str) -> (u16, Value) {
    let resp = client()
        .post(token_url(sim))
        .json(&json!({"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": CLIENT_ID}))
        .send()
        .await
        .unwrap();
    let (status, _, body) = json_of(resp).await;
    (status, body)
}

async fn messages_with(sim: &SimHandle, access_token: &str) -> u16 {
    client()
        .post(format!("{}/v1/messages", sim.messages_vendor_url()))
        .bearer_auth(access_token)
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "oauth-2025-04-20")
        .json(&messages_body("hi", false))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn refresh_rotates_and_the_new_token_works() {
    let sim = sim().await;
    let seeded = sim.seed_messages_vendor_oauth_with_ttl(Duration::from_secs(60));
    let (status, tokens) = refresh_json(&sim, &seeded.refresh_token).await;
    assert_eq!(status, 200);
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 8 * 3600);
    assert!(tokens["scope"].as_str().unwrap().contains("user:inference"));
    assert!(tokens["account"]["email_address"].is_string());
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert!(access.starts_with("sk-ant-oat01-") && refresh.starts_with("sk-ant-ort01-"));
    assert_ne!(refresh, seeded.refresh_token);
    assert!(!sim.messages_vendor_refresh_token_live(&seeded.refresh_token));
    assert!(sim.messages_vendor_refresh_token_live(refresh));
    assert_eq!(messages_with(&sim, access).await, 200);
    // The retired refresh token is refused.
    let (status, err) = refresh_json(&sim, &seeded.refresh_token).await;
    assert_eq!(status, 400);
    assert_eq!(err["error"], "invalid_grant");
    assert_eq!(sim.messages_vendor_oauth_refreshes(), 1);
    let recorded = sim.requests_to("/messages_vendor_oauth/v1/oauth/token");
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].service, Service::MessagesVendorOauth);
}

#[tokio::test]
async fn form_encoded_refresh_is_accepted() {
    let sim = sim().await;
    let seeded = sim.seed_messages_vendor_oauth();
    let resp = client()
        .post(token_url(&sim))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=refresh_token&refresh_token={}&client_id={CLIENT_ID}",
            seeded.refresh_token
        ))
        .send()
        .await
        .unwrap();
    let (status, _, tokens) = json_of(resp).await;
    assert_eq!(status, 200);
    assert_eq!(
        messages_with(&sim, tokens["access_token"].as_str().unwrap()).await,
        200
    );
}

#[tokio::test]
async fn expired_access_token_then_refresh() {
    let sim = sim().await;
    let seeded = sim.seed_messages_vendor_oauth_with_ttl(Duration::from_millis(200));
    assert_eq!(messages_with(&sim, &seeded.access_token).await, 200);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(messages_with(&sim, &seeded.access_token).await, 401);
    let (_, tokens) = refresh_json(&sim, &seeded.refresh_token).await;
    assert_eq!(
        messages_with(&sim, tokens["access_token"].as_str().unwrap()).await,
        200
    );
}

#[tokio::test]
async fn rejection_missing_fields_and_client_pinning() {
    let sim = sim().await;
    let seeded = sim.seed_messages_vendor_oauth();
    let post = |body: Value| {
        let url = token_url(&sim);
        async move { json_of(client().post(url).json(&body).send().await.unwrap()).await }
    };
    let (status, _, err) =
        post(json!({"grant_type": "refresh_token", "client_id": CLIENT_ID})).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, _, err) = post(json!({"grant_type": "password", "client_id": CLIENT_ID})).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (status, _, err) =
        post(json!({"grant_type": "refresh_token", "refresh_token": seeded.refresh_token})).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_request"))
    );

    sim.update_vendors(|c| c.oauth.client_id = Some(CLIENT_ID.to_owned()));
    let (status, _, err) = post(json!({"grant_type": "refresh_token", "refresh_token": seeded.refresh_token, "client_id": "other"})).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (401, Some("invalid_client"))
    );

    sim.update_vendors(|c| c.oauth.reject_refresh = true);
    let (status, err) = refresh_json(&sim, &seeded.refresh_token).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(err["error_description"].is_string());

    sim.update_vendors(|c| {
        c.oauth.reject_refresh = false;
        c.oauth.rotate_refresh_tokens = false;
    });
    let (status, tokens) = refresh_json(&sim, &seeded.refresh_token).await;
    assert_eq!(status, 200);
    assert_eq!(
        tokens["refresh_token"],
        seeded.refresh_token.as_str(),
        "no rotation"
    );
}
