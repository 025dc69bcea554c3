//! Helpers of the full-deployment `/v1` tests (keys_*, upstream_creds_*,
//! usage_*, replicas_*): a gateway in full mode in front of the simulator,
//! users with unrestricted sessions, API keys, upstream credentials obtained
//! through the device flow over HTTP.

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::SimHandle;

use crate::common::{
    admin_env, client, FullEnv, TestDb, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP,
};

/// The simulator and a full-mode gateway with a seeded admin in front of it.
pub struct Deployment {
    pub sim: SimHandle,
    pub env: FullEnv,
}

/// How a `/v1` call presents its key.
#[derive(Debug, Clone, Copy)]
pub enum KeyHeader {
    Bearer,
    XApiKey,
}

impl Deployment {
    pub async fn start(db: TestDb) -> Deployment {
        Self::start_with(db, &[]).await
    }

    pub async fn start_with(db: TestDb, extra: &[(&str, &str)]) -> Deployment {
        let sim = crate::common::start_sim().await;
        let (api, oidc) = (sim.base_url(), sim.oidc_url());
        let mut env: Vec<(&str, &str)> = admin_env();
        env.push(("UPSTREAM_API_ENDPOINT", &api));
        env.push(("UPSTREAM_OIDC_ENDPOINT", &oidc));
        env.extend_from_slice(extra);
        let env = FullEnv::start(db, &env).await;
        Deployment { sim, env }
    }

    /// The seeded admin, signed in.
    pub async fn admin(&self) -> UiClient {
        let ui = self.env.ui();
        ui.login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 0)
            .await;
        ui
    }

    /// A new User account (created by `admin`), signed in with its password
    /// changed and 2FA enrolled: an unrestricted session.
    pub async fn user(&self, admin: &UiClient, email: &str) -> UiClient {
        let resp = admin
            .post(
                "/_ui/api/admin/users/create",
                json!({"email": email, "password": "first password 0123", "role": "User"}),
            )
            .await;
        assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
        let ui = self.env.ui();
        let (status, body) = ui.login(email, "first password 0123").await;
        assert_eq!(status, 200, "{body}");
        let resp = ui
            .post(
                "/_ui/api/auth/password/change",
                json!({"current_password": "first password 0123", "new_password": "second password 4567"}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        ui.enroll_2fa().await;
        ui
    }

    /// `POST /v1{path}` with `key` presented as `header`.
    pub async fn v1(
        &self,
        path: &str,
        key: &str,
        header: KeyHeader,
        body: &Value,
    ) -> reqwest::Response {
        let rb = client()
            .post(self.env.url(&format!("/v1{path}")))
            .json(body);
        let rb = match header {
            KeyHeader::Bearer => rb.bearer_auth(key),
            KeyHeader::XApiKey => rb.header("x-api-key", key),
        };
        rb.send().await.unwrap()
    }
}

/// `POST /_ui/api/keys`: the answer (with the plaintext `key`).
pub async fn create_key(ui: &UiClient, label: &str) -> Value {
    let resp = ui.post("/_ui/api/keys", json!({"label": label})).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// The `key` of a new key.
pub async fn new_key(ui: &UiClient) -> String {
    create_key(ui, "test").await["key"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `GET /_ui/api/keys`.
pub async fn list_keys(ui: &UiClient) -> Value {
    let resp = ui.get("/_ui/api/keys").await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// Run the device flow for the signed-in user: setup, then poll (pending
/// first, as the simulator answers the first poll of each code) until
/// success. Returns every poll status seen.
pub async fn connect_upstream(ui: &UiClient) -> Vec<String> {
    let resp = ui.post("/_ui/api/upstream/setup", json!({})).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let setup: Value = resp.json().await.unwrap();
    let device_code = setup["device_code"].as_str().unwrap().to_owned();
    let mut seen = Vec::new();
    for _ in 0..20 {
        let resp = ui
            .post(
                "/_ui/api/upstream/poll",
                json!({"device_code": device_code}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        let status = body["status"].as_str().unwrap().to_owned();
        seen.push(status.clone());
        if status != "pending" && status != "slow_down" {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the device flow did not finish: {seen:?}");
}

/// `GET /_ui/api/upstream/status`.
pub async fn upstream_status(ui: &UiClient) -> Value {
    let resp = ui.get("/_ui/api/upstream/status").await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// The user id of a signed-in client.
pub async fn user_id(ui: &UiClient) -> gateway::store::ids::UserId {
    let me: Value = ui.get("/_ui/api/auth/me").await.json().await.unwrap();
    me["user_id"].as_str().unwrap().parse().unwrap()
}
