//! Shared helpers of the integration tests: a temporary `DATA_DIR`, the
//! simulator, `tokens.json` seeding, and a real gateway served on an ephemeral
//! port through `gateway::serve`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gateway::config::{Config, EnvSource};
use tokio::sync::oneshot;
use upstream_sim::{SeededCredentials, SimConfig, SimHandle};

/// The client key of every proxy-mode test gateway.
pub const API_KEY: &str = "test-proxy-key-0123456789";

/// A temporary folder, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!("gw-it-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn tokens_path(&self) -> PathBuf {
        self.0.join("tokens.json")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Start the simulator with its test defaults.
pub async fn start_sim() -> SimHandle {
    upstream_sim::start(SimConfig::default()).await.unwrap()
}

/// Start the simulator with a changed configuration.
pub async fn start_sim_with(change: impl FnOnce(&mut SimConfig)) -> SimHandle {
    let mut config = SimConfig::default();
    change(&mut config);
    upstream_sim::start(config).await.unwrap()
}

/// Write `tokens.json` as a device login would have left it.
pub fn write_tokens(dir: &TempDir, creds: &SeededCredentials) {
    let body = serde_json::json!({
        "refresh_token": creds.refresh_token,
        "client_id": creds.client_id,
        "client_secret": creds.client_secret,
    });
    std::fs::write(dir.tokens_path(), body.to_string()).unwrap();
}

