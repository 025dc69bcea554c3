//! The client through an outbound proxy: a tiny real proxy (CONNECT
//! tunnels and absolute-form forwarding, optional credentials, or a flat
//! 407) in front of the local upstream of `client_tests`.
#![expect(
    clippy::disallowed_methods,
    reason = "the test serves its own proxy and upstream"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::tests::{refusing_address, upstream, uri};
use super::*;
use crate::upstream::proxy::ProxyVariables;
use crate::upstream::ssrf::{ConnectGuard, GuardedResolver};

/// `user:s3cret`, as the proxy expects it.
const CREDENTIALS: &str = "Basic dXNlcjpzM2NyZXQ=";

/// What the proxy does with a request.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Forward, asking for [`CREDENTIALS`] when `Some`.
    Forward(Option<&'static str>),
    /// Answer 407 to everything.
    Refuse,
}

/// What the proxy saw: each connection's request line and whether it
/// carried the expected credentials.
#[derive(Default)]
struct Seen {
    heads: Mutex<Vec<(String, bool)>>,
    connections: AtomicUsize,
}

impl Seen {
    fn lines(&self) -> Vec<String> {
        self.heads
            .lock()
            .unwrap()
            .iter()
            .map(|(l, _)| l.clone())
            .collect()
    }
}

async fn proxy(behaviour: Behaviour) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Seen::default());
    let recorded = seen.clone();
    tokio::spawn(async move {
        loop {
            let (conn, _) = listener.accept().await.unwrap();
            recorded.connections.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(conn, behaviour, recorded.clone()));
        }
    });
    (addr, seen)
}

/// One client connection: read its first head, answer or forward it, then
/// splice bytes both ways.
async fn serve(mut client: TcpStream, behaviour: Behaviour, seen: Arc<Seen>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte).await.unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let line = text.lines().next().unwrap_or_default().to_owned();
    let authorized = |expected: &str| {
        text.lines()
            .any(|l| l.eq_ignore_ascii_case(&format!("proxy-authorization: {expected}")))
    };
    let has_credentials = authorized(CREDENTIALS);
    seen.heads
        .lock()
        .unwrap()
        .push((line.clone(), has_credentials));
    let allowed = match behaviour {
        Behaviour::Refuse => false,
        Behaviour::Forward(None) => true,
        Behaviour::Forward(Some(expected)) => authorized(expected),
    };
    if !allowed {
        let _ = client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    }
    let mut parts = line.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut upstream = if method == "CONNECT" {
        let Ok(upstream) = TcpStream::connect(target).await else {
            let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
            return;
        };
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .unwrap();
        upstream
    } else {
        // Absolute form: the origin server accepts it as it is.
        let authority = target
            .parse::<Uri>()
            .unwrap()
            .authority()
            .unwrap()
            .to_string();
        let mut upstream = TcpStream::connect(authority).await.unwrap();
        upstream.write_all(&head).await.unwrap();
        upstream
    };
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

fn proxies(https: &str, http: &str, no: &str) -> ProxyConfig {
    ProxyConfig::from_variables(&ProxyVariables {
        https: https.into(),
        http: http.into(),
        all: String::new(),
        no: no.into(),
    })
    .unwrap()
}

fn timeout() -> Duration {
    Duration::from_secs(5)
}

async fn echo(client: &HttpClient, base: &str, body: &'static str) -> Result<Bytes, ClientError> {
    let resp = client
        .send(
            Method::POST,
            uri(base, "/echo"),
            HeaderMap::new(),
            Bytes::from(body),
        )
        .await?;
    assert_eq!(resp.status(), StatusCode::OK);
    Ok(resp.bytes(1024).await.unwrap())
}

