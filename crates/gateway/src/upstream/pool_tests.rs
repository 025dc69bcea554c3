#![expect(
    clippy::disallowed_methods,
    reason = "the tests serve their own upstreams"
)]

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use axum::routing::{get, post};
use axum::Router;
use hyper_util::client::legacy::connect::{Connected, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::*;
use crate::upstream::client::tests::upstream;

fn pool(idle_timeout: Duration) -> Pool<HttpConnector> {
    Pool::new(HttpConnector::new(), idle_timeout)
}

fn get_request(url: &str) -> Request<Body> {
    Request::get(url).body(Body::default()).unwrap()
}

/// The whole body; the lease goes back as `HttpClient`'s response gives it.
async fn read_to_end(response: Response<Incoming>, lease: Option<Lease>) -> Bytes {
    use http_body_util::BodyExt as _;
    let body = response.into_body().collect().await.unwrap().to_bytes();
    if let Some(lease) = lease {
        lease.give_back();
    }
    body
}

/// `GET url` on `pool`, its body read to the end and its connection given back.
async fn fetch<C: Connect>(pool: &Pool<C>, url: &str) -> Bytes {
    let (response, lease) = pool.send(get_request(url)).await.unwrap();
    read_to_end(response, lease).await
}

/// Eight `POST /echo` at once on `pool`, each answered with its own body.
async fn echo_concurrently<C: Connect>(pool: &Pool<C>, base: &str) {
    let sends = (0..8).map(|i| {
        let request = Request::post(format!("{base}/echo"))
            .body(Body::from(format!("body {i}")))
            .unwrap();
        async move {
            let (response, lease) = pool.send(request).await.unwrap();
            read_to_end(response, lease).await
        }
    });
    let bodies = futures::future::join_all(sends).await;
    for (i, body) in bodies.iter().enumerate() {
        assert_eq!(body, format!("body {i}").as_bytes());
    }
}

fn idle_http1(pool: &Pool<impl Clone>) -> usize {
    pool.shared.idle().http1.len()
}

#[tokio::test]
async fn a_connection_goes_back_only_when_its_body_was_read_to_the_end() {
    let (base, connections) = upstream().await;
    let pool = pool(Duration::from_secs(90));

    let (response, lease) = pool
        .send(get_request(&format!("{base}/big")))
        .await
        .unwrap();
    assert_eq!(idle_http1(&pool), 0, "lent while its body is read");
    assert_eq!(read_to_end(response, lease).await.len(), 10_000);
    assert_eq!(idle_http1(&pool), 1);

    // Served by the idle connection; its body dropped unread: not reused.
    let (response, lease) = pool
        .send(get_request(&format!("{base}/big")))
        .await
        .unwrap();
    drop((response, lease));
    assert_eq!(idle_http1(&pool), 0);
    assert_eq!(fetch(&pool, &format!("{base}/big")).await.len(), 10_000);
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn concurrent_requests_get_connections_of_their_own_and_all_go_back() {
    let (base, connections) = upstream().await;
    let pool = pool(Duration::from_secs(90));
    echo_concurrently(&pool, &base).await;
    let opened = connections.load(Ordering::SeqCst);
    assert_eq!(idle_http1(&pool), opened);
    // Sequential requests now find one waiting.
    for _ in 0..3 {
        fetch(&pool, &format!("{base}/big")).await;
    }
    assert_eq!(connections.load(Ordering::SeqCst), opened);
}

/// An upstream that answers one request per connection and then closes it,
/// without saying so (no `Connection: close`); it hands each request's head
/// to the test.
async fn closing_upstream() -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (heads, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = heads.send(String::from_utf8_lossy(&head).into_owned());
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                .await;
            // Dropped: closed.
        }
    });
    (format!("http://{addr}"), received)
}

#[tokio::test]
async fn a_kept_alive_connection_the_upstream_closed_is_not_used_again() {
    let (base, mut heads) = closing_upstream().await;
    let pool = pool(Duration::from_secs(90));
    for _ in 0..3 {
        assert_eq!(fetch(&pool, &format!("{base}/x")).await, "ok");
        // The connection notices the close while idle.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..3 {
        assert!(heads.recv().await.is_some());
    }
}

