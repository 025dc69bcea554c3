//! The connector of a client with an outbound proxy ([`super::proxy`]):
//! each new connection asks the matcher once whether its target goes
//! through the proxy, then
//!
//! - direct (no proxy for it, `NO_PROXY`): the plain connector, as without a proxy;
//! - `https://` target: an HTTP CONNECT tunnel through the proxy (with
//!   `Proxy-Authorization` from the proxy URL's credentials); the TLS
//!   connector around this one then speaks TLS to the target inside it
//!   (SNI and certificate checked for the target's name, ALPN as usual);
//! - `http://` target: a plain connection to the proxy marked as proxied,
//!   so hyper sends the request in absolute form (what curl and reqwest
//!   do; proxies often refuse CONNECT to ports other than 443); the client
//!   adds `Proxy-Authorization` to such requests.
//!
//! For users' base URLs (`guard` set) the proxy would resolve the target
//! itself, out of the SSRF guard's sight, so the target is resolved by the
//! guard first (internal addresses refused as on a direct connection) and
//! the tunnel, for `http://` targets too, is opened to the checked address.
//!
//! The connection to the proxy itself uses the system resolver: the proxy
//! is the operator's, often at an internal address.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::str::FromStr as _;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::uri::Scheme;
use axum::http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower::Service;

use super::ssrf::GuardedResolver;

type BoxError = Box<dyn StdError + Send + Sync>;

/// A connection under way.
type Connecting = Pin<Box<dyn Future<Output = Result<ProxyStream, BoxError>> + Send>>;

/// See the module doc.
#[derive(Clone)]
pub(super) struct ProxyConnector<R> {
    direct: HttpConnector<R>,
    to_proxy: HttpConnector,
    matcher: Arc<Matcher>,
    guard: Option<GuardedResolver>,
    /// The bound on reaching the proxy and its CONNECT answer.
    connect_timeout: Duration,
}

impl<R> ProxyConnector<R> {
    /// `direct` and `to_proxy` come dressed (timeouts, keep-alive);
    /// `guard` is the SSRF guard's resolver for users' base URLs.
    pub(super) fn new(
        direct: HttpConnector<R>,
        to_proxy: HttpConnector,
        matcher: Arc<Matcher>,
        guard: Option<GuardedResolver>,
        connect_timeout: Duration,
    ) -> Self {
        ProxyConnector {
            direct,
            to_proxy,
            matcher,
            guard,
            connect_timeout,
        }
    }
}

/// How a proxied connection reaches its target.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// A plain connection to the proxy; requests in absolute form.
    AbsoluteForm,
    /// A CONNECT tunnel through the proxy.
    Tunnel,
}

/// The route to `target` through a proxy (`guarded`: a user's base URL).
pub(super) fn route(target: &Uri, guarded: bool) -> Route {
    if target.scheme() == Some(&Scheme::HTTP) && !guarded {
        Route::AbsoluteForm
    } else {
        Route::Tunnel
    }
}

impl<R> Service<Uri> for ProxyConnector<R>
where
    HttpConnector<R>: Service<Uri, Response = TokioIo<TcpStream>> + Clone + Send + 'static,
    <HttpConnector<R> as Service<Uri>>::Error: Into<BoxError>,
    <HttpConnector<R> as Service<Uri>>::Future: Send + 'static,
{
    type Response = ProxyStream;
    type Error = BoxError;
    type Future = Connecting;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.direct.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, target: Uri) -> Self::Future {
        let Some(proxy) = self.matcher.intercept(&target) else {
            let direct = self.direct.call(target);
            return Box::pin(async move {
                let io = direct.await.map_err(Into::into)?;
                Ok(ProxyStream::new(io, false))
            });
        };
        let mut to_proxy = self.to_proxy.clone();
        let guard = self.guard.clone();
        let limit = self.connect_timeout;
        Box::pin(async move {
            match route(&target, guard.is_some()) {
                Route::AbsoluteForm => {
                    let io = to_proxy
                        .call(proxy.uri().clone())
                        .await
                        .map_err(|e| proxy_failure(&proxy, None, &e))?;
                    Ok(ProxyStream::new(io, true))
                }
                Route::Tunnel => {
                    let through = tunnel_target(&target, guard).await?;
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), to_proxy);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    let io = match tokio::time::timeout(limit, tunnel.call(through.clone())).await {
                        Ok(Ok(io)) => io,
                        Ok(Err(e)) => return Err(proxy_failure(&proxy, Some(&through), &e).into()),
                        Err(_) => {
                            let late = io::Error::from(io::ErrorKind::TimedOut);
                            return Err(proxy_failure(&proxy, Some(&through), &late).into());
                        }
                    };
                    Ok(ProxyStream::new(io, false))
                }
            }
        })
    }
}

