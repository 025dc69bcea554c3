//! Slow and idle clients (issue 19, "load held"): headers sent a byte at a
//! time are cut at `header_read_timeout`, a body that trickles in is
//! answered 408 at `body_read_timeout`, and while they hang on (and many
//! idle kept-alive connections stay open) other clients are served at once.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::common::*;

async fn quick_request_works(env: &ProxyEnv) {
    let started = Instant::now();
    let resp = env
        .post("/v1/chat/completions", &chat_body("hi", false))
        .await;
    assert_eq!(resp.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "others are served at once"
    );
}

#[tokio::test]
async fn headers_sent_a_byte_at_a_time_are_cut_and_others_are_served() {
    let env = ProxyEnv::start(&[("HEADER_READ_TIMEOUT", "1s")]).await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut tcp = TcpStream::connect(env.gateway.addr).await.unwrap();
        tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(tcp);
    }
    quick_request_works(&env).await;
    // Keep dribbling a header byte every 200 ms: the connection must be
    // closed within the timeout whatever the pace.
    let started = Instant::now();
    let mut tcp = slow.pop().unwrap();
    let mut closed = false;
    while started.elapsed() < Duration::from_secs(5) {
        if tcp.write_all(b"X").await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(200), tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(_)) => {
                // hyper answers 408 before closing.
                closed = true;
                break;
            }
            Err(_) => {}
        }
    }
    assert!(closed, "a slow head is not held open");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    quick_request_works(&env).await;
}

#[tokio::test]
async fn a_body_that_trickles_in_is_answered_408() {
    let env = ProxyEnv::start(&[("BODY_READ_TIMEOUT", "1s")]).await;
    let mut tcp = TcpStream::connect(env.gateway.addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"model\":"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    quick_request_works(&env).await;
    let mut answer = Vec::new();
    let started = Instant::now();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("request_timeout"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn many_idle_kept_alive_connections_do_not_starve_others() {
    let env = ProxyEnv::start(&[]).await;
    let mut idle = Vec::new();
    for _ in 0..500 {
        let mut tcp = TcpStream::connect(env.gateway.addr).await.unwrap();
        tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 512];
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        idle.push(tcp);
    }
    quick_request_works(&env).await;
    // They are still open and usable.
    let tcp = idle.last_mut().unwrap();
    tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = tcp.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
}