#[tokio::test]
async fn an_http_target_goes_to_the_proxy_in_absolute_form_with_its_credentials() {
    let (base, upstream_connections) = upstream().await;
    let (at, seen) = proxy(Behaviour::Forward(Some(CREDENTIALS))).await;
    let client = HttpClient::with_proxy(
        timeout(),
        &proxies("", &format!("http://user:s3cret@{at}"), ""),
    );
    for _ in 0..3 {
        assert_eq!(echo(&client, &base, "hello").await.unwrap(), "hello");
    }
    let host = base.trim_start_matches("http://");
    assert_eq!(
        seen.lines(),
        [format!("POST http://{host}/echo HTTP/1.1")],
        "one head seen: the connection to the proxy is pooled"
    );
    assert!(seen.heads.lock().unwrap()[0].1, "credentials sent");
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1);
    assert_eq!(upstream_connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn no_proxy_hosts_connect_directly() {
    let (base, upstream_connections) = upstream().await;
    let (at, seen) = proxy(Behaviour::Forward(None)).await;
    let client = HttpClient::with_proxy(
        timeout(),
        &proxies(
            &format!("http://{at}"),
            &format!("http://{at}"),
            "example.com, 127.0.0.0/8",
        ),
    );
    assert_eq!(echo(&client, &base, "direct").await.unwrap(), "direct");
    assert_eq!(seen.connections.load(Ordering::SeqCst), 0);
    assert_eq!(upstream_connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_https_target_gets_a_tunnel_and_tls_to_the_target_inside_it() {
    // The tunnel's far end records what arrives: a TLS ClientHello naming
    // the target (no TLS upstream with a trusted certificate here).
    let far = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = far.local_addr().unwrap().port();
    let hello = tokio::spawn(async move {
        let (mut conn, _) = far.accept().await.unwrap();
        let mut first = vec![0u8; 512];
        let n = conn.read(&mut first).await.unwrap();
        first.truncate(n);
        first
    });
    let (at, seen) = proxy(Behaviour::Forward(Some(CREDENTIALS))).await;
    let client = HttpClient::with_proxy(
        timeout(),
        &proxies(&format!("http://user:s3cret@{at}"), "", ""),
    );
    let target = format!("https://localhost:{port}");
    let err = echo(&client, &target, "x").await.unwrap_err();
    assert!(err.connect, "the TLS handshake cannot finish: {err}");
    assert_eq!(seen.lines(), [format!("CONNECT localhost:{port} HTTP/1.1")]);
    assert!(
        seen.heads.lock().unwrap()[0].1,
        "credentials in the CONNECT"
    );
    let first = hello.await.unwrap();
    assert_eq!(first.first(), Some(&0x16), "a TLS handshake record");
    assert!(
        first.windows(b"localhost".len()).any(|w| w == b"localhost"),
        "SNI names the target"
    );
}

#[tokio::test]
async fn a_refused_tunnel_is_a_connect_error_without_the_credentials() {
    let (at, seen) = proxy(Behaviour::Refuse).await;
    let client = HttpClient::with_proxy(
        timeout(),
        &proxies(&format!("http://user:s3cret@{at}"), "", ""),
    );
    let err = echo(&client, "https://api.example.com", "x")
        .await
        .unwrap_err();
    assert!(err.connect && !err.timeout, "{err}");
    assert!(err.message.starts_with("connection failed"), "{err}");
    assert!(err.message.contains(&at), "names the proxy: {err}");
    assert!(err.message.contains("authorization required"), "{err}");
    assert!(
        !err.message.contains("s3cret") && !err.message.contains("user:"),
        "{err}"
    );
    assert_eq!(seen.lines(), ["CONNECT api.example.com:443 HTTP/1.1"]);
}

#[tokio::test]
async fn a_407_to_an_absolute_form_request_is_a_connect_error() {
    let (base, upstream_connections) = upstream().await;
    let (at, _) = proxy(Behaviour::Forward(Some(CREDENTIALS))).await;
    let client = HttpClient::with_proxy(
        timeout(),
        &proxies("", &format!("http://user:wrong@{at}"), ""),
    );
    let err = echo(&client, &base, "x").await.unwrap_err();
    assert!(err.connect, "{err}");
    assert!(err.message.contains("407"), "{err}");
    assert!(!err.message.contains("wrong"), "{err}");
    assert_eq!(upstream_connections.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unreachable_proxy_is_a_connect_error_naming_it_without_credentials() {
    let (_held, at) = refusing_address();
    let at = at.to_string();
    let (base, _) = upstream().await;
    let proxy_url = format!("http://user:s3cret@{at}");
    for (config, target) in [
        // a tunnel for an https target, absolute form for an http one
        (proxies(&proxy_url, "", ""), "https://api.example.com"),
        (proxies("", &proxy_url, ""), base.as_str()),
    ] {
        let client = HttpClient::with_proxy(timeout(), &config);
        let err = echo(&client, target, "x").await.unwrap_err();
        assert!(err.connect, "{err}");
        assert!(err.message.contains(&at), "{err}");
        assert!(!err.message.contains("s3cret"), "{err}");
    }
}

#[tokio::test]
async fn a_guarded_client_checks_the_target_itself_and_tunnels_to_the_checked_address() {
    let (base, upstream_connections) = upstream().await;
    let port = base.rsplit(':').next().unwrap().to_owned();
    let (at, seen) = proxy(Behaviour::Forward(None)).await;
    let guard = Arc::new(ConnectGuard::default());
    let client = HttpClient::with_resolver(
        GuardedResolver(guard.clone()),
        timeout(),
        &proxies(&format!("http://{at}"), &format!("http://{at}"), ""),
    );
    let by_name = format!("http://localhost:{port}");
    for target in [by_name.as_str(), base.as_str()] {
        let err = echo(&client, target, "x").await.unwrap_err();
        assert!(err.connect, "{err}");
        assert!(err.message.contains("internal address"), "{target}: {err}");
    }
    assert_eq!(
        seen.connections.load(Ordering::SeqCst),
        0,
        "the proxy never asked"
    );
    assert_eq!(upstream_connections.load(Ordering::SeqCst), 0);

    guard.set_allow_private(true);
    assert_eq!(echo(&client, &by_name, "allowed").await.unwrap(), "allowed");
    let line = seen.lines().pop().unwrap();
    let asked = line.split(' ').nth(1).unwrap().to_owned();
    let addr: std::net::SocketAddr = asked.parse().unwrap_or_else(|_| panic!("{line}"));
    assert!(addr.ip().is_loopback(), "{line}");
    assert!(
        line.starts_with("CONNECT "),
        "an http target tunnels too: {line}"
    );
}

#[test]
fn without_a_proxy_the_client_is_the_plain_one() {
    // No proxy connector, no per-request matching: the cost of a request
    // is the one it had before proxies were followed.
    for config in [ProxyConfig::none(), proxies("", "", "example.com")] {
        let client = HttpClient::with_proxy(timeout(), &config);
        assert!(matches!(client.inner, Inner::System(_)));
        let guarded = HttpClient::with_resolver(
            GuardedResolver(Arc::new(ConnectGuard::default())),
            timeout(),
            &config,
        );
        assert!(matches!(guarded.inner, Inner::Guarded(_)));
    }
    let proxied = HttpClient::with_proxy(timeout(), &proxies("http://p:3128", "", ""));
    assert!(matches!(proxied.inner, Inner::Proxied(..)));
}
