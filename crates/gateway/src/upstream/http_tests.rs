#![expect(
    clippy::disallowed_methods,
    reason = "tests spawn their own servers and concurrent callers"
)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use axum::response::IntoResponse;

use super::*;

#[test]
fn classification_follows_the_protocol_table() {
    use StatusClass::*;
    let s = |n: u16| StatusCode::from_u16(n).unwrap();
    assert_eq!(classify(s(200), None), Success);
    assert_eq!(classify(s(429), None), Retryable);
    assert_eq!(
        classify(s(429), Some("INSUFFICIENT_MODEL_CAPACITY")),
        Retryable
    );
    assert_eq!(classify(s(429), Some("MONTHLY_REQUEST_COUNT")), Fatal);
    assert_eq!(classify(s(429), Some("DAILY_REQUEST_COUNT")), Fatal);
    assert_eq!(classify(s(500), None), Retryable);
    assert_eq!(classify(s(503), None), Retryable);
    assert_eq!(classify(s(403), None), RefreshAndRetry);
    assert_eq!(classify(s(403), Some("TEMPORARILY_SUSPENDED")), Fatal);
    assert_eq!(classify(s(403), Some("UNAUTHORIZED_ACCESS")), Fatal);
    assert_eq!(classify(s(400), Some("INVALID_MODEL_ID")), Fatal);
    assert_eq!(classify(s(402), Some("MONTHLY_REQUEST_COUNT")), Fatal);
    assert_eq!(classify(s(404), None), Fatal);
}

#[test]
fn error_bodies_are_parsed() {
    let st = StatusCode::BAD_REQUEST;
    assert_eq!(
        parse_error_body(
            st,
            br#"{"message":"Input is too long.","reason":"CONTENT_LENGTH_EXCEEDS_THRESHOLD"}"#
        ),
        (
            "Input is too long.".into(),
            Some("CONTENT_LENGTH_EXCEEDS_THRESHOLD".into())
        )
    );
    assert_eq!(
        parse_error_body(
            st,
            br#"{"__type":"com.amazon#ValidationException","Message":"bad"}"#
        ),
        ("bad".into(), None)
    );
    assert_eq!(
        parse_error_body(st, br#"{"error":{"message":"nested","type":"x"}}"#),
        ("nested".into(), None)
    );
    assert_eq!(
        parse_error_body(
            StatusCode::TOO_MANY_REQUESTS,
            br#"{"reason":"MONTHLY_REQUEST_COUNT"}"#
        ),
        (
            "MONTHLY_REQUEST_COUNT".into(),
            Some("MONTHLY_REQUEST_COUNT".into())
        )
    );
    assert_eq!(
        parse_error_body(StatusCode::BAD_GATEWAY, b"  upstream exploded \n"),
        ("upstream exploded".into(), None)
    );
    assert_eq!(
        parse_error_body(StatusCode::SERVICE_UNAVAILABLE, b""),
        ("503 Service Unavailable".into(), None)
    );
    let long = "x".repeat(2000);
    let (m, _) = parse_error_body(st, long.as_bytes());
    assert_eq!(m.len(), 503);
}

#[test]
fn backoff_doubles_and_is_capped() {
    let p = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(5),
        retry_after_cap: Duration::from_secs(30),
        request_timeout: Duration::from_secs(300),
    };
    assert_eq!(p.backoff(0), Duration::from_secs(1));
    assert_eq!(p.backoff(1), Duration::from_secs(2));
    assert_eq!(p.backoff(2), Duration::from_secs(4));
    assert_eq!(p.backoff(3), Duration::from_secs(5));
    assert_eq!(p.backoff(60), Duration::from_secs(5));
    let j = jitter(Duration::from_secs(1));
    assert!(j >= Duration::from_secs(1) && j <= Duration::from_millis(1100));
}

