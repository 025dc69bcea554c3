//! Two gateway replicas on one PostgreSQL database behind one address, as
//! behind a load balancer without sticky sessions (issue 18; run when
//! `TEST_DATABASE_URL` is set): each step of every multi-step flow goes to
//! the other replica than the step before, and each flow still ends once.
//!
//! - SSO sign-in begun on one, called back on two; the session serves both;
//!   the callback replayed on one is refused. Linking, and a sign-in of the
//!   linked identity, the other way round.
//! - Password on one, TOTP code on two; the login token and the code's step
//!   are spent for both.
//! - The `primary` device flow: set up on one, polled on two, one, two.
//! - `messages_vendor` with PKCE: started on one, relayed to two; the
//!   replayed `state` is refused on one.
//! - `assistant_vendor`: the web flow authorised from one, called back on
//!   two (replayed on one: refused); the device flow started on one, polled
//!   on two, one, two.
//!
//! After each flow the connection serves requests on both replicas (the one
//! that did not finish it learns of it through `LISTEN/NOTIFY`).

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue, HOST};
use serde_json::{json, Value};

use crate::accounts_support::{
    assistant_env, chat_at, error_type, location_of, messages_env, query_of, start_messages_signin,
    v1_key,
};
use crate::common::{
    admin_env, client, start_sim, totp_code, FullEnv, Gateway, TestDb, UiClient, ADMIN_EMAIL,
    ADMIN_PASSWORD, ADMIN_TOTP,
};
use crate::keys_support::{new_key, Deployment};
use crate::sso_support::{me, open_callback, to_callback, SsoEnv};

const MESSAGES_MODEL: &str = "messages_vendor/claude-sonnet-4-5";
const ASSISTANT_MODEL: &str = "assistant_vendor/gpt-4o";
const PRIMARY_MODEL: &str = "claude-sonnet-4.5";

#[derive(Debug, Clone, Copy)]
enum Replica {
    One,
    Two,
}
use Replica::{One, Two};

/// Replica one (the test's gateway) and a second process on its database,
/// both reached through one public address (replica one's): every request
/// carries that `Host`, whichever replica the test sends it to, so the
/// addresses the gateway makes (redirect URIs) are the same on both.
struct Replicas {
    one: String,
    two: Gateway,
    public_host: String,
}

impl Replicas {
    async fn start(env: &FullEnv) -> Replicas {
        let two = env.replica().await;
        let status = UiClient::new(&two.base).get("/_ui/api/status").await;
        assert_eq!(status.status(), 200, "replica two did not start");
        Replicas {
            one: env.gateway.base.clone(),
            public_host: env.gateway.addr.to_string(),
            two,
        }
    }

    fn base(&self, replica: Replica) -> &str {
        match replica {
            One => &self.one,
            Two => &self.two.base,
        }
    }

    fn public_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(&self.public_host).unwrap());
        headers
    }

    /// The browser of `ui` (its cookie jar) sending its requests to `replica`.
    fn browser(&self, ui: &UiClient, replica: Replica) -> UiClient {
        let http = reqwest::Client::builder()
            .cookie_provider(ui.jar.clone())
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .default_headers(self.public_headers())
            .build()
            .unwrap();
        UiClient {
            http,
            jar: ui.jar.clone(),
            base: self.base(replica).to_owned(),
        }
    }

    /// `url` (of the public address) sent to `replica`.
    fn to(&self, url: &str, replica: Replica) -> String {
        let rest = url
            .strip_prefix(&self.one)
            .unwrap_or_else(|| panic!("{url} is not on the public address {}", self.one));
        format!("{}{rest}", self.base(replica))
    }

    /// The status of a chat with `key` on `replica`, asked again until it
    /// is `want` or 5 s have passed (a replica that cached the user's
    /// providers before they changed drops them when the change is
    /// announced).
    async fn chat_status(&self, replica: Replica, key: &str, model: &str, want: u16) -> u16 {
        let start = Instant::now();
        loop {
            let status = chat_at(self.base(replica), key, model)
                .await
                .status()
                .as_u16();
            if status == want || start.elapsed() > Duration::from_secs(5) {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(self) {
        self.two.stop().await.unwrap();
    }
}

#[tokio::test]
async fn sso_sign_in_and_linking_alternate_replicas() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the replicas test of SSO is skipped");
        return;
    };
    let env = SsoEnv::start(db).await;
    let r = Replicas::start(&env.env).await;

    // The first sign-in (it makes the admin): begun on one, called back on two.
    env.sim.idp_set_user("boss@corp.example", true);
    let ui = env.ui();
    let callback = to_callback(&r.browser(&ui, One), "/_ui/api/auth/google").await;
    let landing = open_callback(&r.browser(&ui, Two), &r.to(&callback, Two)).await;
    assert_eq!(landing.location, "/_ui/", "{landing:?}");
    assert!(landing.sets_session(), "{landing:?}");
    for replica in [One, Two] {
        let (status, who) = me(&r.browser(&ui, replica)).await;
        assert_eq!(status, 200, "{replica:?}: {who}");
        assert_eq!(who["email"], "boss@corp.example");
        assert_eq!(who["auth_method"], "sso");
    }
    // The callback replayed on one: the state was spent on two.
    let replay = open_callback(&r.browser(&ui, One), &r.to(&callback, One)).await;
    assert_eq!(replay.error().as_deref(), Some("sso_state_invalid"));
    assert!(!replay.sets_session());

    // Linking a password account: begun on two, called back on one.
    let admin = r.browser(&ui, One);
    let pat = env.env.new_user(&admin, "pat@corp.example", "User").await;
    env.sim.idp_set_user("pat@corp.example", true);
    let callback = to_callback(&r.browser(&pat.client, Two), "/_ui/api/auth/google/link").await;
    let landing = open_callback(&r.browser(&pat.client, One), &r.to(&callback, One)).await;
    assert_eq!(landing.location, "/_ui/?sso=linked", "{landing:?}");

    // The linked identity signs in to that account from a new browser:
    // begun on one, called back on two.
    let fresh = env.ui();
    let callback = to_callback(&r.browser(&fresh, One), "/_ui/api/auth/google").await;
    let landing = open_callback(&r.browser(&fresh, Two), &r.to(&callback, Two)).await;
    assert_eq!(landing.location, "/_ui/", "{landing:?}");
    let (_, who) = me(&r.browser(&fresh, One)).await;
    assert_eq!(who["user_id"], pat.id.as_str());
    r.stop().await;
}

