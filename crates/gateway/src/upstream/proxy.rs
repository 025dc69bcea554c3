//! The operator's outbound proxy for the hot path's client
//! ([`super::client::HttpClient`]): `HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY` and `NO_PROXY` (and their lowercase forms, the uppercase one
//! first, as reqwest reads them), read once per process and checked at
//! start-up. hyper-util's [`Matcher`] decides per target (scheme, `NO_PROXY`
//! hosts, domain suffixes, `*`, addresses and CIDR ranges); the connector
//! ([`super::proxy_connector`]) asks it once per new connection.
//!
//! Only `http://` proxies are supported (TLS to the proxy and SOCKS are
//! refused at start-up): the values are never logged, as a proxy URL may
//! carry credentials.

use std::sync::{Arc, OnceLock};

use axum::http::Uri;
use hyper_util::client::proxy::matcher::Matcher;

/// The proxy variables, the uppercase name first (the one read when both are set).
pub const PROXY_VARIABLES: [(&str, &str); 4] = [
    ("HTTPS_PROXY", "https_proxy"),
    ("HTTP_PROXY", "http_proxy"),
    ("ALL_PROXY", "all_proxy"),
    ("NO_PROXY", "no_proxy"),
];

/// The raw values of the proxy variables (empty when unset).
#[derive(Debug, Clone, Default)]
pub struct ProxyVariables {
    /// The proxy for `https://` targets.
    pub https: String,
    /// The proxy for `http://` targets.
    pub http: String,
    /// The proxy for both, where the two above are empty.
    pub all: String,
    /// The hosts reached directly (comma-separated).
    pub no: String,
}

impl ProxyVariables {
    fn from_env() -> Self {
        let read = |(upper, lower): (&str, &str)| {
            std::env::var(upper)
                .or_else(|_| std::env::var(lower))
                .unwrap_or_default()
        };
        let [https, http, all, no] = PROXY_VARIABLES;
        ProxyVariables {
            https: read(https),
            http: read(http),
            all: read(all),
            no: read(no),
        }
    }
}

/// Which proxy, if any, each upstream connection goes through. Cheap to
/// clone; [`ProxyConfig::none`] (the default) connects everything directly.
#[derive(Debug, Clone, Default)]
pub struct ProxyConfig {
    matcher: Option<Arc<Matcher>>,
}

/// Why the proxy variables cannot be followed (names the variable, never its value).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProxyConfigError {
    #[error("{0} is not a proxy URL the upstream client can use (expected http://[user:password@]host:port)")]
    Unreadable(&'static str),
    #[error(
        "{0} names an https:// proxy (TLS to the proxy), which the upstream client does not \
         support; name the proxy with http:// (https targets still get TLS end to end \
         through the CONNECT tunnel)"
    )]
    TlsProxy(&'static str),
    #[error(
        "{0} names a SOCKS proxy, which the upstream client does not support; use an HTTP proxy"
    )]
    Socks(&'static str),
}

impl ProxyConfig {
    /// No proxy: every connection is direct.
    pub fn none() -> Self {
        ProxyConfig::default()
    }

    /// The environment's proxy variables, read once per process (later
    /// calls get the first reading).
    pub fn from_env() -> Result<Self, ProxyConfigError> {
        static FROM_ENV: OnceLock<Result<ProxyConfig, ProxyConfigError>> = OnceLock::new();
        FROM_ENV
            .get_or_init(|| ProxyConfig::from_variables(&ProxyVariables::from_env()))
            .clone()
    }

    /// The proxy `variables` name, checked.
    pub fn from_variables(variables: &ProxyVariables) -> Result<Self, ProxyConfigError> {
        for (value, name) in [
            (&variables.https, "HTTPS_PROXY"),
            (&variables.http, "HTTP_PROXY"),
            (&variables.all, "ALL_PROXY"),
        ] {
            check_proxy_url(name, value)?;
        }
        if variables.https.is_empty() && variables.http.is_empty() && variables.all.is_empty() {
            return Ok(ProxyConfig::none());
        }
        let matcher = Matcher::builder()
            .https(variables.https.as_str())
            .http(variables.http.as_str())
            .all(variables.all.as_str())
            .no(variables.no.as_str())
            .build();
        Ok(ProxyConfig {
            matcher: Some(Arc::new(matcher)),
        })
    }

