//! The connection pool of the hot path's client ([`super::client::HttpClient`]),
//! over hyper's connection handshakes.
//!
//! Why our own: hyper-util's pooled client hashed its pool key (scheme and
//! authority) with SipHash twice a request, boxed its checkout and connect
//! futures, formatted a `Host` header, and spawned a task per HTTP/1
//! request that put the connection back once the body was read: some
//! 5,000 instructions and a wake-up a request (docs/benchmarks.md, round
//! ten). Here a request finds its connection by a short scan of the idle
//! list, and the connection goes back in the caller's own task
//! ([`Lease::give_back`]: the client's response gives it back at the
//! body's end, or when dropped).
//!
//! - HTTP/1.1: one request at a time per connection. Idle connections wait
//!   in a list, most recent last; one that is closed, or idle longer than
//!   the idle timeout, is dropped when met. A connection given back before
//!   its body ended is closed by hyper; the request that finds it first
//!   waits until it is either ready or closed, and takes the next one if
//!   closed.
//! - HTTP/2 (negotiated by ALPN over TLS): one connection per origin is
//!   shared by every request; it leaves the pool when closed or unused for
//!   the idle timeout.
//! - A request refused by a reused connection before any byte of it was
//!   written (the server closed the kept-alive connection meanwhile) is sent
//!   again on another connection, as hyper-util did.
//! - A reaper task, started when the first connection goes idle and ended
//!   when none is left, drops connections idle past the timeout.

use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::http::header::HOST;
use axum::http::uri::{Authority, PathAndQuery, Scheme};
use axum::http::{HeaderValue, Request, Response, Uri};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::client::legacy::connect::Connection;
use hyper_util::rt::TokioExecutor;

/// The request body the pool sends.
pub(super) type Body = Full<Bytes>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connection hyper can drive, that tells whether TLS negotiated HTTP/2.
pub(super) trait Io:
    Connection + hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static
{
}

impl<T: Connection + hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static> Io for T {}

/// What the pool connects with: a `tower::Service<Uri>` making [`Io`]
/// connections. Named once here for the pool, its tests and the client; the
/// blanket impl covers every such connector (the plain and proxy
/// connectors, and the TLS connector over either).
pub(super) trait Connect:
    tower::Service<Uri, Response: Io, Future: Send + 'static, Error: Into<BoxError>>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<C> Connect for C where
    C: tower::Service<Uri, Response: Io, Future: Send + 'static, Error: Into<BoxError>>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Where a connection goes: the scheme and authority of a request's URL.
#[derive(Clone, PartialEq, Eq)]
struct Origin {
    https: bool,
    authority: Authority,
}

impl Origin {
    fn of(uri: &Uri) -> Option<Origin> {
        Some(Origin {
            https: uri.scheme() == Some(&Scheme::HTTPS),
            authority: uri.authority()?.clone(),
        })
    }

    /// The URI the connector is called with.
    fn uri(&self) -> Result<Uri, axum::http::Error> {
        self.with_path(PathAndQuery::from_static("/"))
    }

    /// The absolute URI of `path` at this origin.
    fn with_path(&self, path: PathAndQuery) -> Result<Uri, axum::http::Error> {
        Uri::builder()
            .scheme(if self.https {
                Scheme::HTTPS
            } else {
                Scheme::HTTP
            })
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
    }

    /// Turn `uri` back into absolute form after [`prepare_http1`] made it
    /// origin form (for a request sent again on another connection).
    fn make_absolute(&self, uri: &mut Uri) {
        if uri.scheme().is_some() {
            return;
        }
        let path = uri
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"));
        // It cannot fail (its parts come from a valid URI); if it did, the
        // request would keep its origin form.
        if let Ok(absolute) = self.with_path(path) {
            *uri = absolute;
        }
    }

    /// The `Host` header of an HTTP/1 request: the host, and the port when
    /// it is not the scheme's default (as hyper-util wrote it).
    fn host_header(&self) -> Option<HeaderValue> {
        let host = self.authority.host();
        let default_port = if self.https { 443 } else { 80 };
        match self.authority.port_u16() {
            Some(port) if port != default_port => {
                HeaderValue::from_str(&format!("{host}:{port}")).ok()
            }
            _ => HeaderValue::from_str(host).ok(),
        }
    }
}

/// An HTTP/1 connection that is not serving a request.
struct Http1Conn {
    origin: Origin,
    sender: http1::SendRequest<Body>,
    /// Made to an HTTP proxy for an `http://` target: requests go in
    /// absolute form.
    proxied: bool,
    host: Option<HeaderValue>,
    /// Since when it waits (set when it goes back to the pool).
    since: Instant,
}