#[test]
fn upstream_errors_keep_their_status() {
    let e: GatewayError = UpstreamError::Status {
        status: StatusCode::TOO_MANY_REQUESTS,
        message: "slow down".into(),
        reason: None,
        retry_after: Some(Duration::from_secs(3)),
    }
    .into();
    assert_eq!(e.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(e.kind(), "upstream_api_error");
    assert_eq!(e.retry_after(), Some(3));
    let e: GatewayError = UpstreamError::Transport {
        message: "refused".into(),
        timeout: false,
    }
    .into();
    assert_eq!(e.status(), StatusCode::BAD_GATEWAY);
}

/// One scripted answer: status, headers, body.
type Reply = (u16, Vec<(&'static str, &'static str)>, &'static str);

/// A scripted upstream: answers each call with the next (status, headers, body).
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    calls: AtomicU32,
    auth_seen: Mutex<Vec<String>>,
}

async fn scripted(replies: Vec<Reply>) -> (String, Arc<Script>) {
    let script = Arc::new(Script {
        replies: Mutex::new(replies.into()),
        calls: AtomicU32::new(0),
        auth_seen: Mutex::new(Vec::new()),
    });
    let s = script.clone();
    let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let s = s.clone();
        async move {
            s.calls.fetch_add(1, Ordering::SeqCst);
            if let Some(a) = headers.get("authorization") {
                s.auth_seen
                    .lock()
                    .unwrap()
                    .push(a.to_str().unwrap().to_owned());
            }
            let (status, hdrs, body) =
                s.replies
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or((200, vec![], "ok"));
            let mut resp = (StatusCode::from_u16(status).unwrap(), body).into_response();
            for (k, v) in hdrs {
                resp.headers_mut().insert(k, v.parse().unwrap());
            }
            resp
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, script)
}

fn fast_policy(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        retry_after_cap: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
    }
}

async fn call(
    url: &str,
    policy: &RetryPolicy,
    refreshes: &Arc<AtomicU32>,
) -> Result<Response, UpstreamError> {
    let client = HttpClient::direct(Duration::from_secs(5));
    let url: Uri = format!("{url}/generateAssistantResponse").parse().unwrap();
    let r = refreshes.clone();
    send_with_retry(
        "primary",
        policy,
        &client,
        |attempt| {
            let mut headers = HeaderMap::new();
            let bearer = format!("Bearer token-{}", r.load(Ordering::SeqCst));
            headers.insert("authorization", bearer.parse().unwrap());
            headers.insert("x-attempt", attempt.to_string().parse().unwrap());
            let req = Outgoing::post(url.clone(), headers, Bytes::new());
            async move { Ok(req) }
        },
        || {
            let r = refreshes.clone();
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        },
    )
    .await
}