    /// The matcher, when any proxy is configured.
    pub(super) fn matcher(&self) -> Option<&Arc<Matcher>> {
        self.matcher.as_ref()
    }
}

/// Refuse a proxy URL the connector cannot use (an empty value is unset).
fn check_proxy_url(name: &'static str, value: &str) -> Result<(), ProxyConfigError> {
    if value.trim().is_empty() {
        return Ok(());
    }
    let probe = Uri::from_static("http://probe.invalid/");
    let proxy = Matcher::builder().all(value).build().intercept(&probe);
    match proxy.as_ref().and_then(|p| p.uri().scheme_str()) {
        Some("http") => Ok(()),
        Some("https") => Err(ProxyConfigError::TlsProxy(name)),
        Some(s) if s.starts_with("socks") => Err(ProxyConfigError::Socks(name)),
        _ => Err(ProxyConfigError::Unreadable(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(https: &str, http: &str, all: &str, no: &str) -> ProxyConfig {
        ProxyConfig::from_variables(&ProxyVariables {
            https: https.into(),
            http: http.into(),
            all: all.into(),
            no: no.into(),
        })
        .unwrap()
    }

    fn proxy_for(config: &ProxyConfig, target: &str) -> Option<String> {
        let matcher = config.matcher()?;
        let hit = matcher.intercept(&target.parse().unwrap())?;
        Some(hit.uri().to_string())
    }

    #[test]
    fn nothing_set_means_no_matcher() {
        assert!(config("", "", "", "").matcher().is_none());
        assert!(config("", "", "", "example.com").matcher().is_none());
    }

    #[test]
    fn each_scheme_gets_its_proxy_and_all_fills_the_gaps() {
        let c = config("http://tls-side:3128", "", "http://any:8080", "");
        assert_eq!(
            proxy_for(&c, "https://api.example.com/v1").as_deref(),
            Some("http://tls-side:3128/")
        );
        assert_eq!(
            proxy_for(&c, "http://api.example.com/v1").as_deref(),
            Some("http://any:8080/")
        );
        let only_http = config("", "http://plain:3128", "", "");
        assert_eq!(proxy_for(&only_http, "https://api.example.com"), None);
    }

    #[test]
    fn no_proxy_names_hosts_suffixes_addresses_and_everything() {
        let c = config(
            "http://p:3128",
            "http://p:3128",
            "",
            "internal.corp, .svc.local,10.0.0.0/8,192.168.1.5",
        );
        for direct in [
            "https://internal.corp/x",
            "https://api.internal.corp/x",
            "https://a.svc.local/",
            "http://10.2.3.4:8080/",
            "http://192.168.1.5/",
        ] {
            assert_eq!(proxy_for(&c, direct), None, "{direct}");
        }
        for proxied in [
            "https://notinternal.corp/",
            "https://api.example.com/",
            "http://192.168.1.6/",
        ] {
            assert!(proxy_for(&c, proxied).is_some(), "{proxied}");
        }
        let star = config("http://p:3128", "", "", "*");
        assert_eq!(proxy_for(&star, "https://api.example.com/"), None);
    }

    #[test]
    fn credentials_leave_the_proxy_uri() {
        let c = config("http://user:s3cret@p:3128", "", "", "");
        let hit = c
            .matcher()
            .unwrap()
            .intercept(&"https://api.example.com/".parse().unwrap())
            .unwrap();
        assert_eq!(hit.uri().to_string(), "http://p:3128/");
        assert_eq!(hit.basic_auth().unwrap(), "Basic dXNlcjpzM2NyZXQ=");
    }

    #[test]
    fn unusable_proxies_are_refused_by_name_without_their_value() {
        let err = |https: &str| {
            ProxyConfig::from_variables(&ProxyVariables {
                https: https.into(),
                ..ProxyVariables::default()
            })
            .unwrap_err()
            .to_string()
        };
        let tls = err("https://user:s3cret@p:3128");
        assert!(
            tls.contains("HTTPS_PROXY") && tls.contains("https://"),
            "{tls}"
        );
        assert!(!tls.contains("s3cret"), "{tls}");
        assert!(err("socks5://p:1080").contains("SOCKS"));
        assert!(err("ftp://p").contains("not a proxy URL"));
        // A host and port alone mean an http:// proxy, as curl reads it.
        assert!(config("p:3128", "", "", "").matcher().is_some());
    }
}