/// An HTTP/2 connection, shared by every request to its origin.
struct Http2Conn {
    origin: Origin,
    sender: http2::SendRequest<Body>,
    last_used: Instant,
}

#[derive(Default)]
struct Idle {
    http1: Vec<Http1Conn>,
    http2: Vec<Http2Conn>,
    reaper_running: bool,
}

struct Shared {
    idle: Mutex<Idle>,
    idle_timeout: Duration,
}

impl Shared {
    fn idle(&self) -> MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a request got no response from the pool.
#[derive(Debug)]
pub(super) enum PoolError {
    /// The connection could not be made (connector or handshake).
    Connect(BoxError),
    /// The request failed on its connection.
    Request(hyper::Error),
    /// The URL has no authority to connect to.
    NoAuthority,
}

/// The pool over `connector` (a `tower::Service<Uri>` making connections).
#[derive(Clone)]
pub(super) struct Pool<C> {
    connector: C,
    shared: Arc<Shared>,
}

/// A checked-out connection.
enum Conn {
    Http1 {
        conn: Http1Conn,
        reused: bool,
    },
    Http2 {
        sender: http2::SendRequest<Body>,
        reused: bool,
    },
}

/// The HTTP/1 connection of a response whose body is being read: it goes
/// back to the pool when the body has been read to its end.
pub(super) struct Lease {
    shared: Weak<Shared>,
    conn: Http1Conn,
}

impl Lease {
    /// The body was read to its end: the connection may serve another request.
    pub(super) fn give_back(mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        self.conn.since = Instant::now();
        let mut idle = shared.idle();
        idle.http1.push(self.conn);
        start_reaper(&shared, &mut idle);
    }
}

impl<C: Connect> Pool<C> {
    pub(super) fn new(connector: C, idle_timeout: Duration) -> Self {
        Pool {
            connector,
            shared: Arc::new(Shared {
                idle: Mutex::new(Idle::default()),
                idle_timeout,
            }),
        }
    }

    /// Send `request` (its URI absolute) on a pooled or new connection. An
    /// HTTP/1 response comes with the [`Lease`] of its connection.
    pub(super) async fn send(
        &self,
        mut request: Request<Body>,
    ) -> Result<(Response<Incoming>, Option<Lease>), PoolError> {
        let origin = Origin::of(request.uri()).ok_or(PoolError::NoAuthority)?;
        loop {
            let conn = match self.take_idle(&origin) {
                Some(conn) => conn,
                // Boxed: the connector's and handshakes' futures would
                // otherwise make every request's future (which the pipeline
                // moves) kilobytes larger, for the rare request that connects.
                None => Box::pin(self.connect(&origin)).await?,
            };
            match conn {
                Conn::Http2 { mut sender, reused } => {
                    match sender.try_send_request(request).await {
                        Ok(response) => return Ok((response, None)),
                        Err(mut e) => match e.take_message() {
                            // The shared connection closed before the
                            // request went out: on a new one (dropping it
                            // from the pool keeps this loop finite).
                            Some(unsent) if reused => {
                                self.shared.idle().http2.retain(|c| c.origin != origin);
                                request = unsent;
                            }
                            _ => return Err(PoolError::Request(e.into_error())),
                        },
                    }
                }
                Conn::Http1 { mut conn, reused } => {
                    if let Err(e) = poll_fn(|cx| conn.sender.poll_ready(cx)).await {
                        if reused {
                            // Closed while idle: the next one.
                            continue;
                        }
                        return Err(PoolError::Connect(e.into()));
                    }
                    prepare_http1(&mut request, &conn);
                    match conn.sender.try_send_request(request).await {
                        Ok(response) => {
                            let lease = Lease {
                                shared: Arc::downgrade(&self.shared),
                                conn,
                            };
                            return Ok((response, Some(lease)));
                        }
                        Err(mut e) => match e.take_message() {
                            // Not a byte of it was written: a kept-alive
                            // connection the server had closed. Again,
                            // on another one.
                            Some(mut unsent) if reused => {
                                origin.make_absolute(unsent.uri_mut());
                                request = unsent;
                            }
                            _ => return Err(PoolError::Request(e.into_error())),
                        },
                    }
                }
            }
        }
    }