#[tokio::test]
async fn an_http1_request_goes_in_origin_form_with_its_host() {
    let (base, mut heads) = closing_upstream().await;
    let pool = pool(Duration::from_secs(90));
    let request = Request::post(format!("{base}/v1/chat?x=1"))
        .body(Body::from("{}"))
        .unwrap();
    let (response, lease) = pool.send(request).await.unwrap();
    read_to_end(response, lease).await;
    let head = heads.recv().await.unwrap();
    assert!(head.starts_with("POST /v1/chat?x=1 HTTP/1.1\r\n"), "{head}");
    let authority = base.strip_prefix("http://").unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("host: {authority}\r\n")),
        "{head}"
    );
}

#[test]
fn the_host_header_leaves_out_the_schemes_default_port() {
    let host = |url: &str| {
        Origin::of(&url.parse().unwrap())
            .unwrap()
            .host_header()
            .unwrap()
    };
    assert_eq!(host("https://example.com:443/x"), "example.com");
    assert_eq!(host("http://example.com:80/x"), "example.com");
    assert_eq!(host("https://example.com/x"), "example.com");
    assert_eq!(host("https://example.com:8443/x"), "example.com:8443");
    assert_eq!(host("http://10.0.0.1:9600/x"), "10.0.0.1:9600");
}

#[test]
fn a_request_sent_again_gets_its_absolute_url_back() {
    // From the origin form `prepare_http1` left, for the connection that
    // sends it again.
    let again = |origin: &str, target: &str| {
        let origin = Origin::of(&origin.parse().unwrap()).unwrap();
        let mut uri: Uri = target.parse().unwrap();
        origin.make_absolute(&mut uri);
        uri.to_string()
    };
    assert_eq!(
        again("https://example.com:8443", "/v1/chat?stream=1"),
        "https://example.com:8443/v1/chat?stream=1"
    );
    assert_eq!(again("http://10.0.0.1:9600", "/"), "http://10.0.0.1:9600/");
    // Absolute form (to an HTTP proxy) stays as it is.
    assert_eq!(
        again("http://10.0.0.1:9600", "http://other.example/x"),
        "http://other.example/x"
    );
}

#[tokio::test]
async fn connections_idle_past_the_timeout_are_dropped() {
    let (base, connections) = upstream().await;
    let pool = pool(Duration::from_millis(200));
    fetch(&pool, &format!("{base}/big")).await;
    assert_eq!(idle_http1(&pool), 1);
    // The reaper runs every quarter of the timeout.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(idle_http1(&pool), 0);
    assert!(!pool.shared.idle().reaper_running, "nothing left to reap");

    fetch(&pool, &format!("{base}/big")).await;
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

/// Plain TCP that says it negotiated HTTP/2 (as TLS with ALPN `h2` would):
/// HTTP/2 with prior knowledge, which `axum::serve` speaks.
#[derive(Clone)]
struct H2cConnector(Arc<AtomicUsize>);

struct H2c(TokioIo<TcpStream>);

impl tower::Service<Uri> for H2cConnector {
    type Response = H2c;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = std::io::Result<H2c>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let stream = TcpStream::connect(uri.authority().unwrap().as_str()).await?;
            Ok(H2c(TokioIo::new(stream)))
        })
    }
}

impl Connection for H2c {
    fn connected(&self) -> Connected {
        Connected::new().negotiated_h2()
    }
}

impl hyper::rt::Read for H2c {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for H2c {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[tokio::test]
async fn an_http2_connection_is_shared_by_every_request_to_its_origin() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app =
        Router::new()
            .route("/echo", post(|body: Bytes| async move { body }))
            .route(
                "/version",
                get(|request: Request<axum::body::Body>| async move {
                    format!("{:?}", request.version())
                }),
            );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let connections = Arc::new(AtomicUsize::new(0));
    let pool = Pool::new(H2cConnector(connections.clone()), Duration::from_secs(90));

    let (response, lease) = pool
        .send(get_request(&format!("{base}/version")))
        .await
        .unwrap();
    assert!(lease.is_none(), "an HTTP/2 connection is never lent");
    assert_eq!(read_to_end(response, lease).await, "HTTP/2.0");

    echo_concurrently(&pool, &base).await;
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}
