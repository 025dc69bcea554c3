//! What the gateway tells its operators besides its logs: the Prometheus
//! metrics of interfaces-full.md 6, served by `GET /metrics`
//! (`routes::metrics`).
//!
//! - One registry per process ([`meters`]), as Prometheus assumes one
//!   exporter per process: counters and gauges are handles of the `metrics`
//!   facade registered with `metrics-exporter-prometheus` once and kept
//!   ([`meters::Meters`]); recording one is an atomic add, without a lock or
//!   an allocation.
//! - Series whose labels depend on the request (model, status) are found
//!   through a per-thread cache ([`series`]); only the first request of a
//!   label set on a thread registers it.
//! - Histograms count into fixed buckets ([`histogram`]) and are rendered
//!   next to the exporter's text.
//! - Values that the gateway already counts elsewhere (dropped usage
//!   records, guardrail fail-opens, the usage queue) are read at scrape time
//!   and cost requests nothing.
//!
//! No label carries a user or key id. A model name comes from the caller, so
//! the distinct models a process labels are bounded ([`series::MAX_MODELS`]);
//! past that, a new model is labelled `other`.

pub(crate) mod histogram;
pub(crate) mod meters;
pub(crate) mod series;
pub(crate) mod traces;

pub(crate) use meters::meters;

/// The `/v1` endpoints, as the `endpoint` label names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    ChatCompletions,
    Messages,
    CountTokens,
    Models,
    /// Any other `/v1` path (answered 404).
    Other,
}

impl Endpoint {
    pub(crate) const COUNT: usize = 5;

    /// The endpoint of a request path, `None` outside `/v1`.
    pub(crate) fn of_path(path: &str) -> Option<Endpoint> {
        let rest = path.strip_prefix("/v1")?;
        (rest.is_empty() || rest.starts_with('/')).then(|| Endpoint::of_route(rest))
    }

    /// The endpoint of a path inside `/v1` (`/chat/completions`, ...); a
    /// whole path (with `/v1`) is taken as well.
    pub(crate) fn of_route(path: &str) -> Endpoint {
        let route = match path.strip_prefix("/v1") {
            Some(rest) if rest.starts_with('/') => rest,
            _ => path,
        };
        match route {
            "/chat/completions" => Endpoint::ChatCompletions,
            "/messages" => Endpoint::Messages,
            "/messages/count_tokens" => Endpoint::CountTokens,
            "/models" => Endpoint::Models,
            _ => Endpoint::Other,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Endpoint::ChatCompletions => "/v1/chat/completions",
            Endpoint::Messages => "/v1/messages",
            Endpoint::CountTokens => "/v1/messages/count_tokens",
            Endpoint::Models => "/v1/models",
            Endpoint::Other => "other",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// A chat call (its usage is recorded).
    pub(crate) fn is_chat(self) -> bool {
        matches!(self, Endpoint::ChatCompletions | Endpoint::Messages)
    }
}

/// The providers as the `provider` label spells them, and `none` for a
/// request that reached no provider (refused, or not a chat call).
pub(crate) const PROVIDERS: [&str; 6] = [
    "primary",
    "messages_vendor",
    "completions_vendor",
    "assistant_vendor",
    "custom",
    "none",
];

/// The index of `provider` in [`PROVIDERS`] (`none` for an unknown name).
pub(crate) fn provider_index(provider: &str) -> usize {
    PROVIDERS
        .iter()
        .position(|p| *p == provider)
        .unwrap_or(PROVIDERS.len() - 1)
}

/// Why an upstream attempt failed, as `gateway_upstream_errors_total`'s
/// `kind` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpstreamFailure {
    Connect = 0,
    Timeout = 1,
    Status4xx = 2,
    Status5xx = 3,
    RateLimited = 4,
    /// The answer began, then ended with an error.
    Stream = 5,
}

impl UpstreamFailure {
    pub(crate) const ALL: [UpstreamFailure; 6] = [
        UpstreamFailure::Connect,
        UpstreamFailure::Timeout,
        UpstreamFailure::Status4xx,
        UpstreamFailure::Status5xx,
        UpstreamFailure::RateLimited,
        UpstreamFailure::Stream,
    ];

    /// The kind of an upstream answer of `status` that is not a success.
    pub(crate) fn of_status(status: u16) -> UpstreamFailure {
        match status {
            429 => UpstreamFailure::RateLimited,
            500.. => UpstreamFailure::Status5xx,
            _ => UpstreamFailure::Status4xx,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            UpstreamFailure::Connect => "connect",
            UpstreamFailure::Timeout => "timeout",
            UpstreamFailure::Status4xx => "status_4xx",
            UpstreamFailure::Status5xx => "status_5xx",
            UpstreamFailure::RateLimited => "rate_limited",
            UpstreamFailure::Stream => "stream",
        }
    }
}

/// The caches of `gateway_cache_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheName {
    ApiKey = 0,
    Credentials = 1,
    Models = 2,
}

impl CacheName {
    pub(crate) const ALL: [CacheName; 3] =
        [CacheName::ApiKey, CacheName::Credentials, CacheName::Models];

    pub(crate) fn label(self) -> &'static str {
        match self {
            CacheName::ApiKey => "api_key",
            CacheName::Credentials => "credentials",
            CacheName::Models => "models",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_of_paths() {
        assert_eq!(
            Endpoint::of_path("/v1/chat/completions"),
            Some(Endpoint::ChatCompletions)
        );
        assert_eq!(Endpoint::of_path("/v1/messages"), Some(Endpoint::Messages));
        assert_eq!(
            Endpoint::of_path("/v1/messages/count_tokens"),
            Some(Endpoint::CountTokens)
        );
        assert_eq!(Endpoint::of_path("/v1/models"), Some(Endpoint::Models));
        assert_eq!(Endpoint::of_path("/v1/nope"), Some(Endpoint::Other));
        assert_eq!(Endpoint::of_path("/v1"), Some(Endpoint::Other));
        assert_eq!(Endpoint::of_path("/v10/models"), None);
        assert_eq!(Endpoint::of_path("/_ui/api/status"), None);
        assert_eq!(Endpoint::of_route("/messages"), Endpoint::Messages);
        assert_eq!(Endpoint::of_route("/v1/models"), Endpoint::Models);
        assert_eq!(
            Endpoint::of_route("/chat/completions"),
            Endpoint::ChatCompletions
        );
        assert!(Endpoint::of_route("/messages").is_chat());
        assert!(!Endpoint::of_route("/messages/count_tokens").is_chat());
        assert_eq!(Endpoint::of_path("/health"), None);
    }

    #[test]
    fn provider_labels() {
        assert_eq!(PROVIDERS[provider_index("custom")], "custom");
        assert_eq!(PROVIDERS[provider_index("primary")], "primary");
        assert_eq!(PROVIDERS[provider_index("something")], "none");
    }

    #[test]
    fn upstream_statuses() {
        assert_eq!(
            UpstreamFailure::of_status(429),
            UpstreamFailure::RateLimited
        );
        assert_eq!(UpstreamFailure::of_status(503), UpstreamFailure::Status5xx);
        assert_eq!(UpstreamFailure::of_status(404), UpstreamFailure::Status4xx);
        // The discriminants index the arrays in `ALL`'s order.
        assert!(UpstreamFailure::ALL
            .iter()
            .enumerate()
            .all(|(i, k)| *k as usize == i));
        assert!(CacheName::ALL
            .iter()
            .enumerate()
            .all(|(i, c)| *c as usize == i));
    }
}
