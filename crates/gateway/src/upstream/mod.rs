//! Talking to upstreams: the hot path's pooled client ([`client::HttpClient`],
//! built by [`build_upstream_client`], or [`build_user_url_client`] for base
//! URLs users typed), the cold paths' reqwest client ([`build_http_client`]),
//! the retry policy around one request ([`http`]), the one loop that reads
//! an answer's body through a format's decoder ([`reader`]), and
//! [`Upstream`], the client with the policy of one request's configuration
//! snapshot.

pub mod client;
pub mod http;
pub mod reader;
pub mod ssrf;

use std::sync::Arc;
use std::time::Duration;

use crate::config::{RuntimeConfig, Tuning};
use client::HttpClient;
use http::RetryPolicy;

/// Idle pooled connections of the cold paths' client are closed after this long.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keep-alive probes on the cold paths' connections.
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The hot path's client (chat calls, counting, model listings): the
/// connect timeout of the configuration and no total timeout (a stream may
/// run for many minutes; the pipeline bounds waits itself).
pub fn build_upstream_client(runtime: &RuntimeConfig) -> HttpClient {
    HttpClient::new(runtime.http_connect_timeout)
}

/// The same client for URLs users gave (their accounts' base URLs): every
/// connection's addresses pass [`ssrf::ConnectGuard`] first.
pub fn build_user_url_client(
    runtime: &RuntimeConfig,
    guard: Arc<ssrf::ConnectGuard>,
) -> HttpClient {
    HttpClient::with_resolver(ssrf::GuardedResolver(guard), runtime.http_connect_timeout)
}

/// The cold paths' client (OAuth and device flows, SSO, credential refresh,
/// the guardrail service, trace export): reqwest with rustls, TCP_NODELAY,
/// keep-alive and the configuration's connect timeout. Its own retries are
/// off; callers that retry do so themselves.
pub fn build_http_client(runtime: &RuntimeConfig) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .use_rustls_tls()
        .retry(reqwest::retry::never())
        .tcp_nodelay(true)
        .tcp_keepalive(TCP_KEEPALIVE)
        .connect_timeout(runtime.http_connect_timeout)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
}

/// The HTTP client and the timing one request's calls use, taken from one
/// configuration snapshot. Cheap to clone (the client is a handle).
#[derive(Debug, Clone)]
pub struct Upstream {
    pub http: HttpClient,
    pub policy: RetryPolicy,
    /// The longest gap between two reads of an answer (`http_request_timeout`).
    pub idle: Duration,
    /// The wait for a streaming answer's first event (`first_token_timeout`).
    pub first_token: Duration,
}

impl Upstream {
    pub fn new(http: &HttpClient, runtime: &RuntimeConfig, tuning: &Tuning) -> Self {
        Upstream {
            http: http.clone(),
            policy: RetryPolicy::new(runtime, tuning),
            idle: runtime.http_request_timeout,
            first_token: runtime.first_token_timeout,
        }
    }
}
