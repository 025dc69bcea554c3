#![expect(
    clippy::disallowed_methods,
    reason = "tests spawn their own servers and concurrent callers"
)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::*;

/// A token endpoint counting refreshes; `refuse` answers 400 invalid_grant.
async fn token_server(refuse: bool, expires_in: u64) -> (String, Arc<AtomicU32>) {
    let count = Arc::new(AtomicU32::new(0));
    let seen = count.clone();
    let app = Router::new().route(
        "/v1/oauth/token",
        post(move |Json(body): Json<Value>| {
            let seen = seen.clone();
            async move {
                assert_eq!(body["grant_type"], "refresh_token");
                assert_eq!(body["client_id"], CLIENT_ID);
                let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
                // Slow enough that concurrent callers pile up behind it.
                tokio::time::sleep(Duration::from_millis(100)).await;
                if refuse {
                    return (
                        axum::http::StatusCode::BAD_REQUEST,
                        Json(json!({"error": "invalid_grant", "error_description": "Refresh token not found"})),
                    );
                }
                (
                    axum::http::StatusCode::OK,
                    Json(json!({
                        "access_token": format!("at-{n}"),
                        "refresh_token": format!("rt-{n}"),
                        "expires_in": expires_in,
                        "token_type": "Bearer",
                    })),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1/oauth/token"), count)
}

fn settings(token_url: String) -> OAuthSettings {
    OAuthSettings {
        token_url,
        client_id: CLIENT_ID.to_owned(),
        refresh_ahead: Duration::from_secs(300),
        timeout: Duration::from_secs(5),
    }
}

fn temp_file() -> (std::path::PathBuf, TokenFile) {
    let dir = std::env::temp_dir().join(format!("gw-oauth-{}", crate::ids::fast_uuid().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = TokenFile::new(dir.join("provider_tokens.json"));
    (dir, file)
}

#[tokio::test]
async fn fifty_concurrent_requests_with_an_expiring_token_refresh_once() {
    let (url, count) = token_server(false, 3600).await;
    let session = Arc::new(
        OAuthSession::new(
            reqwest::Client::new(),
            settings(url),
            Secret::new("at-0"),
            Some(Secret::new("rt-0")),
            None,
        )
        .with_expires_at(SystemTime::now() + Duration::from_secs(60)),
    );
    let calls = (0..50).map(|_| {
        let s = session.clone();
        tokio::spawn(async move { s.bearer().await.unwrap() })
    });
    let tokens: Vec<Bearer> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert!(tokens
        .iter()
        .all(|t| t.token.expose() == "at-1" && t.generation == 1));
    // Fresh now: no further refresh.
    assert_eq!(session.bearer().await.unwrap().token.expose(), "at-1");
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_expiry_is_used_until_rejected_and_rejections_refresh_once() {
    let (url, count) = token_server(false, 3600).await;
    let session = OAuthSession::new(
        reqwest::Client::new(),
        settings(url),
        Secret::new("at-0"),
        Some(Secret::new("rt-0")),
        None,
    );
    let first = session.bearer().await.unwrap();
    assert_eq!(first.token.expose(), "at-0");
    assert_eq!(count.load(Ordering::SeqCst), 0);
    // Two requests saw the same token refused: one refresh.
    let (a, b) = tokio::join!(
        session.rejected(first.generation),
        session.rejected(first.generation)
    );
    a.unwrap();
    b.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(session.bearer().await.unwrap().token.expose(), "at-1");
}

#[tokio::test]
async fn rotated_tokens_survive_a_restart_for_the_same_configured_token() {
    let (url, count) = token_server(false, 3600).await;
    let (dir, file) = temp_file();
    let make = |refresh: &str| {
        OAuthSession::new(
            reqwest::Client::new(),
            settings(url.clone()),
            Secret::new("at-0"),
            Some(Secret::new(refresh)),
            Some(TokenHome::File(file.clone())),
        )
    };
    let first = make("rt-0");
    let gen = first.bearer().await.unwrap().generation;
    first.rejected(gen).await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);

    let stored = std::fs::read_to_string(dir.join("provider_tokens.json")).unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["messages_vendor"]["refresh_token"], "rt-1");
    assert!(
        !stored.to_string().contains("rt-0"),
        "only a hash of the seed is kept"
    );

    // Same configured token: the rotated pair is used.
    let again = make("rt-0");
    assert_eq!(again.bearer().await.unwrap().token.expose(), "at-1");
    // A newly configured token wins over the stored pair.
    let fresh = make("rt-new");
    assert_eq!(fresh.bearer().await.unwrap().token.expose(), "at-0");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_refused_refresh_says_what_to_configure() {
    let (url, _) = token_server(true, 3600).await;
    let session = OAuthSession::new(
        reqwest::Client::new(),
        settings(url),
        Secret::new("at-0"),
        Some(Secret::new("rt-0")),
        None,
    )
    .with_expires_at(SystemTime::UNIX_EPOCH);
    let err = session.bearer().await.unwrap_err();
    assert_eq!(err.status(), axum::http::StatusCode::UNAUTHORIZED);
    let message = err.to_string();
    assert!(message.contains("Refresh token not found"), "{message}");
    assert!(
        message.contains("MESSAGES_VENDOR_REFRESH_TOKEN"),
        "{message}"
    );
    assert!(!message.contains("rt-0"));

    let no_refresh = OAuthSession::new(
        reqwest::Client::new(),
        settings("http://127.0.0.1:9/none".into()),
        Secret::new("at-0"),
        None,
        None,
    );
    assert!(no_refresh.rejected(0).await.is_err());
    assert_eq!(no_refresh.bearer().await.unwrap().token.expose(), "at-0");
}

#[tokio::test]
async fn a_short_lived_token_is_refreshed_at_half_its_life_not_at_once() {
    let (url, count) = token_server(false, 200).await;
    let session = OAuthSession::new(
        reqwest::Client::new(),
        settings(url),
        Secret::new("at-0"),
        Some(Secret::new("rt-0")),
        None,
    )
    .with_expires_at(SystemTime::UNIX_EPOCH);
    assert_eq!(session.bearer().await.unwrap().token.expose(), "at-1");
    // 200 s of life is within the 300 s margin, but it was just issued.
    assert_eq!(session.bearer().await.unwrap().token.expose(), "at-1");
    assert_eq!(count.load(Ordering::SeqCst), 1);
}