#[tokio::test]
async fn transient_errors_are_retried_until_success() {
    let (url, script) = scripted(vec![
        (500, vec![], "boom"),
        (
            429,
            vec![],
            r#"{"message":"Too many requests","reason":"INSUFFICIENT_MODEL_CAPACITY"}"#,
        ),
        (503, vec![], ""),
        (200, vec![], "stream"),
    ])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    let resp = call(&url, &fast_policy(3), &refreshes).await.unwrap();
    assert_eq!(&resp.bytes(1024).await.unwrap()[..], b"stream");
    assert_eq!(script.calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn retries_stop_at_the_budget_with_the_last_error() {
    let (url, script) = scripted(vec![
        (500, vec![], "a"),
        (502, vec![], "b"),
        (503, vec![], r#"{"message":"overloaded"}"#),
    ])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    let err = call(&url, &fast_policy(2), &refreshes).await.unwrap_err();
    assert_eq!(script.calls.load(Ordering::SeqCst), 3);
    match err {
        UpstreamError::Status {
            status, message, ..
        } => {
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(message, "overloaded");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn quota_429_and_plain_4xx_are_not_retried() {
    let (url, script) = scripted(vec![(
        429,
        vec![],
        r#"{"message":"Monthly limit reached","reason":"MONTHLY_REQUEST_COUNT"}"#,
    )])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    let err = call(&url, &fast_policy(3), &refreshes).await.unwrap_err();
    assert_eq!(script.calls.load(Ordering::SeqCst), 1);
    assert!(
        matches!(err, UpstreamError::Status { reason: Some(ref r), .. } if r == "MONTHLY_REQUEST_COUNT")
    );

    let (url, script) = scripted(vec![(
        400,
        vec![],
        r#"{"message":"Improperly formed request."}"#,
    )])
    .await;
    let err = call(&url, &fast_policy(3), &refreshes).await.unwrap_err();
    assert_eq!(script.calls.load(Ordering::SeqCst), 1);
    let gw: GatewayError = err.into();
    assert_eq!(gw.status(), StatusCode::BAD_REQUEST);
    assert_eq!(gw.public_message(), "Improperly formed request.");
}

#[tokio::test]
async fn retry_after_is_honoured_and_a_long_one_is_returned() {
    let (url, script) = scripted(vec![
        (429, vec![("retry-after", "1")], "{}"),
        (200, vec![], "ok"),
    ])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    let started = std::time::Instant::now();
    call(&url, &fast_policy(3), &refreshes).await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(script.calls.load(Ordering::SeqCst), 2);

    let (url, script) = scripted(vec![(429, vec![("retry-after", "120")], "{}")]).await;
    let err = call(&url, &fast_policy(3), &refreshes).await.unwrap_err();
    assert_eq!(script.calls.load(Ordering::SeqCst), 1);
    let gw: GatewayError = err.into();
    assert_eq!(gw.retry_after(), Some(120));
}

#[tokio::test]
async fn a_403_refreshes_once_and_retries_once_with_the_new_token() {
    let (url, script) = scripted(vec![
        (
            403,
            vec![],
            r#"{"message":"The bearer token included in the request is invalid."}"#,
        ),
        (200, vec![], "ok"),
    ])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    call(&url, &fast_policy(0), &refreshes).await.unwrap();
    assert_eq!(refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(
        *script.auth_seen.lock().unwrap(),
        ["Bearer token-0", "Bearer token-1"]
    );

    // A second 403 is returned, not refreshed again.
    let (url, script) = scripted(vec![
        (403, vec![], "{}"),
        (403, vec![], r#"{"message":"still bad"}"#),
    ])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    let err = call(&url, &fast_policy(3), &refreshes).await.unwrap_err();
    assert_eq!(refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(script.calls.load(Ordering::SeqCst), 2);
    assert_eq!(GatewayError::from(err).status(), StatusCode::FORBIDDEN);

    // An account-level 403 is not refreshed.
    let (url, script) = scripted(vec![(
        403,
        vec![],
        r#"{"message":"x","reason":"TEMPORARILY_SUSPENDED"}"#,
    )])
    .await;
    let refreshes = Arc::new(AtomicU32::new(0));
    call(&url, &fast_policy(3), &refreshes).await.unwrap_err();
    assert_eq!(refreshes.load(Ordering::SeqCst), 0);
    assert_eq!(script.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported_as_502() {
    // Bind and drop to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let refreshes = Arc::new(AtomicU32::new(0));
    let attempts = Arc::new(AtomicU32::new(0));
    let client = HttpClient::direct(Duration::from_secs(5));
    let a = attempts.clone();
    let err = send_with_retry(
        "primary",
        &fast_policy(2),
        &client,
        |_| {
            a.fetch_add(1, Ordering::SeqCst);
            let url = format!("http://127.0.0.1:{port}/x").parse().unwrap();
            let req = Outgoing::get(url, HeaderMap::new());
            async move { Ok(req) }
        },
        || {
            let r = refreshes.clone();
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        },
    )
    .await
    .unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert!(matches!(
        err,
        UpstreamError::Transport { timeout: false, .. }
    ));
    assert_eq!(GatewayError::from(err).status(), StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn a_failing_build_is_returned_as_is() {
    let err = send_with_retry(
        "primary",
        &fast_policy(3),
        &HttpClient::direct(Duration::from_secs(5)),
        |_| async { Err::<Outgoing, _>(GatewayError::Config("no credentials".into())) },
        || async { Ok(()) },
    )
    .await
    .unwrap_err();
    assert_eq!(GatewayError::from(err).kind(), "config_error");
}