    /// An idle connection to `origin` that is still open, if any.
    fn take_idle(&self, origin: &Origin) -> Option<Conn> {
        let mut idle = self.shared.idle();
        let timeout = self.shared.idle_timeout;
        idle.http2.retain(|c| !c.sender.is_closed());
        if let Some(shared) = idle.http2.iter_mut().rev().find(|c| c.origin == *origin) {
            shared.last_used = Instant::now();
            return Some(Conn::Http2 {
                sender: shared.sender.clone(),
                reused: true,
            });
        }
        while let Some(at) = idle.http1.iter().rposition(|c| c.origin == *origin) {
            let conn = idle.http1.swap_remove(at);
            if !conn.sender.is_closed() && conn.since.elapsed() < timeout {
                return Some(Conn::Http1 { conn, reused: true });
            }
        }
        None
    }

    /// A new connection to `origin`, HTTP/2 if TLS negotiated it.
    async fn connect(&self, origin: &Origin) -> Result<Conn, PoolError> {
        let mut connector = self.connector.clone();
        poll_fn(|cx| connector.poll_ready(cx))
            .await
            .map_err(|e| PoolError::Connect(e.into()))?;
        let uri = origin.uri().map_err(|e| PoolError::Connect(e.into()))?;
        let io = connector
            .call(uri)
            .await
            .map_err(|e| PoolError::Connect(e.into()))?;
        let connected = io.connected();
        if connected.is_negotiated_h2() {
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                .handshake(io)
                .await
                .map_err(|e| PoolError::Connect(e.into()))?;
            spawn_connection(connection);
            let mut idle = self.shared.idle();
            idle.http2.push(Http2Conn {
                origin: origin.clone(),
                sender: sender.clone(),
                last_used: Instant::now(),
            });
            start_reaper(&self.shared, &mut idle);
            return Ok(Conn::Http2 {
                sender,
                reused: false,
            });
        }
        let (sender, connection) = http1::Builder::new()
            .handshake(io)
            .await
            .map_err(|e| PoolError::Connect(e.into()))?;
        spawn_connection(connection);
        Ok(Conn::Http1 {
            conn: Http1Conn {
                origin: origin.clone(),
                sender,
                proxied: connected.is_proxied(),
                host: origin.host_header(),
                since: Instant::now(),
            },
            reused: false,
        })
    }
}

/// An HTTP/1 request's `Host` header and request target: origin form
/// (`/path?query`), or absolute form to an HTTP proxy for an `http://` URL.
fn prepare_http1(request: &mut Request<Body>, conn: &Http1Conn) {
    if let Some(host) = &conn.host {
        if !request.headers().contains_key(HOST) {
            request.headers_mut().insert(HOST, host.clone());
        }
    }
    if conn.proxied && !conn.origin.https {
        return;
    }
    let uri = request.uri_mut();
    *uri = match uri.path_and_query() {
        Some(path) if path.as_str() != "/" => Uri::from(path.clone()),
        _ => Uri::default(),
    };
}

/// Start the task that drops connections idle past the timeout, unless it runs.
fn start_reaper(shared: &Arc<Shared>, idle: &mut Idle) {
    if idle.reaper_running {
        return;
    }
    idle.reaper_running = true;
    #[expect(
        clippy::disallowed_methods,
        reason = "the reaper holds the pool weakly and ends within a quarter of the idle \
                  timeout once the pool is gone or empty; nothing to wait for at shutdown"
    )]
    tokio::spawn(reap(Arc::downgrade(shared)));
}

/// The task that drives one connection; it ends when the connection closes.
fn spawn_connection<F>(connection: F)
where
    F: std::future::Future + Send + 'static,
    F::Output: Send,
{
    #[expect(
        clippy::disallowed_methods,
        reason = "a connection's task ends with its connection (closed by the upstream, \
                  by the idle timeout, or when its last handle is dropped at shutdown), \
                  as hyper-util's did"
    )]
    tokio::spawn(connection);
}

/// Every quarter of the idle timeout, drop what has been idle longer than
/// it or was closed; end when nothing is left (or the pool is gone).
async fn reap(shared: Weak<Shared>) {
    loop {
        let period = match shared.upgrade() {
            Some(shared) => shared.idle_timeout / 4,
            None => return,
        };
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let timeout = shared.idle_timeout;
        let mut idle = shared.idle();
        idle.http1
            .retain(|c| !c.sender.is_closed() && c.since.elapsed() < timeout);
        idle.http2
            .retain(|c| !c.sender.is_closed() && c.last_used.elapsed() < timeout);
        if idle.http1.is_empty() && idle.http2.is_empty() {
            idle.reaper_running = false;
            return;
        }
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