/// The environment of a proxy-mode gateway in front of `sim`.
pub fn proxy_env(sim: &SimHandle, dir: &TempDir) -> Vec<(String, String)> {
    [
        ("GATEWAY_MODE", "proxy".to_owned()),
        ("PROXY_API_KEY", API_KEY.to_owned()),
        ("DATA_DIR", dir.path().display().to_string()),
        ("UPSTREAM_API_ENDPOINT", sim.base_url()),
        ("UPSTREAM_OIDC_ENDPOINT", sim.oidc_url()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A configuration from `pairs` (no process environment, no `.env`), with
/// fast internal timings so retries take milliseconds.
pub fn config_from<K: Into<String>, V: Into<String>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Config {
    let mut config = Config::from_source(&EnvSource::from_pairs(pairs)).unwrap();
    config.tuning.retry_base_delay = Duration::from_millis(10);
    config.tuning.retry_max_delay = Duration::from_millis(100);
    config.tuning.startup_refresh_attempts = 1;
    config
}

/// A gateway served on `127.0.0.1:<ephemeral>`.
pub struct Gateway {
    pub base: String,
    pub addr: std::net::SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl Gateway {
    /// Bind port 0 and serve `config` in the background. Requests sent before
    /// the gateway is ready (device flow, model list) wait in the listen queue.
    pub async fn start(config: Config) -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(gateway::serve(config, listener, async move {
            let _ = rx.await;
        }));
        Gateway {
            base: format!("http://{addr}"),
            addr,
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Trigger shutdown without waiting.
    pub fn trigger_shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    /// Shut down and return what `serve` returned.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.trigger_shutdown();
        let task = self.task.take().unwrap();
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("serve did not stop")
            .unwrap()
    }

    /// Wait for `serve` to return by itself (no shutdown signal).
    pub async fn wait(mut self) -> anyhow::Result<()> {
        let task = self.task.take().unwrap();
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("serve did not return")
            .unwrap()
    }

    /// Whether `serve` has returned already.
    pub fn finished(&self) -> bool {
        self.task.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A proxy-mode gateway with seeded credentials in front of a fresh simulator.
pub struct ProxyEnv {
    pub sim: SimHandle,
    pub dir: TempDir,
    pub creds: SeededCredentials,
    pub gateway: Gateway,
}

impl ProxyEnv {
    /// Simulator + `tokens.json` + gateway; `extra` adds or overrides variables.
    pub async fn start(extra: &[(&str, &str)]) -> ProxyEnv {
        let sim = start_sim().await;
        Self::start_with_sim(sim, extra).await
    }

    pub async fn start_with_sim(sim: SimHandle, extra: &[(&str, &str)]) -> ProxyEnv {
        let dir = TempDir::new();
        let creds = sim.seed_credentials();
        write_tokens(&dir, &creds);
        let mut env = proxy_env(&sim, &dir);
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let gateway = Gateway::start(config_from(env)).await;
        ProxyEnv {
            sim,
            dir,
            creds,
            gateway,
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.gateway.url(path)
    }
}

/// A plain HTTP client for the tests.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A port on which nothing listens (bound, then released).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

// ---- helpers of the `/v1` tests (v1_* modules) ----

impl ProxyEnv {
    /// `POST path` with the JSON `body` and the client key as a bearer token.
    pub async fn post(&self, path: &str, body: &serde_json::Value) -> reqwest::Response {
        client()
            .post(self.url(path))
            .bearer_auth(API_KEY)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// The bodies the simulator received on its chat route, oldest first.
    pub fn chat_requests(&self) -> Vec<serde_json::Value> {
        self.sim
            .requests_to("/generateAssistantResponse")
            .iter()
            .map(|r| r.json().cloned().expect("a JSON chat body"))
            .collect()
    }
}

/// A chat-completions body with one user message.
pub fn chat_body(content: &str, stream: bool) -> serde_json::Value {
    serde_json::json!({
        "model": "claude-sonnet-4.5",
        "messages": [{"role": "user", "content": content}],
        "stream": stream,
    })
}

/// A messages body with one user message.
pub fn messages_body(content: &str, stream: bool) -> serde_json::Value {
    serde_json::json!({
        "model": "claude-sonnet-4.5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": content}],
        "stream": stream,
    })
}

/// Every SSE event of a response body, read to its end. A body that breaks
/// off (transport error) ends the list; `None` as the second value means the
/// body ended cleanly.
pub async fn read_sse(mut resp: reqwest::Response) -> (Vec<wire::sse::SseEvent>, Option<String>) {
    let mut parser = wire::sse::SseParser::new();
    let mut events = Vec::new();
    let mut broken = None;
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                parser.feed(&chunk);
                while let Some(ev) = parser.next_event().unwrap() {
                    events.push(ev);
                }
            }
            Ok(None) => break,
            Err(e) => {
                broken = Some(e.to_string());
                break;
            }
        }
    }
    while let Some(ev) = parser.finish().unwrap() {
        events.push(ev);
    }
    (events, broken)
}

/// A chat-completions stream: its chunks, whether `[DONE]` ended it, and the
/// error chunk if one came.
#[derive(Debug, Default)]
pub struct OpenAiStream {
    pub chunks: Vec<serde_json::Value>,
    pub done: bool,
    pub error: Option<serde_json::Value>,
}

impl OpenAiStream {
    /// Read a whole stream; panics on anything after `[DONE]` or an error chunk.
    pub async fn read(resp: reqwest::Response) -> OpenAiStream {
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let (events, broken) = read_sse(resp).await;
        assert_eq!(broken, None, "the client stream must end cleanly");
        let mut out = OpenAiStream::default();
        for ev in events {
            assert!(
                !out.done && out.error.is_none(),
                "event after the end: {ev:?}"
            );
            assert_eq!(ev.event, None, "chat-completions events carry no name");
            if ev.data == "[DONE]" {
                out.done = true;
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&ev.data).unwrap();
            if v.get("error").is_some() {
                out.error = Some(v);
            } else {
                out.chunks.push(v);
            }
        }
        out
    }

    /// The joined `content` deltas.
    pub fn text(&self) -> String {
        self.delta_field("content")
    }

    /// The joined `reasoning_content` deltas.
    pub fn reasoning(&self) -> String {
        self.delta_field("reasoning_content")
    }

    fn delta_field(&self, field: &str) -> String {
        self.chunks
            .iter()
            .filter_map(|c| c["choices"].get(0))
            .filter_map(|c| c["delta"][field].as_str())
            .collect()
    }

    /// Chunks that carry choices (all but the usage chunk).
    pub fn choice_chunks(&self) -> Vec<&serde_json::Value> {
        self.chunks
            .iter()
            .filter(|c| !c["choices"].as_array().unwrap().is_empty())
            .collect()
    }
}

/// A messages stream: `(event name, data)` pairs in order.
#[derive(Debug, Default)]
pub struct AnthropicStream {
    pub events: Vec<(String, serde_json::Value)>,
}

impl AnthropicStream {
    pub async fn read(resp: reqwest::Response) -> AnthropicStream {
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let (events, broken) = read_sse(resp).await;
        assert_eq!(broken, None, "the client stream must end cleanly");
        let events = events
            .into_iter()
            .map(|ev| {
                let name = ev.event.expect("messages events are named").into_owned();
                let data: serde_json::Value = serde_json::from_str(&ev.data).unwrap();
                assert_eq!(data["type"], name.as_str(), "data.type names the event");
                (name, data)
            })
            .collect();
        AnthropicStream { events }
    }

    /// The event names in order, `ping`s left out.
    pub fn names(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| *n != "ping")
            .collect()
    }

    /// The data of every event with this name.
    pub fn all(&self, name: &str) -> Vec<&serde_json::Value> {
        self.events
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, d)| d)
            .collect()
    }

    /// The joined deltas of `delta_type` (`text_delta` -> `text`, ...).
    pub fn joined(&self, delta_type: &str, field: &str) -> String {
        self.all("content_block_delta")
            .into_iter()
            .filter(|d| d["delta"]["type"] == delta_type)
            .filter_map(|d| d["delta"][field].as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        self.joined("text_delta", "text")
    }
}

/// Poll `check` every 20 ms for up to `within`; true as soon as it holds.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---- helpers of the full-deployment tests (store_* and ui_* modules) ----

/// Run each named `async fn(TestDb)` twice: on SQLite always, and on
/// PostgreSQL when `TEST_DATABASE_URL` is set (each run in its own schema).
#[macro_export]
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name($crate::common::TestDb::sqlite()).await
            }
            #[tokio::test]
            async fn postgres() {
                match $crate::common::TestDb::postgres().await {
                    Some(db) => super::$name(db).await,
                    None => eprintln!("TEST_DATABASE_URL is not set: the PostgreSQL run is skipped"),
                }
            }
        }
    )*};
}

