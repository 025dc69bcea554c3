//! Talking to upstreams: the one pooled HTTP client ([`build_http_client`]),
//! the retry policy around one request ([`http`]), the one loop that reads an
//! answer's body through a format's decoder ([`reader`]), and [`Upstream`],
//! the client with the policy of one request's configuration snapshot.

pub mod client;
pub mod http;
pub mod reader;
pub mod ssrf;

use std::time::Duration;

use crate::config::{RuntimeConfig, Tuning};
use http::RetryPolicy;

/// Idle pooled connections are closed after this long.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keep-alive probes on upstream connections (long streams behind NAT).
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The pooled upstream client: rustls, TCP_NODELAY, keep-alive, the connect
/// timeout of the configuration and no total timeout (a stream may run for
/// many minutes; the pipeline bounds waits itself). reqwest's own retries are
/// off: [`http::send_with_retry`] retries with the spec's policy, and
/// reqwest's retry layer copied every request's headers in case it would retry.
pub fn build_http_client(runtime: &RuntimeConfig) -> reqwest::Result<reqwest::Client> {
    client_builder(runtime).build()
}

/// The same client for URLs users gave (their accounts' base URLs): every
/// connection's addresses pass [`ssrf::ConnectGuard`] first.
pub fn build_user_url_client(
    runtime: &RuntimeConfig,
    guard: std::sync::Arc<ssrf::ConnectGuard>,
) -> reqwest::Result<reqwest::Client> {
    client_builder(runtime)
        .dns_resolver(std::sync::Arc::new(ssrf::GuardedResolver(guard)))
        .build()
}

fn client_builder(runtime: &RuntimeConfig) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .retry(reqwest::retry::never())
        .tcp_nodelay(true)
        .tcp_keepalive(TCP_KEEPALIVE)
        .connect_timeout(runtime.http_connect_timeout)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
}

/// The HTTP client and the timing one request's calls use, taken from one
/// configuration snapshot. Cheap to clone (the client is a handle).
#[derive(Debug, Clone)]
pub struct Upstream {
    pub http: reqwest::Client,
    pub policy: RetryPolicy,
    /// The longest gap between two reads of an answer (`http_request_timeout`).
    pub idle: Duration,
    /// The wait for a streaming answer's first event (`first_token_timeout`).
    pub first_token: Duration,
}

impl Upstream {
    pub fn new(http: &reqwest::Client, runtime: &RuntimeConfig, tuning: &Tuning) -> Self {
        Upstream {
            http: http.clone(),
            policy: RetryPolicy::new(runtime, tuning),
            idle: runtime.http_request_timeout,
            first_token: runtime.first_token_timeout,
        }
    }
}