#[tokio::test]
async fn password_and_totp_steps_alternate_replicas() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!(
            "TEST_DATABASE_URL is not set: the replicas test of password + TOTP sign-in is skipped"
        );
        return;
    };
    let env = FullEnv::start(db, &admin_env()).await;
    let r = Replicas::start(&env).await;

    // Password on one, code on two.
    let ui = env.ui();
    let (status, body) = r.browser(&ui, One).login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["needs_2fa"], true, "{body}");
    let token = body["login_token"].as_str().unwrap().to_owned();
    let code = totp_code(ADMIN_TOTP, 0);
    let (status, body) = r.browser(&ui, Two).second_factor(&token, &code).await;
    assert_eq!(status, 200, "{body}");
    for replica in [One, Two] {
        let (status, who) = me(&r.browser(&ui, replica)).await;
        assert_eq!(status, 200, "{replica:?}: {who}");
        assert_eq!(who["role"], "Admin");
    }
    // The login token was redeemed on two: one refuses it.
    let (status, _) = r
        .browser(&ui, One)
        .second_factor(&token, &totp_code(ADMIN_TOTP, 1))
        .await;
    assert_eq!(status, 401);

    // Another sign-in, password on two: the code's step was spent on two,
    // so one refuses the same code; the next step's code signs in on one.
    let other = env.ui();
    let (status, body) = r
        .browser(&other, Two)
        .login(ADMIN_EMAIL, ADMIN_PASSWORD)
        .await;
    assert_eq!(status, 200, "{body}");
    let token = body["login_token"].as_str().unwrap().to_owned();
    let (status, _) = r.browser(&other, One).second_factor(&token, &code).await;
    assert_eq!(status, 401, "a spent step signed in on the other replica");
    let (status, body) = r
        .browser(&other, One)
        .second_factor(&token, &totp_code(ADMIN_TOTP, 1))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(me(&r.browser(&other, Two)).await.0, 200);
    r.stop().await;
}

