//! Accepting connections and serving HTTP on them: one task per connection,
//! HTTP/1.1 and HTTP/2 (by preface), `TCP_NODELAY`, and the limits a slow
//! or hostile client meets.
//!
//! Why not `axum::serve`: it gives hyper no timer, so a client that sends a
//! request's headers a byte a minute holds its connection (and a task) for
//! ever. Here the headers of each request must arrive within
//! `header_read_timeout`; the body's pace is bounded by the body-limit step
//! (`body_read_timeout`). An idle kept-alive connection costs one parked task
//! and its buffers (docs/reliability.md has the measured figure).
//!
//! Shutdown: when `stop` fires, accepting ends and every connection is asked
//! to finish gracefully (HTTP/1.1: after the response in flight; HTTP/2:
//! GOAWAY); [`serve`] returns once all of them closed. The caller bounds
//! that wait (`shutdown_grace`).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::{Service, ServiceExt as _};

/// What a client gets before its connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    /// The whole head of a request (request line and headers) arrives within this.
    pub header_read_timeout: Duration,
}

/// Serve `service` on every connection `listener` accepts, until `stop`;
/// returns when the last connection has closed.
pub(crate) async fn serve<S>(
    listener: TcpListener,
    service: S,
    limits: ConnectionLimits,
    stop: CancellationToken,
) where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY: {e}");
        }
        let service = service
            .clone()
            .map_request(|request: hyper::Request<Incoming>| request.map(Body::new));
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(tcp), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        #[expect(
            clippy::disallowed_methods,
            reason = "one task per connection; the graceful-shutdown watcher waits for each"
        )]
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended with an error: {e}");
            }
        });
    }
    graceful.shutdown().await;
}
