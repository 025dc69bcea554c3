//! Helpers of the SSO and configuration-API tests: a full-mode gateway with
//! the simulated identity provider configured, and a browser-like walk
//! through the sign-in (gateway -> provider -> callback).

use std::time::Duration;

use gateway::config::Config;
use reqwest::StatusCode;
use upstream_sim::SimHandle;

use crate::common::{
    admin_env, start_sim, FullEnv, TestDb, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP,
};

/// A full-mode gateway and the simulator whose identity provider it uses.
pub struct SsoEnv {
    pub env: FullEnv,
    pub sim: SimHandle,
}

/// Store the three identity-provider keys directly (as an admin would
/// through the configuration API), pointing at the simulator.
pub async fn configure_idp(db: &TestDb, sim: &SimHandle) {
    let store = db.store().await;
    let (client_id, secret) = sim.idp_client();
    let config = store.config();
    config
        .set("sso_issuer_url", &sim.idp_issuer_url(), false, None)
        .await
        .unwrap();
    config
        .set("sso_client_id", &client_id, false, None)
        .await
        .unwrap();
    config
        .set("sso_client_secret", &secret, true, None)
        .await
        .unwrap();
    store.close().await;
}

impl SsoEnv {
    /// No admin yet; the identity provider configured.
    pub async fn start(db: TestDb) -> SsoEnv {
        Self::start_tuned(db, &[], |_| {}).await
    }

    pub async fn start_tuned(
        db: TestDb,
        extra: &[(&str, &str)],
        tune: impl FnOnce(&mut Config),
    ) -> SsoEnv {
        let sim = start_sim().await;
        configure_idp(&db, &sim).await;
        let env = FullEnv::start_tuned(db, extra, tune).await;
        SsoEnv { env, sim }
    }

    /// With the seeded password admin (2FA on).
    pub async fn with_admin(db: TestDb) -> SsoEnv {
        let extra = admin_env();
        Self::start_tuned(db, &extra, |_| {}).await
    }

    pub fn ui(&self) -> UiClient {
        self.env.ui()
    }

    /// A signed-in client of the seeded admin.
    pub async fn admin(&self) -> UiClient {
        let ui = self.ui();
        ui.login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 0)
            .await;
        ui
    }
}

/// What the browser saw at the end of a sign-in walk.
#[derive(Debug)]
pub struct Landing {
    /// The status of the callback's answer.
    pub status: StatusCode,
    /// Its `Location`.
    pub location: String,
    /// `Set-Cookie` headers of the callback's answer.
    pub cookies: Vec<String>,
    /// The callback URL the provider redirected to.
    pub callback_url: String,
}

impl Landing {
    /// The `error` code of a redirect to the login page.
    pub fn error(&self) -> Option<String> {
        let (_, query) = self.location.split_once("/_ui/login?")?;
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix("error=").map(str::to_owned))
    }

    pub fn sets_session(&self) -> bool {
        self.cookies
            .iter()
            .any(|c| c.starts_with("gw_session=") && !c.starts_with("gw_session=;"))
    }
}

fn location(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// Start at `start_path` (`/_ui/api/auth/google` or `.../link`), follow the
/// provider's `/authorize`, and stop before opening the callback: the
/// callback URL.
pub async fn to_callback(ui: &UiClient, start_path: &str) -> String {
    let resp = ui.get(start_path).await;
    assert_eq!(
        resp.status(),
        StatusCode::FOUND,
        "start: {}",
        location(&resp)
    );
    let authorize = location(&resp);
    assert!(
        authorize.contains("/idp/authorize?"),
        "start went to {authorize}"
    );
    // The provider is another site: a plain client, no gateway cookies.
    let idp = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let resp = idp.get(&authorize).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FOUND, "authorize refused");
    location(&resp)
}

/// Open a callback URL in the browser `ui`.
pub async fn open_callback(ui: &UiClient, callback_url: &str) -> Landing {
    let resp = ui.http.get(callback_url).send().await.unwrap();
    let cookies = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    Landing {
        status: resp.status(),
        location: location(&resp),
        cookies,
        callback_url: callback_url.to_owned(),
    }
}

/// The whole walk from `start_path` to the callback's answer.
pub async fn walk(ui: &UiClient, start_path: &str) -> Landing {
    let callback = to_callback(ui, start_path).await;
    open_callback(ui, &callback).await
}

/// A sign-in as `email` (verified) from a new browser: the landing and the client.
pub async fn sign_in_as(env: &SsoEnv, email: &str) -> (Landing, UiClient) {
    env.sim.idp_set_user(email, true);
    let ui = env.ui();
    let landing = walk(&ui, "/_ui/api/auth/google").await;
    (landing, ui)
}

/// `GET /_ui/api/auth/me` of a client: status and body.
pub async fn me(ui: &UiClient) -> (u16, serde_json::Value) {
    let resp = ui.get("/_ui/api/auth/me").await;
    let status = resp.status().as_u16();
    let body = resp.json().await.unwrap_or(serde_json::Value::Null);
    (status, body)
}
