//! The hot path's HTTP client: hyper's connections driven directly through
//! a pool of our own ([`super::pool`]), with rustls (HTTP/2 where the
//! upstream offers it over TLS, by ALPN; HTTP/1.1 otherwise), `TCP_NODELAY`,
//! TCP keep-alive, the configured connect timeout and idle pooled
//! connections closed after 90 s.
//!
//! Why not reqwest here: reqwest parses every request's URL again in its
//! redirect layer and once more for the response, and clones the request
//! through its layers; on a request that costs the gateway about 245,000
//! instructions that was about 13,000 (docs/benchmarks.md). The gateway's
//! upstream calls need none of what those layers add (redirects, cookies,
//! decompression; the outbound proxy is a connector of their own, below):
//! a URL parsed once (`http::Uri`), headers, a body of bytes, and the
//! answer's body read chunk by chunk. reqwest stays on the
//! cold paths (OAuth, device flows, SSO), where its conveniences pay.
//!
//! Base URLs users typed are called through a client built with
//! [`HttpClient::with_resolver`] and the SSRF guard's resolver
//! ([`super::ssrf::GuardedResolver`]), so every connection's addresses are
//! checked when it is made.
//!
//! With an outbound proxy configured ([`super::proxy`]) the connector is
//! [`super::proxy_connector::ProxyConnector`], which decides per new
//! connection; without one the client is exactly the plain one.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::PROXY_AUTHORIZATION;
use axum::http::uri::Scheme;
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::dns::GaiResolver;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;

use super::pool::{Connect, Lease, Pool, PoolError};
use super::proxy::{ProxyConfig, ProxyConfigError};
use super::proxy_connector::ProxyConnector;
use super::ssrf::GuardedResolver;

/// Idle pooled connections are closed after this long.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keep-alive probes on upstream connections (long streams behind NAT).
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The pooled client; cheap to clone (a handle to one pool).
#[derive(Clone)]
pub struct HttpClient {
    inner: Inner,
}

/// The client with the system resolver, or with the SSRF guard's, each
/// direct or through the outbound proxy (a different connector type each,
/// hence four variants).
#[derive(Clone)]
enum Inner {
    System(Pooled<HttpConnector>),
    Guarded(Pooled<HttpConnector<GuardedResolver>>),
    /// The matcher tells which `http://` requests go to the proxy in
    /// absolute form and so carry its credentials.
    Proxied(Pooled<ProxyConnector<GaiResolver>>, Arc<Matcher>),
    /// Users' base URLs always tunnel (the connector's doc says why), so
    /// no request carries the proxy's credentials.
    GuardedProxied(Pooled<ProxyConnector<GuardedResolver>>),
}

type Pooled<C> = Pool<HttpsConnector<C>>;

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpClient")
    }
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ClientError {
    /// A short description without the URL's query.
    pub message: String,
    /// The connection could not be made (refused, DNS, TLS, connect timeout).
    pub connect: bool,
    /// A time limit ran out (the connect timeout).
    pub timeout: bool,
}

impl HttpClient {
    /// A client whose connections are made within `connect_timeout`,
    /// through the outbound proxy the environment names (read once per
    /// process, [`ProxyConfig::from_env`]).
    pub fn new(connect_timeout: Duration) -> Result<Self, ProxyConfigError> {
        Ok(Self::with_proxy(connect_timeout, &ProxyConfig::from_env()?))
    }

    /// The client with no proxy: every connection direct.
    pub fn direct(connect_timeout: Duration) -> Self {
        Self::with_proxy(connect_timeout, &ProxyConfig::none())
    }

    /// The client through `proxy`'s outbound proxy.
    pub fn with_proxy(connect_timeout: Duration, proxy: &ProxyConfig) -> Self {
        let http = dressed(HttpConnector::new(), connect_timeout);
        let inner = match proxy.matcher() {
            None => Inner::System(pooled(http)),
            Some(matcher) => {
                let to_proxy = dressed(HttpConnector::new(), connect_timeout);
                let connector =
                    ProxyConnector::new(http, to_proxy, matcher.clone(), None, connect_timeout);
                Inner::Proxied(pooled(connector), matcher.clone())
            }
        };
        HttpClient { inner }
    }

    /// The same client with every host name resolved by `resolver` (the
    /// SSRF guard's, which refuses internal addresses); through `proxy`,
    /// the guard resolves the target before the tunnel is asked for.
    pub fn with_resolver(
        resolver: GuardedResolver,
        connect_timeout: Duration,
        proxy: &ProxyConfig,
    ) -> Self {
        let http = dressed(
            HttpConnector::new_with_resolver(resolver.clone()),
            connect_timeout,
        );
        let inner = match proxy.matcher() {
            None => Inner::Guarded(pooled(http)),
            Some(matcher) => {
                let to_proxy = dressed(HttpConnector::new(), connect_timeout);
                let connector = ProxyConnector::new(
                    http,
                    to_proxy,
                    matcher.clone(),
                    Some(resolver),
                    connect_timeout,
                );
                Inner::GuardedProxied(pooled(connector))
            }
        };
        HttpClient { inner }
    }