#[tokio::test]
async fn primary_device_flow_alternates_replicas() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!(
            "TEST_DATABASE_URL is not set: the replicas test of the primary device flow is skipped"
        );
        return;
    };
    let d = Deployment::start(db).await;
    let r = Replicas::start(&d.env).await;
    let ui = d.admin().await;
    let key = new_key(&ui).await;
    // One knows (and caches) that the admin has no upstream credentials.
    assert_eq!(chat_at(&r.one, &key, PRIMARY_MODEL).await.status(), 403);

    // Two polls answered pending, then success: set up on one, polled on
    // two, one, two; the spent code is unknown on one.
    d.sim.update_oidc(|c| c.approve_after = Some(2));
    let resp = r
        .browser(&ui, One)
        .post("/_ui/api/upstream/setup", json!({}))
        .await;
    assert_eq!(resp.status(), 200);
    let setup: Value = resp.json().await.unwrap();
    let device_code = setup["device_code"].as_str().unwrap().to_owned();
    let poll = |replica: Replica| {
        let browser = r.browser(&ui, replica);
        let body = json!({"device_code": device_code});
        async move {
            let resp = browser.post("/_ui/api/upstream/poll", body).await;
            let status = resp.status().as_u16();
            (status, resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    assert_eq!(poll(Two).await, (200, json!({"status": "pending"})));
    assert_eq!(poll(One).await, (200, json!({"status": "pending"})));
    assert_eq!(poll(Two).await, (200, json!({"status": "success"})));
    assert_eq!(poll(One).await.0, 404, "the finished flow is gone");

    for replica in [Two, One] {
        assert_eq!(
            r.chat_status(replica, &key, PRIMARY_MODEL, 200).await,
            200,
            "{replica:?} does not use the new credentials"
        );
    }
    r.stop().await;
}

#[tokio::test]
async fn messages_vendor_signin_alternates_replicas() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the replicas test of the messages_vendor sign-in is skipped");
        return;
    };
    let sim = start_sim().await;
    let env = messages_env(db, &sim).await;
    let r = Replicas::start(&env).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    assert_eq!(chat_at(&r.one, &key, MESSAGES_MODEL).await.status(), 403);

    // Started on one; the vendor's page sends the browser to the loopback
    // relay, which posts code and state to two.
    let started = start_messages_signin(&r.browser(&alice.client, One)).await;
    let state = started["state"].as_str().unwrap().to_owned();
    let back = query_of(&location_of(started["auth_url"].as_str().unwrap()).await);
    assert_eq!(back["state"], state);
    let relay = |replica: Replica| {
        let url = format!(
            "{}/_ui/api/providers/messages_vendor/relay",
            r.base(replica)
        );
        let body = json!({"code": back["code"], "state": state});
        let headers = r.public_headers();
        async move {
            client()
                .post(url)
                .headers(headers)
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let done = relay(Two).await;
    assert_eq!(done.status(), 200);
    let done: Value = done.json().await.unwrap();
    assert_eq!(done["provider"], "messages_vendor");
    // The same state on one: refused, nothing more stored.
    let (status, kind, _) = error_type(relay(One).await).await;
    assert_eq!((status, kind.as_str()), (400, "validation_error"));
    let accounts: Value = r
        .browser(&alice.client, One)
        .get("/_ui/api/providers/messages_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(accounts["accounts"].as_array().unwrap().len(), 1);

    for replica in [Two, One] {
        assert_eq!(
            r.chat_status(replica, &key, MESSAGES_MODEL, 200).await,
            200,
            "{replica:?} does not use the new account"
        );
    }
    r.stop().await;
}

#[tokio::test]
async fn assistant_vendor_signins_alternate_replicas() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the replicas test of the assistant_vendor sign-ins is skipped");
        return;
    };
    let sim = start_sim().await;
    let env = assistant_env(db, &sim, true).await;
    let r = Replicas::start(&env).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    assert_eq!(chat_at(&r.one, &key, ASSISTANT_MODEL).await.status(), 403);

    // The web flow: authorised from one, called back on two.
    let resp = r
        .browser(&alice.client, One)
        .get("/_ui/api/providers/assistant_vendor/auth")
        .await;
    assert_eq!(resp.status(), 302);
    let callback = location_of(resp.headers()["location"].to_str().unwrap()).await;
    let landing = |replica: Replica| {
        let browser = r.browser(&alice.client, replica);
        let url = r.to(&callback, replica);
        async move {
            let resp = browser.http.get(url).send().await.unwrap();
            assert_eq!(resp.status(), 302);
            resp.headers()["location"].to_str().unwrap().to_owned()
        }
    };
    assert_eq!(
        landing(Two).await,
        format!("{}/_ui/providers?connected=assistant_vendor", r.one)
    );
    // The same callback on one: the state was spent on two.
    assert!(landing(One)
        .await
        .ends_with("/_ui/providers?error=state_invalid"));
    for replica in [Two, One] {
        assert_eq!(
            r.chat_status(replica, &key, ASSISTANT_MODEL, 200).await,
            200,
            "{replica:?} does not use the new account"
        );
    }

    // The device flow: started on one, polled on two, one, two (the person
    // approves between the second and third poll); then ended for both.
    sim.update_vendors(|v| {
        v.code_host.approve_after = None;
        v.code_host.interval_secs = 0;
    });
    let started: Value = r
        .browser(&alice.client, One)
        .post("/_ui/api/assistant/device-code", json!({}))
        .await
        .json()
        .await
        .unwrap();
    let device_code = started["device_code"].as_str().unwrap().to_owned();
    let poll = |replica: Replica| {
        let browser = r.browser(&alice.client, replica);
        let body = json!({"device_code": device_code});
        async move {
            let resp = browser.post("/_ui/api/assistant/device-poll", body).await;
            assert_eq!(resp.status(), 200);
            resp.json::<Value>().await.unwrap()
        }
    };
    assert_eq!(poll(Two).await["status"], "pending");
    assert_eq!(poll(One).await["status"], "pending");
    assert!(sim.approve_code_host_device(started["user_code"].as_str().unwrap()));
    let done = poll(Two).await;
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(
        poll(One).await["status"],
        "expired",
        "the flow ended on two"
    );
    let accounts: Value = r
        .browser(&alice.client, One)
        .get("/_ui/api/providers/assistant_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    let ids: Vec<&Value> = accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["id"])
        .collect();
    assert!(ids.contains(&&done["account_id"]), "{accounts}");
    r.stop().await;
}
