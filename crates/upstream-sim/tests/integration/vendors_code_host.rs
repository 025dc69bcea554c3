//! The assistant vendor's code host, as the gateway drives it: the device
//! flow (pending, slow_down, denied, expired, approved by the handle, by the
//! browser page or after N polls), the web flow (authorize redirect, code
//! exchange with the OAuth app's secret), `GET /user`, and tokens from both
//! flows accepted by the token exchange, one distinct user per login.

use std::collections::HashMap;

use reqwest::redirect::Policy;
use serde_json::{json, Value};
use upstream_sim::{
    Service, SimHandle, CODE_HOST_DEVICE_CLIENT_ID, CODE_HOST_OAUTH_CLIENT_ID,
    CODE_HOST_OAUTH_CLIENT_SECRET,
};

use crate::common::*;
use crate::vendors_support::*;

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const CALLBACK: &str = "http://gw.test:8080/_ui/api/providers/assistant_vendor/callback";

async fn post_json(sim: &SimHandle, path: &str, body: &Value) -> Value {
    let resp = client()
        .post(format!("{}{path}", sim.assistant_vendor_code_host_url()))
        .header("accept", "application/json")
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{path}");
    resp.json().await.unwrap()
}

async fn start_device(sim: &SimHandle) -> Value {
    let body = json!({"client_id": CODE_HOST_DEVICE_CLIENT_ID, "scope": "read:user"});
    post_json(sim, "/login/device/code", &body).await
}

async fn poll(sim: &SimHandle, device_code: &str) -> Value {
    let body = json!({"client_id": CODE_HOST_DEVICE_CLIENT_ID, "device_code": device_code,
        "grant_type": DEVICE_GRANT});
    post_json(sim, "/login/oauth/access_token", &body).await
}

/// `GET {code_host}{path}` with a token and a user agent.
async fn get_with_token(sim: &SimHandle, path: &str, token: &str) -> reqwest::Response {
    client()
        .get(format!("{}{path}", sim.assistant_vendor_code_host_url()))
        .header("authorization", format!("token {token}"))
        .header("user-agent", "gateway-test/1.0")
        .send()
        .await
        .unwrap()
}

async fn login_of(sim: &SimHandle, token: &str) -> String {
    let resp = get_with_token(sim, "/user", token).await;
    assert_eq!(resp.status(), 200);
    let user: Value = resp.json().await.unwrap();
    user["login"].as_str().unwrap().to_owned()
}

/// Poll until approved, with no interval to wait.
fn fast_polls(sim: &SimHandle, approve_after: Option<u32>) {
    sim.update_vendors(|v| {
        v.code_host.interval_secs = 0;
        v.code_host.approve_after = approve_after;
    });
}

#[tokio::test]
async fn device_flow_pending_then_approved_gives_a_user_token_the_exchange_accepts() {
    let sim = sim().await;
    fast_polls(&sim, None);
    let dev = start_device(&sim).await;
    let device_code = dev["device_code"].as_str().unwrap();
    let user_code = dev["user_code"].as_str().unwrap();
    assert_eq!(user_code.len(), 9);
    assert_eq!(dev["expires_in"], 900);
    assert_eq!(dev["interval"], 0);
    assert_eq!(
        dev["verification_uri"],
        format!("{}/login/device", sim.assistant_vendor_code_host_url())
    );
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "authorization_pending"
    );
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "authorization_pending"
    );
    assert!(sim.approve_code_host_device(user_code));
    let token = poll(&sim, device_code).await;
    assert_eq!(token["token_type"], "bearer");
    assert_eq!(token["scope"], "read:user");
    let access = token["access_token"].as_str().unwrap();
    assert!(access.starts_with("gho_"));
    // Used up.
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "incorrect_device_code"
    );

    let login = login_of(&sim, access).await;
    assert_eq!(sim.code_host_user(access).unwrap().login, login);
    let exchanged = get_with_token(&sim, "/copilot_internal/v2/token", access).await;
    assert_eq!(exchanged.status(), 200);
    let exchanged: Value = exchanged.json().await.unwrap();
    let assistant_token = exchanged["token"].as_str().unwrap();
    assert_eq!(
        sim.assistant_vendor_token_login(assistant_token).as_deref(),
        Some(login.as_str())
    );

    // A second login is another user.
    let dev = start_device(&sim).await;
    assert!(sim.approve_code_host_device(dev["device_code"].as_str().unwrap()));
    let second = poll(&sim, dev["device_code"].as_str().unwrap()).await;
    let second_login = login_of(&sim, second["access_token"].as_str().unwrap()).await;
    assert_ne!(second_login, login);
    let recorded = sim.requests_to("/assistant_vendor_code_host/login/oauth/access_token");
    assert_eq!(recorded.len(), 5);
    assert!(recorded
        .iter()
        .all(|r| r.service == Service::AssistantVendorCodeHost));
}

