//! The messages vendor's authorization-code flow with PKCE, as the gateway
//! drives it: the authorize page redirects with `code` and `state`, the token
//! endpoint checks the code (single use, expiry, client, redirect URI, S256
//! verifier) and answers tokens of a new account that the messages API
//! accepts; bad requests get a page and no redirect, a denial redirects with
//! `error=access_denied`.

use reqwest::redirect::Policy;
use serde_json::{json, Value};
use upstream_sim::pkce::s256;
use upstream_sim::{
    Service, SimHandle, MESSAGES_VENDOR_OAUTH_CLIENT_ID, MESSAGES_VENDOR_OAUTH_REDIRECT_URI,
};

use crate::common::*;
use crate::vendors_support::*;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const SCOPE: &str = "org:create_api_key user:profile user:inference";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The authorize query the gateway sends, with one parameter replaced or
/// removed (`None`).
fn authorize_query(change: Option<(&str, Option<&str>)>) -> Vec<(String, String)> {
    let challenge = s256(VERIFIER);
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", MESSAGES_VENDOR_OAUTH_CLIENT_ID),
        ("redirect_uri", MESSAGES_VENDOR_OAUTH_REDIRECT_URI),
        ("scope", SCOPE),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", "st-123"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect::<Vec<_>>();
    if let Some((name, value)) = change {
        params.retain(|(k, _)| k != name);
        if let Some(v) = value {
            params.push((name.to_owned(), v.to_owned()));
        }
    }
    params
}

async fn authorize(sim: &SimHandle, query: &[(String, String)]) -> reqwest::Response {
    no_redirects()
        .get(sim.messages_vendor_oauth_authorize_url())
        .query(query)
        .send()
        .await
        .unwrap()
}

/// The query parameters of a redirect's `Location`.
fn location_params(resp: &reqwest::Response) -> (String, Vec<(String, String)>) {
    let location = resp.headers()["location"].to_str().unwrap();
    let url = url::Url::parse(location).unwrap();
    let base = format!("{}://{}{}", url.scheme(), url.authority(), url.path());
    (base, url.query_pairs().into_owned().collect())
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Authorize and return the code from the redirect.
async fn code(sim: &SimHandle) -> String {
    let resp = authorize(sim, &authorize_query(None)).await;
    assert_eq!(resp.status(), 302);
    let (_, params) = location_params(&resp);
    param(&params, "code").unwrap().to_owned()
}

fn exchange_body(code: &str, verifier: &str) -> Value {
    json!({"grant_type": "authorization_code", "code": code, "state": "st-123",
        "redirect_uri": MESSAGES_VENDOR_OAUTH_REDIRECT_URI, "code_verifier": verifier,
        "client_id": MESSAGES_VENDOR_OAUTH_CLIENT_ID})
}

async fn exchange(sim: &SimHandle, body: &Value) -> (u16, Value) {
    let resp = client()
        .post(format!(
            "{}/v1/oauth/token",
            sim.messages_vendor_oauth_url()
        ))
        .header("accept", "application/json")
        .json(body)
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
async fn authorize_redirects_with_code_and_state_then_the_code_buys_tokens() {
    let sim = sim().await;
    let resp = authorize(&sim, &authorize_query(None)).await;
    assert_eq!(resp.status(), 302);
    let (base, params) = location_params(&resp);
    assert_eq!(base, MESSAGES_VENDOR_OAUTH_REDIRECT_URI);
    assert_eq!(param(&params, "state"), Some("st-123"));
    let code = param(&params, "code").unwrap();

    let (status, tokens) = exchange(&sim, &exchange_body(code, VERIFIER)).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["scope"], SCOPE);
    assert_eq!(tokens["expires_in"], 8 * 3600);
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert!(access.starts_with("sk-ant-oat01-") && refresh.starts_with("sk-ant-ort01-"));
    let email = tokens["account"]["email_address"].as_str().unwrap();
    assert!(tokens["account"]["uuid"].is_string());
    assert_eq!(messages_with(&sim, access).await, 200);
    assert_eq!(
        sim.messages_vendor_oauth_account(access)
            .unwrap()
            .email_address,
        email
    );
    assert_eq!(sim.messages_vendor_oauth_exchanges(), 1);

    // The tokens refresh as seeded ones do, for the same account.
    let (status, refreshed) = exchange(
        &sim,
        &json!({"grant_type": "refresh_token", "refresh_token": refresh,
            "client_id": MESSAGES_VENDOR_OAUTH_CLIENT_ID}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(refreshed["account"]["email_address"], email);
    assert_eq!(refreshed["scope"], SCOPE);
    let recorded = sim.requests_to("/messages_vendor_oauth/oauth/authorize");
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].service, Service::MessagesVendorOauth);
    assert_eq!(
        recorded[0].query_param("code_challenge_method").as_deref(),
        Some("S256")
    );
}

#[tokio::test]
async fn each_authorization_is_its_own_account() {
    let sim = sim().await;
    let (_, first) = exchange(&sim, &exchange_body(&code(&sim).await, VERIFIER)).await;
    let (_, second) = exchange(&sim, &exchange_body(&code(&sim).await, VERIFIER)).await;
    assert_ne!(first["account"]["uuid"], second["account"]["uuid"]);
    assert_ne!(
        first["account"]["email_address"],
        second["account"]["email_address"]
    );
    let a = sim
        .messages_vendor_oauth_account(first["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(a.email_address, first["account"]["email_address"]);
}

#[tokio::test]
async fn code_with_state_suffix_and_form_body_are_accepted() {
    let sim = sim().await;
    let code = code(&sim).await;
    let resp = client()
        .post(format!(
            "{}/v1/oauth/token",
            sim.messages_vendor_oauth_url()
        ))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &format!("{code}#st-123")),
            // The state is the client's to check, not the vendor's.
            ("state", "some-other-state"),
            ("redirect_uri", MESSAGES_VENDOR_OAUTH_REDIRECT_URI),
            ("code_verifier", VERIFIER),
            ("client_id", MESSAGES_VENDOR_OAUTH_CLIENT_ID),
        ])
        .send()
        .await
        .unwrap();
    let (status, _, tokens) = json_of(resp).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(
        messages_with(&sim, tokens["access_token"].as_str().unwrap()).await,
        200
    );
}

