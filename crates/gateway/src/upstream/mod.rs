//! Talking to upstreams: the hot path's pooled client ([`client::HttpClient`],
//! built by [`build_upstream_client`], or [`build_user_url_client`] for base
//! URLs users typed), the cold paths' reqwest client ([`build_http_client`]),
//! the retry policy around one request ([`http`]), the one loop that reads
//! an answer's body through a format's decoder ([`reader`]), and
//! [`Upstream`], the client with the policy of one request's configuration
//! snapshot. Both hot-path clients follow the operator's outbound proxy
//! variables ([`proxy`], [`proxy_connector`]).

pub mod client;
pub mod http;
mod pool;
pub mod proxy;
mod proxy_connector;
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
/// run for many minutes; the pipeline bounds waits itself), through the
/// outbound proxy the environment names. Refused when a proxy variable
/// names a proxy the client cannot use.
pub fn build_upstream_client(
    runtime: &RuntimeConfig,
) -> Result<HttpClient, proxy::ProxyConfigError> {
    let client = HttpClient::new(runtime.http_connect_timeout)?;
    let named = proxy_variables(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !named.is_empty() {
        // Names only: a proxy URL may carry credentials.
        tracing::info!(
            variables = named.join(","),
            "the upstream calls (chat, token counting, model lists) follow the outbound proxy \
             variables, as the sign-in flows, SSO, the guardrail service and trace export do \
             (docs/configuration.md)"
        );
    }
    Ok(client)
}

/// Which of the proxy variables ([`proxy::PROXY_VARIABLES`], both spellings
/// of each) `is_set` says are set.
fn proxy_variables(is_set: impl Fn(&str) -> bool) -> Vec<&'static str> {
    proxy::PROXY_VARIABLES
        .into_iter()
        .flat_map(|(upper, lower)| [upper, lower])
        .filter(|name| is_set(name))
        .collect()
}

/// The same client for URLs users gave (their accounts' base URLs): every
/// connection's addresses pass [`ssrf::ConnectGuard`] first, through the
/// outbound proxy too ([`proxy_connector`]).
pub fn build_user_url_client(
    runtime: &RuntimeConfig,
    guard: Arc<ssrf::ConnectGuard>,
) -> HttpClient {
    // Checked at start-up by build_upstream_client, which refuses to start
    // on a proxy it cannot use; read once per process.
    let proxy = proxy::ProxyConfig::from_env().unwrap_or_default();
    HttpClient::with_resolver(
        ssrf::GuardedResolver(guard),
        runtime.http_connect_timeout,
        &proxy,
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_variables_set_are_named() {
        assert!(proxy_variables(|_| false).is_empty());
        assert_eq!(
            proxy_variables(|name| matches!(name, "https_proxy" | "ALL_PROXY" | "NO_PROXY")),
            ["https_proxy", "ALL_PROXY", "NO_PROXY"]
        );
        // Every variable the client reads is one the line can name.
        for name in [
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "ALL_PROXY",
            "all_proxy",
            "NO_PROXY",
            "no_proxy",
        ] {
            assert_eq!(proxy_variables(|n| n == name), [name]);
        }
    }
}
