//! Shared helpers of the integration tests: a temporary `DATA_DIR`, the
//! simulator, `tokens.json` seeding, and a real gateway served on an ephemeral
//! port through `gateway::serve`.

#![allow(dead_code)] // each test module uses a different subset

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
                let name = ev.event.expect("messages events are named");
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