/// The `host:port` the CONNECT asks for: the target's name, or with a
/// guard, the address the guard found for it (refused when internal).
async fn tunnel_target(target: &Uri, guard: Option<GuardedResolver>) -> Result<Uri, BoxError> {
    let host = target.host().ok_or("the URL names no host")?;
    let port = target
        .port_u16()
        .unwrap_or(if target.scheme() == Some(&Scheme::HTTPS) {
            443
        } else {
            80
        });
    let authority = match guard {
        None => format!("{host}:{port}"),
        Some(mut resolver) => {
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let mut found = resolver.call(Name::from_str(bare)?).await?;
            let ip = found
                .next()
                .ok_or_else(|| format!("the host {host} has no address"))?
                .ip();
            SocketAddr::new(ip, port).to_string()
        }
    };
    Ok(authority.parse()?)
}

/// A failure reaching `proxy` or tunnelling to `through`, as one sentence
/// that names the proxy by host and port only (its URL's credentials never
/// appear); a timeout anywhere in `e` keeps its kind.
fn proxy_failure(
    proxy: &Intercept,
    through: Option<&Uri>,
    e: &(dyn StdError + 'static),
) -> io::Error {
    let at = proxy.uri().authority().map_or("(unknown)", |a| a.as_str());
    let is_timeout = |s: &(dyn StdError + 'static)| {
        s.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::TimedOut)
    };
    let mut detail = e.to_string();
    let mut timed_out = is_timeout(e);
    let mut source = e.source();
    while let Some(s) = source {
        timed_out |= is_timeout(s);
        detail.push_str(": ");
        detail.push_str(&s.to_string());
        source = s.source();
    }
    let message = match through {
        Some(target) => format!("through the outbound proxy {at} to {target}: {detail}"),
        None => format!("the outbound proxy {at}: {detail}"),
    };
    let kind = if timed_out {
        io::ErrorKind::TimedOut
    } else {
        io::ErrorKind::Other
    };
    io::Error::new(kind, message)
}

/// A connection from [`ProxyConnector`]: to the target, through a tunnel,
/// or to the proxy for requests in absolute form.
pub(super) struct ProxyStream {
    io: TokioIo<TcpStream>,
    absolute_form: bool,
}

impl ProxyStream {
    fn new(io: TokioIo<TcpStream>, absolute_form: bool) -> Self {
        ProxyStream { io, absolute_form }
    }
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        // `proxy(true)` makes hyper write absolute-form request targets.
        self.io.connected().proxy(self.absolute_form)
    }
}

impl Read for ProxyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl Write for ProxyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_targets_tunnel_and_http_targets_go_in_absolute_form_unless_guarded() {
        let https: Uri = "https://api.example.com/v1".parse().unwrap();
        let http: Uri = "http://api.example.com:8080/v1".parse().unwrap();
        assert_eq!(route(&https, false), Route::Tunnel);
        assert_eq!(route(&https, true), Route::Tunnel);
        assert_eq!(route(&http, false), Route::AbsoluteForm);
        assert_eq!(route(&http, true), Route::Tunnel);
    }

    #[tokio::test]
    async fn the_tunnel_asks_for_the_target_and_its_default_port() {
        let https: Uri = "https://api.example.com/v1".parse().unwrap();
        assert_eq!(
            tunnel_target(&https, None).await.unwrap().to_string(),
            "api.example.com:443"
        );
        let http: Uri = "http://[2001:db8::1]/v1".parse().unwrap();
        assert_eq!(
            tunnel_target(&http, None).await.unwrap().to_string(),
            "[2001:db8::1]:80"
        );
    }

    #[tokio::test]
    async fn a_guarded_tunnel_asks_for_the_checked_address() {
        let guard = Arc::new(super::super::ssrf::ConnectGuard::default());
        let resolver = GuardedResolver(guard.clone());
        let target: Uri = "https://localhost:8443/v1".parse().unwrap();
        let err = tunnel_target(&target, Some(resolver.clone()))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("internal address"), "{err}");
        guard.set_allow_private(true);
        let through = tunnel_target(&target, Some(resolver)).await.unwrap();
        let addr: SocketAddr = through.to_string().parse().unwrap();
        assert!(addr.ip().is_loopback() && addr.port() == 8443, "{through}");
    }
}
