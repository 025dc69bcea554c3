//! The guard on user-supplied URLs (interfaces-full.md 2.3): a base URL a
//! user gives for their own provider account must be `http` or `https`,
//! carry no credentials, and name a host whose every address is public:
//! loopback, private (RFC 1918, RFC 4193), link-local (the cloud metadata
//! address among them), CGNAT, unspecified, broadcast, multicast and
//! benchmarking addresses are refused, unless the administrator allows
//! private networks (`custom_allow_private_networks`). Admin-set endpoints
//! are not user input and are not checked.
//!
//! Checked twice: when the URL is saved ([`check_user_url`]) and again
//! whenever the gateway connects to it ([`ConnectGuard`]): a host may
//! resolve to a public address when saved and to an internal one later (DNS
//! rebinding), and the administrator may withdraw the permission.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::Name;

/// The connect-time half of the guard: the DNS resolver of the client that
/// calls user-supplied URLs refuses internal addresses (unless allowed),
/// and [`ConnectGuard::check_literal`] does the same for hosts given as
/// addresses, which no resolver sees.
#[derive(Debug, Default)]
pub struct ConnectGuard {
    allow_private: AtomicBool,
}

impl ConnectGuard {
    /// Follow the administrator's `custom_allow_private_networks`.
    pub fn set_allow_private(&self, allow: bool) {
        self.allow_private.store(allow, Ordering::Relaxed);
    }

    pub fn allows_private(&self) -> bool {
        self.allow_private.load(Ordering::Relaxed)
    }

    /// Refuse `literal`, the address a base URL names as its host (found
    /// once by [`literal_host`]), when it is internal and not allowed.
    pub fn check_literal(&self, literal: Option<IpAddr>) -> Result<(), String> {
        match literal {
            Some(ip) if !self.allows_private() && is_internal(ip) => {
                Err(internal_refusal(&ip.to_string(), ip))
            }
            _ => Ok(()),
        }
    }
}

/// The address `base` names as its host, when it names one (no resolver
/// sees such a host, so [`ConnectGuard::check_literal`] checks it).
pub fn literal_host(base: &str) -> Option<IpAddr> {
    match url::Url::parse(base).ok()?.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

fn internal_refusal(host: &str, ip: IpAddr) -> String {
    format!(
        "the host {host} is at {ip}, an internal address; only public addresses are allowed \
         for a user's base URL (an administrator can allow private networks: \
         custom_allow_private_networks)"
    )
}

/// The resolver of the client for user-supplied URLs
/// ([`super::client::HttpClient::with_resolver`]): the system's lookup,
/// refused when any address found is internal and not allowed. The
/// connector puts the URL's port on the addresses.
#[derive(Debug, Clone)]
pub struct GuardedResolver(pub Arc<ConnectGuard>);

/// A lookup under way (connections are pooled, so lookups are rare).
type Lookup =
    Pin<Box<dyn Future<Output = Result<std::vec::IntoIter<SocketAddr>, ResolveError>> + Send>>;

/// Why a name was not resolved: the lookup failed or found an internal address.
type ResolveError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = ResolveError;
    type Future = Lookup;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow = self.0.allows_private();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow {
                if let Some(bad) = found.iter().find(|a| is_internal(a.ip())) {
                    return Err(internal_refusal(&host, bad.ip()).into());
                }
            }
            Ok(found.into_iter())
        })
    }
}

/// Check `raw` as a user's base URL; the URL as it will be used (no
/// trailing slash), or why it is refused.
pub async fn check_user_url(raw: &str, allow_private: bool) -> Result<String, String> {
    let url = url::Url::parse(raw.trim()).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("the scheme must be https or http".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in the URL are not allowed; use the api_key field".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("a base URL has no query or fragment".into());
    }
    let host = url.host_str().ok_or("the URL names no host")?.to_owned();
    let port = url.port_or_known_default().ok_or("the URL has no port")?;
    if !allow_private {
        let host_for_lookup = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let addresses: Vec<IpAddr> = tokio::net::lookup_host((host_for_lookup.as_str(), port))
            .await
            .map_err(|e| format!("the host {host} does not resolve: {e}"))?
            .map(|a| a.ip())
            .collect();
        if addresses.is_empty() {
            return Err(format!("the host {host} does not resolve"));
        }
        if let Some(ip) = addresses.iter().find(|ip| is_internal(**ip)) {
            return Err(format!(
                "the host {host} resolves to {ip}, an internal address; only public addresses are allowed"
            ));
        }
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Whether `ip` is not a public unicast address.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_internal_v4(v4),
            None => is_internal_v6(v6),
        },
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, _, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 198 && (18..20).contains(&b)) // benchmarking 198.18.0.0/15
        || a >= 240 // reserved
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local fc00::/7 (RFC 4193)
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || ip.to_ipv4().is_some_and(|v4| ip.segments()[..6] == [0; 6] && is_internal_v4(v4))
    // IPv4-compatible
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["1.1.1.1", "8.8.8.8", "100.128.0.1", "2606:4700::1111"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn urls_to_internal_hosts_are_refused_unless_allowed() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "https://localhost/v1",
            "http://[::1]:9000",
            "http://169.254.169.254/latest",
            "http://10.0.0.5/v1",
        ] {
            let err = check_user_url(url, false).await.unwrap_err();
            assert!(err.contains("internal address"), "{url}: {err}");
            assert!(check_user_url(url, true).await.is_ok(), "{url}");
        }
        for (url, why) in [
            ("ftp://example.com", "scheme"),
            ("https://user:pw@example.com", "credentials"),
            ("https://example.com/v1?key=1", "query"),
            ("not a url", "not a URL"),
        ] {
            let err = check_user_url(url, true).await.unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
        assert_eq!(
            check_user_url("http://127.0.0.1:8080/v1/", true)
                .await
                .unwrap(),
            "http://127.0.0.1:8080/v1"
        );
    }
}