#[tokio::test]
async fn polling_sooner_than_the_interval_is_slow_down() {
    let sim = sim().await;
    sim.update_vendors(|v| v.code_host.approve_after = None);
    let dev = start_device(&sim).await;
    assert_eq!(dev["interval"], 1);
    let device_code = dev["device_code"].as_str().unwrap();
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "authorization_pending"
    );
    let slow = poll(&sim, device_code).await;
    assert_eq!(slow["error"], "slow_down");
    assert_eq!(slow["interval"], 6);
    assert!(slow["error_description"].is_string());
}

#[tokio::test]
async fn denied_expired_and_automatic_approval() {
    let sim = sim().await;
    fast_polls(&sim, None);
    let dev = start_device(&sim).await;
    let device_code = dev["device_code"].as_str().unwrap();
    assert!(sim.deny_code_host_device(dev["user_code"].as_str().unwrap()));
    assert_eq!(poll(&sim, device_code).await["error"], "access_denied");

    let dev = start_device(&sim).await;
    let device_code = dev["device_code"].as_str().unwrap();
    assert!(sim.expire_code_host_device(device_code));
    assert_eq!(poll(&sim, device_code).await["error"], "expired_token");
    assert!(!sim.approve_code_host_device("ZZZZ-ZZZZ"));

    fast_polls(&sim, Some(2));
    let dev = start_device(&sim).await;
    let device_code = dev["device_code"].as_str().unwrap();
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "authorization_pending"
    );
    assert_eq!(
        poll(&sim, device_code).await["error"],
        "authorization_pending"
    );
    assert!(poll(&sim, device_code).await["access_token"].is_string());

    // The deny switch ends automatic approvals with access_denied.
    sim.update_vendors(|v| v.code_host.deny = true);
    let dev = start_device(&sim).await;
    let device_code = dev["device_code"].as_str().unwrap();
    for _ in 0..2 {
        poll(&sim, device_code).await;
    }
    assert_eq!(poll(&sim, device_code).await["error"], "access_denied");

    // An unknown client.
    let body = json!({"client_id": "Iv1.unknown", "device_code": device_code,
        "grant_type": DEVICE_GRANT});
    let err = post_json(&sim, "/login/oauth/access_token", &body).await;
    assert_eq!(err["error"], "incorrect_client_credentials");
}

