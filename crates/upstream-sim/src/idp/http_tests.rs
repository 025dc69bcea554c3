//! The provider over HTTP, as the gateway talks to it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use super::store::s256;
use super::*;
use crate::{start, SimConfig};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "http://127.0.0.1:1/_ui/api/auth/google/callback";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn discovery_authorize_and_token_over_http() {
    let sim = start(SimConfig::default()).await.unwrap();
    let issuer = sim.idp_issuer_url();
    assert_eq!(issuer, format!("{}/idp", sim.base_url()));
    let http = client();

    let doc: Value = http
        .get(format!("{issuer}/.well-known/openid-configuration"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["issuer"], issuer.as_str());
    let jwks: Value = http
        .get(doc["jwks_uri"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jwks["keys"][0]["kid"], "sim-key-1");
    assert_eq!(jwks["keys"][0]["e"], "AQAB");

    sim.idp_set_user("bob@example.org", true);
    let (client_id, secret) = sim.idp_client();
    let resp = http
        .get(doc["authorization_endpoint"].as_str().unwrap())
        .query(&[
            ("response_type", "code"),
            ("client_id", client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("scope", "openid email profile"),
            ("state", "s t&1"),
            ("nonce", "n-1"),
            ("code_challenge", s256(VERIFIER).as_str()),
            ("code_challenge_method", "S256"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    let location = url::Url::parse(resp.headers()["location"].to_str().unwrap()).unwrap();
    assert!(location.as_str().starts_with(REDIRECT));
    let q: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    assert!(q.contains(&("state".into(), "s t&1".into())));
    let code = q.iter().find(|(k, _)| k == "code").unwrap().1.clone();

    // client_secret_basic
    let resp = http
        .post(doc["token_endpoint"].as_str().unwrap())
        .basic_auth(&client_id, Some(&secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=authorization_code&code={code}&redirect_uri={}&code_verifier={VERIFIER}",
            url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let tokens: Value = resp.json().await.unwrap();
    let id_token = tokens["id_token"].as_str().unwrap();
    let claims: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(id_token.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["email"], "bob@example.org");
    assert_eq!(claims["nonce"], "n-1");
    assert_eq!(claims["aud"], client_id.as_str());

    let token_req = sim
        .idp_requests()
        .into_iter()
        .find(|r| r.path == "/token")
        .unwrap();
    assert_eq!(token_req.param("code_verifier"), Some(VERIFIER));
    assert!(token_req.authorization.unwrap().starts_with("Basic "));
    sim.shutdown().await;
}

#[tokio::test]
async fn wrong_client_secret_is_invalid_client_and_unavailable_is_503() {
    let sim = start(SimConfig::default()).await.unwrap();
    let issuer = sim.idp_issuer_url();
    let http = client();
    let (client_id, _) = sim.idp_client();
    let resp = http
        .post(format!("{issuer}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=authorization_code&code=x&client_id={client_id}&client_secret=wrong"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "invalid_client");

    sim.update_idp(|c| c.unavailable = true);
    let resp = http
        .get(format!("{issuer}/.well-known/openid-configuration"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    sim.shutdown().await;
}