#[tokio::test]
async fn wrong_verifier_reused_and_expired_codes_are_refused() {
    let sim = sim().await;
    // A wrong verifier: refused, and the code is used up.
    let code_a = code(&sim).await;
    let wrong = "Wrong-verifier-Wrong-verifier-Wrong-verifier-0";
    let (status, err) = exchange(&sim, &exchange_body(&code_a, wrong)).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(err["error_description"].is_string());
    let (status, _) = exchange(&sim, &exchange_body(&code_a, VERIFIER)).await;
    assert_eq!(status, 400);

    // A reused code: refused, and the tokens of its first exchange revoked.
    let code_b = code(&sim).await;
    let (status, tokens) = exchange(&sim, &exchange_body(&code_b, VERIFIER)).await;
    assert_eq!(status, 200);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(messages_with(&sim, access).await, 200);
    let (status, err) = exchange(&sim, &exchange_body(&code_b, VERIFIER)).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(messages_with(&sim, access).await, 401);

    // An expired code.
    let code_c = code(&sim).await;
    sim.expire_messages_vendor_oauth_codes();
    let (status, err) = exchange(&sim, &exchange_body(&code_c, VERIFIER)).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // Another redirect URI, an unknown code, a missing verifier.
    let code_d = code(&sim).await;
    let mut body = exchange_body(&code_d, VERIFIER);
    body["redirect_uri"] = json!("http://localhost:1/elsewhere");
    assert_eq!(exchange(&sim, &body).await.1["error"], "invalid_grant");
    let (status, err) = exchange(&sim, &exchange_body("no-such-code", VERIFIER)).await;
    assert_eq!(
        (status, err["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let mut body = exchange_body(&code(&sim).await, VERIFIER);
    body.as_object_mut().unwrap().remove("code_verifier");
    assert_eq!(exchange(&sim, &body).await.1["error"], "invalid_request");
    assert_eq!(sim.messages_vendor_oauth_exchanges(), 1);
}

#[tokio::test]
async fn bad_authorize_requests_get_a_page_and_no_redirect() {
    let sim = sim().await;
    let challenge = s256("a-plain-challenge-is-not-allowed-here-00000000");
    let cases = [
        ("client_id", Some("some-other-client")),
        ("client_id", None),
        ("redirect_uri", Some("http://localhost:9999/callback")),
        ("response_type", Some("token")),
        ("scope", Some("user:inference admin:everything")),
        ("code_challenge_method", Some("plain")),
        ("code_challenge", None),
        ("code_challenge", Some("too-short")),
        ("state", None),
    ];
    for (name, value) in cases {
        let resp = authorize(&sim, &authorize_query(Some((name, value)))).await;
        assert_eq!(resp.status(), 400, "{name}={value:?}");
        assert!(resp.headers().get("location").is_none());
        assert!(resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        assert!(resp.text().await.unwrap().contains("Authorization error"));
    }
    // A well-formed challenge under another name is fine.
    let resp = authorize(
        &sim,
        &authorize_query(Some(("code_challenge", Some(&challenge)))),
    )
    .await;
    assert_eq!(resp.status(), 302);
}

#[tokio::test]
async fn a_denial_redirects_with_access_denied_and_the_state() {
    let sim = sim().await;
    sim.update_vendors(|v| v.oauth.deny_authorization = true);
    let resp = authorize(&sim, &authorize_query(None)).await;
    assert_eq!(resp.status(), 302);
    let (base, params) = location_params(&resp);
    assert_eq!(base, MESSAGES_VENDOR_OAUTH_REDIRECT_URI);
    assert_eq!(param(&params, "error"), Some("access_denied"));
    assert_eq!(param(&params, "state"), Some("st-123"));
    assert_eq!(param(&params, "code"), None);
}