#[tokio::test]
async fn form_bodies_get_form_answers_and_the_browser_page_approves() {
    let sim = sim().await;
    fast_polls(&sim, None);
    let url = sim.assistant_vendor_code_host_url();
    let resp = client()
        .post(format!("{url}/login/device/code"))
        .form(&[
            ("client_id", CODE_HOST_DEVICE_CLIENT_ID),
            ("scope", "read:user"),
        ])
        .send()
        .await
        .unwrap();
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/x-www-form-urlencoded"));
    let dev: HashMap<String, String> =
        url::form_urlencoded::parse(resp.text().await.unwrap().as_bytes())
            .into_owned()
            .collect();
    let page = client()
        .get(format!("{url}/login/device"))
        .query(&[("user_code", dev["user_code"].as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let token = poll(&sim, &dev["device_code"]).await;
    assert!(token["access_token"].is_string());
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

async fn authorize(sim: &SimHandle, params: &[(&str, &str)]) -> reqwest::Response {
    no_redirects()
        .get(sim.code_host_authorize_url())
        .query(params)
        .send()
        .await
        .unwrap()
}

fn location(resp: &reqwest::Response) -> (String, HashMap<String, String>) {
    let url = url::Url::parse(resp.headers()["location"].to_str().unwrap()).unwrap();
    let base = format!("{}://{}{}", url.scheme(), url.authority(), url.path());
    (base, url.query_pairs().into_owned().collect())
}

async fn web_code(sim: &SimHandle) -> String {
    let resp = authorize(
        sim,
        &[
            ("client_id", CODE_HOST_OAUTH_CLIENT_ID),
            ("redirect_uri", CALLBACK),
            ("scope", "read:user"),
            ("state", "s-1"),
        ],
    )
    .await;
    assert_eq!(resp.status(), 302);
    let (base, params) = location(&resp);
    assert_eq!(base, CALLBACK);
    assert_eq!(params["state"], "s-1");
    params["code"].clone()
}

async fn exchange_code(sim: &SimHandle, code: &str, secret: &str, redirect: &str) -> Value {
    let body = json!({"client_id": CODE_HOST_OAUTH_CLIENT_ID, "client_secret": secret,
        "code": code, "redirect_uri": redirect});
    post_json(sim, "/login/oauth/access_token", &body).await
}

#[tokio::test]
async fn web_flow_redirects_with_a_code_the_app_exchanges_once() {
    let sim = sim().await;
    sim.update_vendors(|v| {
        v.code_host.oauth_callback_url = Some(CALLBACK.to_owned());
    });
    let code = web_code(&sim).await;
    let token = exchange_code(&sim, &code, CODE_HOST_OAUTH_CLIENT_SECRET, CALLBACK).await;
    assert_eq!(token["token_type"], "bearer");
    assert_eq!(token["scope"], "read:user");
    let access = token["access_token"].as_str().unwrap();
    let login = login_of(&sim, access).await;
    assert!(login.starts_with("sim-user-"));
    let exchanged = get_with_token(&sim, "/copilot_internal/v2/token", access).await;
    assert_eq!(exchanged.status(), 200);
    // Used up.
    let again = exchange_code(&sim, &code, CODE_HOST_OAUTH_CLIENT_SECRET, CALLBACK).await;
    assert_eq!(again["error"], "bad_verification_code");

    let code = web_code(&sim).await;
    let wrong = exchange_code(&sim, &code, "not-the-secret", CALLBACK).await;
    assert_eq!(wrong["error"], "incorrect_client_credentials");
    let elsewhere = format!("{CALLBACK}/deeper");
    let mismatch = exchange_code(&sim, &code, CODE_HOST_OAUTH_CLIENT_SECRET, &elsewhere).await;
    assert_eq!(mismatch["error"], "redirect_uri_mismatch");
    // Another login is another user.
    let code = web_code(&sim).await;
    let other = exchange_code(&sim, &code, CODE_HOST_OAUTH_CLIENT_SECRET, CALLBACK).await;
    assert_ne!(
        login_of(&sim, other["access_token"].as_str().unwrap()).await,
        login
    );
}

#[tokio::test]
async fn web_flow_refusals_and_denial() {
    let sim = sim().await;
    sim.update_vendors(|v| v.code_host.oauth_callback_url = Some(CALLBACK.to_owned()));
    let unknown = authorize(&sim, &[("client_id", "Ov23liSomeoneElse"), ("state", "s")]).await;
    assert_eq!(unknown.status(), 404);
    assert!(unknown.headers().get("location").is_none());
    let foreign = authorize(
        &sim,
        &[
            ("client_id", CODE_HOST_OAUTH_CLIENT_ID),
            ("redirect_uri", "http://evil.test/callback"),
        ],
    )
    .await;
    assert_eq!(foreign.status(), 400);
    assert!(foreign.headers().get("location").is_none());
    // Without a redirect_uri the registered callback is used.
    let plain = authorize(&sim, &[("client_id", CODE_HOST_OAUTH_CLIENT_ID)]).await;
    assert_eq!(plain.status(), 302);
    assert_eq!(location(&plain).0, CALLBACK);

    sim.update_vendors(|v| v.code_host.deny = true);
    let denied = authorize(
        &sim,
        &[
            ("client_id", CODE_HOST_OAUTH_CLIENT_ID),
            ("redirect_uri", CALLBACK),
            ("state", "s-2"),
        ],
    )
    .await;
    assert_eq!(denied.status(), 302);
    let (base, params) = location(&denied);
    assert_eq!(base, CALLBACK);
    assert_eq!(params["error"], "access_denied");
    assert_eq!(params["state"], "s-2");
    assert!(!params.contains_key("code"));
}

#[tokio::test]
async fn user_needs_a_user_agent_and_a_known_token() {
    let sim = sim().await;
    let url = format!("{}/user", sim.assistant_vendor_code_host_url());
    let no_agent = client()
        .get(&url)
        .header("authorization", "token gho_sim")
        .send()
        .await
        .unwrap();
    assert_eq!(no_agent.status(), 403);
    let anonymous = client()
        .get(&url)
        .header("user-agent", "t")
        .send()
        .await
        .unwrap();
    let (status, _, body) = json_of(anonymous).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("Requires authentication"))
    );
    let bad = get_with_token(&sim, "/user", "gho_nope").await;
    let (status, _, body) = json_of(bad).await;
    assert_eq!(
        (status, body["message"].as_str()),
        (401, Some("Bad credentials"))
    );
    let configured = sim.assistant_vendor_github_token();
    assert_eq!(login_of(&sim, &configured).await, "sim-user");
    let bearer = client()
        .get(&url)
        .bearer_auth(&configured)
        .header("user-agent", "t")
        .send()
        .await
        .unwrap();
    let (status, headers, body) = json_of(bearer).await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-oauth-scopes"], "read:user");
    assert_eq!(body["email"], "sim-user@example.com");
    assert!(body["id"].is_u64());

    let seeded = sim.seed_code_host_login();
    assert_eq!(
        login_of(&sim, &seeded.access_token).await,
        seeded.user.login
    );
    assert_ne!(seeded.user.login, "sim-user");
}
