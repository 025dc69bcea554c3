//! A full deployment where one signed-up user has connected one provider
//! through the connect flow a person would use (the conformance matrix's
//! full-mode run): `primary` by the upstream device flow, `messages_vendor`
//! by the relayed OAuth sign-in with PKCE, `assistant_vendor` by the code
//! host's device flow, `completions_vendor` and `custom` by API key. The
//! deployment itself names only the simulator's addresses, never a
//! credential.

use serde_json::{json, Value};
use upstream_sim::{SimHandle, Vendor};

use crate::accounts_support::{
    connect_assistant, location_of, query_of, start_messages_signin, v1_key,
};
use crate::common::{admin_env, client, start_sim, FullEnv, TestDb, UiClient};

/// The gateway, the simulator behind it, and the user's `/v1` key.
pub struct FullTarget {
    pub sim: SimHandle,
    pub env: FullEnv,
    pub key: String,
}

impl FullTarget {
    pub async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        client()
            .post(self.env.url(path))
            .bearer_auth(&self.key)
            .json(body)
            .send()
            .await
            .unwrap()
    }
}

/// Where each upstream of the simulator is, and nothing else.
fn addresses(sim: &SimHandle) -> Vec<(&'static str, String)> {
    vec![
        ("UPSTREAM_API_ENDPOINT", sim.base_url()),
        ("UPSTREAM_OIDC_ENDPOINT", sim.oidc_url()),
        ("MESSAGES_VENDOR_BASE_URL", sim.messages_vendor_url()),
        (
            "MESSAGES_VENDOR_OAUTH_BASE_URL",
            sim.messages_vendor_oauth_url(),
        ),
        (
            "COMPLETIONS_VENDOR_BASE_URL",
            format!("{}/v1", sim.completions_vendor_url()),
        ),
        (
            "ASSISTANT_VENDOR_CODE_HOST_URL",
            sim.assistant_vendor_code_host_url(),
        ),
        (
            "ASSISTANT_VENDOR_TOKEN_URL",
            sim.assistant_vendor_token_url(),
        ),
        // The custom server is on this machine.
        ("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true".into()),
    ]
}

/// A full deployment whose user connected `vendor` (`None`: `primary`).
pub async fn connected(vendor: Option<Vendor>) -> FullTarget {
    let sim = start_sim().await;
    let pairs = addresses(&sim);
    let mut extra = admin_env();
    extra.extend(pairs.iter().map(|(k, v)| (*k, v.as_str())));
    let env = FullEnv::start(TestDb::sqlite(), &extra).await;
    let admin = env.admin().await;
    let user = env.new_user(&admin, "user@example.com", "User").await;
    let ui = &user.client;
    let key = v1_key(ui).await;
    match vendor {
        None => connect_primary(ui).await,
        Some(Vendor::Messages) => connect_messages(ui, &env).await,
        Some(Vendor::Assistant) => connect_assistant(ui, &sim).await,
        Some(Vendor::Completions) => {
            let api_key = sim.completions_vendor_api_key();
            add_key(ui, "completions_vendor", json!({"api_key": api_key})).await;
        }
        Some(Vendor::Custom) => {
            // Without a key of its own the simulated server takes any key.
            let api_key = sim.custom_api_key().unwrap_or_else(|| "sk-any".into());
            add_key(
                ui,
                "custom",
                json!({"base_url": sim.custom_url(), "api_key": api_key}),
            )
            .await;
        }
    }
    // Only the cell's own calls count.
    sim.clear();
    FullTarget { sim, env, key }
}

async fn add_key(ui: &UiClient, provider: &str, body: Value) {
    let resp = ui
        .post(&format!("/_ui/api/providers/{provider}/accounts"), body)
        .await;
    assert_eq!(resp.status(), 201, "{provider}: {:?}", resp.text().await);
}

async fn connect_primary(ui: &UiClient) {
    let setup: Value = ui
        .post("/_ui/api/upstream/setup", json!({}))
        .await
        .json()
        .await
        .unwrap();
    for _ in 0..10 {
        let polled: Value = ui
            .post(
                "/_ui/api/upstream/poll",
                json!({"device_code": setup["device_code"]}),
            )
            .await
            .json()
            .await
            .unwrap();
        if polled["status"] == "success" {
            return;
        }
        assert_eq!(polled["status"], "pending", "{polled}");
    }
    panic!("the upstream device flow did not end");
}

async fn connect_messages(ui: &UiClient, env: &FullEnv) {
    let started = start_messages_signin(ui).await;
    // The simulated person approves; the relay script would catch this redirect.
    let query = query_of(&location_of(started["auth_url"].as_str().unwrap()).await);
    let resp = client()
        .post(env.url("/_ui/api/providers/messages_vendor/relay"))
        .json(&json!({"code": query["code"], "state": query["state"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
}
