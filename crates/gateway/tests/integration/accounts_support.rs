//! Helpers of the per-user provider tests (`providers_per_user`,
//! `provider_signins`, `full_target`, `replicas_flows`): gateways with the
//! vendors' endpoints, a user's `/v1` key, one chat with it, an error's
//! status and type, the steps of the `messages_vendor` sign-in a browser
//! would take, and `assistant_vendor` connected by device code.

use std::collections::HashMap;

use serde_json::{json, Value};

use upstream_sim::{SimHandle, Vendor, CODE_HOST_OAUTH_CLIENT_ID, CODE_HOST_OAUTH_CLIENT_SECRET};

use crate::common::{admin_env, client, FullEnv, TestDb, UiClient};

/// A full-mode gateway with the seeded admin in front of `sim`, the
/// messages and completions vendors' endpoints included.
pub async fn vendors_env(db: TestDb, sim: &SimHandle) -> FullEnv {
    let (api, oidc) = (sim.base_url(), sim.oidc_url());
    let messages = sim.messages_vendor_url();
    let completions = format!("{}/v1", sim.completions_vendor_url());
    let mut extra = admin_env();
    extra.extend([
        ("UPSTREAM_API_ENDPOINT", api.as_str()),
        ("UPSTREAM_OIDC_ENDPOINT", oidc.as_str()),
        ("MESSAGES_VENDOR_BASE_URL", messages.as_str()),
        ("COMPLETIONS_VENDOR_BASE_URL", completions.as_str()),
    ]);
    FullEnv::start(db, &extra).await
}

/// A full-mode gateway with the seeded admin and the `messages_vendor`
/// API and OAuth endpoints of `sim`.
pub async fn messages_env(db: TestDb, sim: &SimHandle) -> FullEnv {
    let api = sim.messages_vendor_url();
    let oauth = sim.messages_vendor_oauth_url();
    let mut extra = admin_env();
    extra.push(("MESSAGES_VENDOR_BASE_URL", api.as_str()));
    extra.push(("MESSAGES_VENDOR_OAUTH_BASE_URL", oauth.as_str()));
    FullEnv::start(db, &extra).await
}

/// A full-mode gateway with the seeded admin and `sim`'s `assistant_vendor`
/// code host and token exchange; with `web`, the gateway's OAuth app too.
pub async fn assistant_env(db: TestDb, sim: &SimHandle, web: bool) -> FullEnv {
    let code_host = sim.assistant_vendor_code_host_url();
    let token_url = sim.assistant_vendor_token_url();
    let mut extra = admin_env();
    extra.push(("ASSISTANT_VENDOR_CODE_HOST_URL", code_host.as_str()));
    extra.push(("ASSISTANT_VENDOR_TOKEN_URL", token_url.as_str()));
    if web {
        extra.push((
            "ASSISTANT_VENDOR_OAUTH_CLIENT_ID",
            CODE_HOST_OAUTH_CLIENT_ID,
        ));
        extra.push((
            "ASSISTANT_VENDOR_OAUTH_CLIENT_SECRET",
            CODE_HOST_OAUTH_CLIENT_SECRET,
        ));
    }
    FullEnv::start(db, &extra).await
}

/// Connect an account of `provider` with `api_key` (which the simulator's
/// `vendor` is told to accept) for the user signed in on `ui`; `body`
/// adds fields (a base URL).
pub async fn connect_vendor(
    ui: &UiClient,
    sim: &SimHandle,
    vendor: Vendor,
    provider: &str,
    api_key: &str,
    mut body: Value,
) {
    sim.add_vendor_api_key(vendor, api_key);
    body["api_key"] = json!(api_key);
    let resp = ui
        .post(&format!("/_ui/api/providers/{provider}/accounts"), body)
        .await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
}

/// A `/v1` key of the user signed in on `ui`.
pub async fn v1_key(ui: &UiClient) -> String {
    let created: Value = ui
        .post("/_ui/api/keys", json!({"label": "test"}))
        .await
        .json()
        .await
        .unwrap();
    created["key"].as_str().unwrap().to_owned()
}

/// One non-streaming chat-completions call with `key`.
pub async fn chat(env: &FullEnv, key: &str, model: &str) -> reqwest::Response {
    chat_at(&env.gateway.base, key, model).await
}

/// [`chat`] to the gateway (replica) at `base`.
pub async fn chat_at(base: &str, key: &str, model: &str) -> reqwest::Response {
    client()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
}

/// An error answer's status, `type` and `message`.
pub async fn error_type(resp: reqwest::Response) -> (u16, String, String) {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    let text = |field: &str| body["error"][field].as_str().unwrap_or_default().to_owned();
    (status, text("type"), text("message"))
}

/// `GET .../messages_vendor/auth` as the console asks for it (JSON).
pub async fn start_messages_signin(ui: &UiClient) -> Value {
    let resp = ui
        .http
        .get(format!(
            "{}/_ui/api/providers/messages_vendor/auth",
            ui.base
        ))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// Follow `url` once without following its redirect: the `Location`.
pub async fn location_of(url: &str) -> String {
    let resp = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302, "{url}: {:?}", resp.text().await);
    resp.headers()["location"].to_str().unwrap().to_owned()
}

/// The query parameters of `url`.
pub fn query_of(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

/// Connect `assistant_vendor` for the user of `ui` by the code host's device
/// flow, the simulated person approving at once.
pub async fn connect_assistant(ui: &UiClient, sim: &SimHandle) {
    let started: Value = ui
        .post("/_ui/api/assistant/device-code", json!({}))
        .await
        .json()
        .await
        .unwrap();
    assert!(sim.approve_code_host_device(started["user_code"].as_str().unwrap()));
    let polled: Value = ui
        .post(
            "/_ui/api/assistant/device-poll",
            json!({"device_code": started["device_code"]}),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(polled["status"], "success", "{polled}");
}
