#![expect(
    clippy::disallowed_methods,
    reason = "the test serves its own upstream"
)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use axum::Router;

use super::*;

/// A local upstream counting the TCP connections it accepted.
pub(in crate::upstream) async fn upstream() -> (String, Arc<AtomicUsize>) {
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = listener.tap_io(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let app = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route(
            "/stream",
            get(|| async {
                let chunks = futures::stream::iter(
                    ["one ", "two ", "three"].map(|c| Ok::<_, Infallible>(Bytes::from(c))),
                );
                Body::from_stream(chunks)
            }),
        )
        .route("/big", get(|| async { "x".repeat(10_000) }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), connections)
}

/// An address that refuses connections: a socket bound but never
/// listening, kept by the caller for as long as the address must stay
/// refused. (A listener bound and dropped frees its port, which the next
/// bind in this process or another test's could be handed.)
pub(super) fn refusing_address() -> (tokio::net::TcpSocket, std::net::SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let at = socket.local_addr().unwrap();
    (socket, at)
}

pub(super) fn uri(base: &str, path: &str) -> Uri {
    format!("{base}{path}").parse().unwrap()
}

#[tokio::test]
async fn sequential_requests_share_one_pooled_connection() {
    let (base, connections) = upstream().await;
    let client = HttpClient::direct(Duration::from_secs(5));
    for i in 0..5 {
        let body = Bytes::from(format!("hello {i}"));
        let resp = client
            .send(
                Method::POST,
                uri(&base, "/echo"),
                HeaderMap::new(),
                body.clone(),
            )
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.bytes(1024).await.unwrap(), body);
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_streamed_body_is_read_in_its_pieces() {
    let (base, _) = upstream().await;
    let client = HttpClient::direct(Duration::from_secs(5));
    let mut resp = client
        .send(
            Method::GET,
            uri(&base, "/stream"),
            HeaderMap::new(),
            Bytes::new(),
        )
        .await
        .unwrap();
    let mut text = Vec::new();
    while let Some(chunk) = resp.chunk().await.unwrap() {
        text.extend_from_slice(&chunk);
    }
    assert_eq!(text, b"one two three");
    assert!(
        resp.chunk().await.unwrap().is_none(),
        "the end stays the end"
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let (base, _) = upstream().await;
    let client = HttpClient::direct(Duration::from_secs(5));
    let resp = client
        .send(
            Method::GET,
            uri(&base, "/big"),
            HeaderMap::new(),
            Bytes::new(),
        )
        .await
        .unwrap();
    assert!(matches!(
        resp.bytes(100).await,
        Err(BodyError::TooLarge(100))
    ));
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let (_held, addr) = refusing_address();
    let client = HttpClient::direct(Duration::from_secs(5));
    let err = client
        .send(
            Method::GET,
            uri(&format!("http://{addr}"), "/"),
            HeaderMap::new(),
            Bytes::new(),
        )
        .await
        .unwrap_err();
    assert!(err.connect, "{err}");
    assert!(err.message.starts_with("connection failed"), "{err}");
}

#[tokio::test]
async fn a_guarded_client_refuses_a_name_at_an_internal_address_unless_allowed() {
    let (base, connections) = upstream().await;
    let by_name = base.replace("127.0.0.1", "localhost");
    let guard = Arc::new(crate::upstream::ssrf::ConnectGuard::default());
    let client = HttpClient::with_resolver(
        crate::upstream::ssrf::GuardedResolver(guard.clone()),
        Duration::from_secs(5),
        &ProxyConfig::none(),
    );
    let get = || {
        client.send(
            Method::GET,
            uri(&by_name, "/big"),
            HeaderMap::new(),
            Bytes::new(),
        )
    };
    let err = get().await.unwrap_err();
    assert!(err.connect, "{err}");
    assert!(err.message.contains("internal address"), "{err}");
    assert_eq!(connections.load(Ordering::SeqCst), 0);

    guard.set_allow_private(true);
    assert_eq!(get().await.unwrap().status(), StatusCode::OK);
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_response_dropped_before_its_body_ended_does_not_trip_the_next_request() {
    let (base, connections) = upstream().await;
    let client = HttpClient::direct(Duration::from_secs(5));
    let send = |path: &'static str| {
        let client = client.clone();
        let base = base.clone();
        async move {
            client
                .send(
                    Method::GET,
                    uri(&base, path),
                    HeaderMap::new(),
                    Bytes::new(),
                )
                .await
                .unwrap()
        }
    };
    // Its first piece read, the rest left behind.
    let mut partly_read = send("/stream").await;
    assert!(partly_read.chunk().await.unwrap().is_some());
    drop(partly_read);
    for _ in 0..3 {
        let resp = send("/big").await;
        assert_eq!(resp.bytes(100_000).await.unwrap().len(), 10_000);
    }
    // Whether hyper closed the abandoned connection or had read its body
    // to the end already, the three requests shared one.
    assert!(connections.load(Ordering::SeqCst) <= 2);
}