/// The encryption key of every full-mode test gateway (base64 of 32 bytes).
pub const TEST_KEY: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
/// The seeded admin of [`admin_env`].
pub const ADMIN_EMAIL: &str = "admin@example.com";
pub const ADMIN_PASSWORD: &str = "admin password 0123";
/// Base32 TOTP secret of the seeded admin.
pub const ADMIN_TOTP: &str = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

/// `INITIAL_ADMIN_*` for a seeded admin with 2FA on.
pub fn admin_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("INITIAL_ADMIN_EMAIL", ADMIN_EMAIL),
        ("INITIAL_ADMIN_PASSWORD", ADMIN_PASSWORD),
        ("INITIAL_ADMIN_TOTP_SECRET", ADMIN_TOTP),
    ]
}

/// The TOTP code of `secret` (base32) `offset` steps from now.
pub fn totp_code(secret: &str, offset: i64) -> String {
    let s = gateway::crypto::TotpSecret::from_base32(secret).expect("base32 secret");
    let now = gateway::store::clock::now();
    let step = gateway::crypto::totp::step_of(u64::try_from(now).unwrap());
    s.code_at_step(step.checked_add_signed(offset).unwrap())
}

/// The store of one test: a SQLite file in a temporary folder, or a fresh
/// schema in the `TEST_DATABASE_URL` database (dropped with the value).
pub struct TestDb {
    pub url: String,
    pub backend: &'static str,
    _dir: Option<TempDir>,
    schema: Option<(String, String)>,
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let dir = TempDir::new();
        TestDb {
            url: format!("sqlite://{}/test.db", dir.path().display()),
            backend: "sqlite",
            _dir: Some(dir),
            schema: None,
        }
    }

    /// A new schema in `TEST_DATABASE_URL`, or `None` when it is unset.
    pub async fn postgres() -> Option<TestDb> {
        let base = std::env::var("TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.is_empty())?;
        let schema = format!("gw_{}", uuid::Uuid::new_v4().simple());
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&base)
            .await
            .expect("TEST_DATABASE_URL is set but PostgreSQL cannot be reached");
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut conn)
            .await
            .unwrap();
        let _ = sqlx::Connection::close(conn).await;
        let sep = if base.contains('?') { '&' } else { '?' };
        Some(TestDb {
            url: format!("{base}{sep}options=-c%20search_path%3D{schema}"),
            backend: "postgres",
            _dir: None,
            schema: Some((base, schema)),
        })
    }

    /// The usage rows of `user`, once they stand for `n` requests (written
    /// within a second or two, off the request's path; up to 7.5 s), or
    /// what there is by then. Requests of one second that differ only in
    /// their counts may share a row ([`UsageRecord::requests`]).
    ///
    /// [`UsageRecord::requests`]: gateway::store::usage::UsageRecord::requests
    pub async fn usage_rows(
        &self,
        user: gateway::store::ids::UserId,
        n: usize,
    ) -> Vec<gateway::store::usage::UsageRecord> {
        let store = self.store().await;
        let mut rows = Vec::new();
        for _ in 0..150 {
            rows = store.usage().records_of(user).await.unwrap();
            if requests_in(&rows) >= n {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        store.close().await;
        rows
    }

    /// A store on this database with the test key.
    pub async fn store(&self) -> gateway::store::Store {
        let key = gateway::crypto::EncryptionKey::parse(TEST_KEY).unwrap();
        gateway::store::Store::connect(&self.url, &key)
            .await
            .unwrap()
    }
}

/// How many requests `rows` stand for.
pub fn requests_in(rows: &[gateway::store::usage::UsageRecord]) -> usize {
    rows.iter()
        .map(|r| usize::try_from(r.requests).unwrap())
        .sum()
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((base, schema)) = self.schema.take() else {
            return;
        };
        // Drop cannot await: a short-lived runtime on its own thread.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(mut conn) = <sqlx::PgConnection as sqlx::Connection>::connect(&base).await
                {
                    // Never wait long: a connection of the ending test may
                    // still hold a lock; the scratch database goes at exit anyway.
                    let _ = sqlx::query("SET lock_timeout = '3s'")
                        .execute(&mut conn)
                        .await;
                    let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

/// A full-deployment configuration on `db` with data in `dir`: cheap
/// password hashing, the test key, `COOKIE_SECURE=false` (plain HTTP).
pub fn full_config(db: &TestDb, dir: &TempDir, extra: &[(&str, &str)]) -> Config {
    let mut env: Vec<(String, String)> = vec![
        ("GATEWAY_MODE".into(), "full".into()),
        ("DATA_DIR".into(), dir.path().display().to_string()),
        ("DATABASE_URL".into(), db.url.clone()),
        ("CONFIG_ENCRYPTION_KEY".into(), TEST_KEY.into()),
        ("COOKIE_SECURE".into(), "false".into()),
        ("UPSTREAM_API_ENDPOINT".into(), "http://127.0.0.1:9".into()),
        ("UPSTREAM_OIDC_ENDPOINT".into(), "http://127.0.0.1:9".into()),
    ];
    env.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let mut config = config_from(env);
    config.tuning.auth.argon2_memory_kib = 64;
    config.tuning.auth.argon2_iterations = 1;
    config
}

/// A full-deployment gateway on a test store.
pub struct FullEnv {
    pub db: TestDb,
    pub dir: TempDir,
    pub config: Config,
    pub gateway: Gateway,
}

/// TOTP step offset of the seeded admin's next sign-in per store (each
/// step is accepted once).
static ADMIN_SIGN_INS: std::sync::Mutex<Vec<(String, i64)>> = std::sync::Mutex::new(Vec::new());

/// The first and the changed password of users made by [`FullEnv::new_user`].
pub const USER_PASSWORD: &str = "first password 0123";
pub const USER_PASSWORD_2: &str = "second password 4567";

/// A signed-in user made by [`FullEnv::new_user`].
pub struct TestUser {
    pub client: UiClient,
    pub id: String,
    #[expect(dead_code, reason = "kept for tests that sign the user in again")]
    pub email: String,
    #[expect(dead_code, reason = "kept for tests that sign the user in again")]
    pub totp_secret: String,
    pub recovery_codes: Vec<String>,
}

impl FullEnv {
    pub async fn start(db: TestDb, extra: &[(&str, &str)]) -> FullEnv {
        Self::start_tuned(db, extra, |_| {}).await
    }

    /// Start with the configuration changed by `tune` (shorter limits).
    pub async fn start_tuned(
        db: TestDb,
        extra: &[(&str, &str)],
        tune: impl FnOnce(&mut Config),
    ) -> FullEnv {
        let dir = TempDir::new();
        let mut config = full_config(&db, &dir, extra);
        tune(&mut config);
        let gateway = Gateway::start(config.clone()).await;
        let env = FullEnv {
            db,
            dir,
            config,
            gateway,
        };
        // Wait until it serves (the store is opened before the listener accepts).
        let status = env.ui().get("/_ui/api/status").await;
        assert_eq!(status.status(), 200, "the gateway did not start");
        env
    }

    /// Another gateway process on the same store (a second replica).
    pub async fn replica(&self) -> Gateway {
        Gateway::start(self.config.clone()).await
    }

    pub fn url(&self, path: &str) -> String {
        self.gateway.url(path)
    }

    /// A new browser-like client (own cookie jar) for this gateway.
    pub fn ui(&self) -> UiClient {
        UiClient::new(&self.gateway.base)
    }

    /// A client signed in as the seeded admin ([`admin_env`]). Each TOTP
    /// step is accepted once: this works twice per test (the current step,
    /// then the next one).
    pub async fn admin(&self) -> UiClient {
        let offset = {
            let mut all = ADMIN_SIGN_INS.lock().unwrap();
            match all.iter_mut().find(|(url, _)| *url == self.db.url) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    all.push((self.db.url.clone(), 0));
                    0
                }
            }
        };
        assert!(offset <= 1, "the seeded admin can sign in twice per test");
        let ui = self.ui();
        let body = ui
            .login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, offset)
            .await;
        assert_eq!(body["role"], "Admin", "{body}");
        ui
    }

    /// A new password user created by `admin`, signed in through the whole
    /// first-sign-in path (password change, 2FA enrollment).
    pub async fn new_user(&self, admin: &UiClient, email: &str, role: &str) -> TestUser {
        let resp = admin
            .post(
                "/_ui/api/admin/users/create",
                serde_json::json!({"email": email, "password": USER_PASSWORD, "role": role}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        let created: serde_json::Value = resp.json().await.unwrap();
        let ui = self.ui();
        let (status, body) = ui.login(email, USER_PASSWORD).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["must_change_password"], true, "{body}");
        assert_eq!(body["needs_2fa_setup"], true, "{body}");
        let resp = ui
            .post(
                "/_ui/api/auth/password/change",
                serde_json::json!({"current_password": USER_PASSWORD, "new_password": USER_PASSWORD_2}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        let (totp_secret, recovery_codes) = ui.enroll_2fa().await;
        TestUser {
            client: ui,
            id: created["user_id"].as_str().unwrap().to_owned(),
            email: email.to_owned(),
            totp_secret,
            recovery_codes,
        }
    }

    /// The one-time setup code (as the log shows it).
    pub async fn setup_code(&self) -> String {
        let store = self.db.store().await;
        let code = store.meta().setup_code().await.unwrap().expose().to_owned();
        store.close().await;
        code
    }
}

/// A client with a cookie jar that sends the CSRF token like the web UI.
pub struct UiClient {
    pub http: reqwest::Client,
    pub jar: std::sync::Arc<reqwest::cookie::Jar>,
    pub base: String,
}

impl UiClient {
    pub fn new(base: &str) -> UiClient {
        let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
        let http = reqwest::Client::builder()
            .cookie_provider(jar.clone())
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        UiClient {
            http,
            jar,
            base: base.to_owned(),
        }
    }

    /// The same browser (cookie jar) talking to another gateway (replica).
    pub fn at(&self, base: &str) -> UiClient {
        UiClient {
            http: self.http.clone(),
            jar: self.jar.clone(),
            base: base.to_owned(),
        }
    }

    /// The value of cookie `name` the jar would send to `path`.
    pub fn cookie(&self, path: &str, name: &str) -> Option<String> {
        use reqwest::cookie::CookieStore as _;
        let url: reqwest::Url = format!("{}{path}", self.base).parse().unwrap();
        let header = self.jar.cookies(&url)?;
        header
            .to_str()
            .unwrap()
            .split(';')
            .filter_map(|p| p.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    }

    pub fn session_id(&self) -> Option<String> {
        self.cookie("/", "gw_session")
    }

    pub fn csrf(&self) -> Option<String> {
        self.cookie("/_ui/api/", "csrf_token")
    }

    /// Put a cookie in the jar as if the server had set it.
    pub fn plant(&self, cookie: &str) {
        let url: reqwest::Url = self.base.parse().unwrap();
        self.jar.add_cookie_str(cookie, &url);
    }

    fn with_csrf(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.csrf() {
            Some(token) => rb.header("x-csrf-token", token),
            None => rb,
        }
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }

    /// POST JSON with the CSRF token (when the jar has one).
    pub async fn post(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        let rb = self.http.post(format!("{}{path}", self.base)).json(&body);
        self.with_csrf(rb).send().await.unwrap()
    }

    pub async fn put(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        let rb = self.http.put(format!("{}{path}", self.base)).json(&body);
        self.with_csrf(rb).send().await.unwrap()
    }

    pub async fn patch(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        let rb = self.http.patch(format!("{}{path}", self.base)).json(&body);
        self.with_csrf(rb).send().await.unwrap()
    }

    pub async fn delete(&self, path: &str) -> reqwest::Response {
        let rb = self.http.delete(format!("{}{path}", self.base));
        self.with_csrf(rb).send().await.unwrap()
    }

    /// `POST /_ui/api/auth/login`: status and body.
    pub async fn login(&self, email: &str, password: &str) -> (u16, serde_json::Value) {
        let resp = self
            .post(
                "/_ui/api/auth/login",
                serde_json::json!({"email": email, "password": password}),
            )
            .await;
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap())
    }

    /// Both sign-in steps with the TOTP code of `secret` `offset` steps from
    /// now (after an enrollment, which spends the current step, use 1); the
    /// final body.
    pub async fn login_totp(
        &self,
        email: &str,
        password: &str,
        secret: &str,
        offset: i64,
    ) -> serde_json::Value {
        let (status, body) = self.login(email, password).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["needs_2fa"], true, "{body}");
        let (status, body) = self
            .second_factor(
                body["login_token"].as_str().unwrap(),
                &totp_code(secret, offset),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// `POST /_ui/api/auth/login/2fa`: status and body.
    pub async fn second_factor(&self, token: &str, code: &str) -> (u16, serde_json::Value) {
        let resp = self
            .post(
                "/_ui/api/auth/login/2fa",
                serde_json::json!({"login_token": token, "code": code}),
            )
            .await;
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap())
    }

    /// Enroll 2FA on the signed-in account: the secret and the recovery codes.
    pub async fn enroll_2fa(&self) -> (String, Vec<String>) {
        let setup: serde_json::Value = self
            .get("/_ui/api/auth/2fa/setup")
            .await
            .json()
            .await
            .unwrap();
        let secret = setup["secret"].as_str().expect("a secret").to_owned();
        let resp = self
            .post(
                "/_ui/api/auth/2fa/verify",
                serde_json::json!({"code": totp_code(&secret, 0)}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        let body: serde_json::Value = resp.json().await.unwrap();
        let codes = body["recovery_codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect();
        (secret, codes)
    }
}

/// The ids `/v1/models` lists for `key`.
pub async fn v1_model_ids(base: &str, key: &str) -> Vec<String> {
    let listed: serde_json::Value = client()
        .get(format!("{base}/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}