    /// Send `method url` with `headers` and `body`; the response's head
    /// arrives, its body is read by the caller.
    pub async fn send(
        &self,
        method: Method,
        url: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response, ClientError> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = url;
        *request.headers_mut() = headers;
        let sent = match &self.inner {
            Inner::System(pool) => pool.send(request).await,
            Inner::Guarded(pool) => pool.send(request).await,
            Inner::Proxied(pool, matcher) => {
                add_proxy_credentials(&mut request, matcher);
                pool.send(request).await
            }
            Inner::GuardedProxied(pool) => pool.send(request).await,
        };
        match sent {
            // Only a proxy answers 407 (to a request it got in absolute
            // form): the upstream was not reached.
            Ok((response, _))
                if matches!(self.inner, Inner::Proxied(..))
                    && response.status() == StatusCode::PROXY_AUTHENTICATION_REQUIRED =>
            {
                Err(ClientError {
                    message: "connection failed: the outbound proxy refused the request \
                              (407 Proxy Authentication Required)"
                        .to_owned(),
                    connect: true,
                    timeout: false,
                })
            }
            Ok((response, lease)) => {
                let (head, body) = response.into_parts();
                Ok(Response {
                    status: head.status,
                    headers: head.headers,
                    body,
                    lease,
                })
            }
            Err(e) => Err(describe(&e)),
        }
    }
}

/// `http` dressed as the module doc says.
fn dressed<R>(mut http: HttpConnector<R>, connect_timeout: Duration) -> HttpConnector<R> {
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_keepalive(Some(TCP_KEEPALIVE));
    http.set_connect_timeout(Some(connect_timeout));
    http
}

/// The pooled client over `connector`, with TLS as the module doc says.
fn pooled<C: Connect>(connector: C) -> Pooled<C> {
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(connector);
    Pool::new(https, POOL_IDLE_TIMEOUT)
}

/// An `http://` request the proxy gets in absolute form carries the proxy
/// URL's credentials (a tunnelled one does not: they went in its CONNECT).
fn add_proxy_credentials(request: &mut Request<Full<Bytes>>, matcher: &Matcher) {
    if request.uri().scheme() != Some(&Scheme::HTTP) {
        return;
    }
    if let Some(proxy) = matcher.intercept(request.uri()) {
        if let Some(auth) = proxy.basic_auth() {
            request
                .headers_mut()
                .insert(PROXY_AUTHORIZATION, auth.clone());
        }
    }
}

/// A response whose head has arrived.
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Incoming,
    /// Its HTTP/1 connection, back to the pool once the body is read to
    /// its end, or when the response is dropped.
    lease: Option<Lease>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

impl Drop for Response {
    /// The connection goes back to the pool even when its body was not
    /// read to the end (the caller had what it needed, or gave up): hyper
    /// then closes it, and the next request that finds it waits for it to
    /// be either ready or closed ([`super::pool`]), as hyper-util's pool did.
    fn drop(&mut self) {
        self.give_back();
    }
}

impl Response {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The next piece of the body; `None` at its end. Trailers are skipped.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, hyper::Error> {
        loop {
            match self.body.frame().await {
                None => {
                    self.give_back();
                    return Ok(None);
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            return Ok(Some(data));
                        }
                    }
                }
            }
        }
    }

    /// The connection goes back to the pool (the body has ended).
    fn give_back(&mut self) {
        if let Some(lease) = self.lease.take() {
            lease.give_back();
        }
    }

    /// The whole body, refused past `limit` bytes.
    pub async fn bytes(mut self, limit: usize) -> Result<Bytes, BodyError> {
        let mut all = BytesMut::new();
        while let Some(chunk) = self.chunk().await.map_err(BodyError::Read)? {
            if all.len() + chunk.len() > limit {
                return Err(BodyError::TooLarge(limit));
            }
            all.extend_from_slice(&chunk);
        }
        Ok(all.freeze())
    }
}

/// Why a whole body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("reading the body failed: {0}")]
    Read(hyper::Error),
    #[error("the body is larger than {0} bytes")]
    TooLarge(usize),
}

/// A pool error as a short sentence (the innermost cause says most).
fn describe(e: &PoolError) -> ClientError {
    let (connect, top): (bool, &(dyn std::error::Error + 'static)) = match e {
        PoolError::Connect(e) => (true, e.as_ref()),
        PoolError::Request(e) => (false, e),
        PoolError::NoAuthority => {
            return ClientError {
                message: "request failed: the URL names no host".to_owned(),
                connect: false,
                timeout: false,
            }
        }
    };
    // The loop starts at `top`, so `detail` is set at least once.
    let mut detail = String::new();
    let mut timeout = false;
    let mut source = Some(top);
    while let Some(s) = source {
        detail = s.to_string();
        timeout |= s
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
        source = s.source();
    }
    let kind = if connect {
        "connection failed"
    } else {
        "request failed"
    };
    ClientError {
        message: format!("{kind}: {detail}"),
        connect,
        timeout,
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
pub(super) mod tests;

#[cfg(test)]
#[path = "client_proxy_tests.rs"]
mod proxy_tests;
