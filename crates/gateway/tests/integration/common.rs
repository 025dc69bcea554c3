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
