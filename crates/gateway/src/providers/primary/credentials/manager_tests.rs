#![expect(
    clippy::disallowed_methods,
    reason = "tests spawn their own servers and concurrent callers"
)]

use std::sync::atomic::{AtomicU32, Ordering};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{json, Value};

use super::*;

/// A token endpoint that answers with `mode` and counts calls.
struct MockOidc {
    calls: AtomicU32,
    /// 0: success with rotation, 1: 500, 2: invalid_grant, 3: success without rotation.
    mode: AtomicU32,
    expires_in: AtomicU32,
    delay_ms: u64,
}

async fn mock(delay_ms: u64, expires_in: u32) -> (String, Arc<MockOidc>) {
    let m = Arc::new(MockOidc {
        calls: AtomicU32::new(0),
        mode: AtomicU32::new(0),
        expires_in: AtomicU32::new(expires_in),
        delay_ms,
    });
    let state = m.clone();
    let app = axum::Router::new().route(
        "/token",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let m = state.clone();
            async move {
                let n = m.calls.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::time::sleep(Duration::from_millis(m.delay_ms)).await;
                assert_eq!(body["grantType"], "refresh_token");
                assert_eq!(body["clientId"], "cid");
                match m.mode.load(Ordering::SeqCst) {
                    0 => axum::Json(json!({
                        "accessToken": format!("at-{n}"),
                        "refreshToken": format!("rt-{n}"),
                        "expiresIn": m.expires_in.load(Ordering::SeqCst),
                    }))
                    .into_response(),
                    1 => (StatusCode::INTERNAL_SERVER_ERROR, "down").into_response(),
                    2 => (
                        StatusCode::BAD_REQUEST,
                        axum::Json(json!({"error": "invalid_grant", "error_description": "dead"})),
                    )
                        .into_response(),
                    _ => axum::Json(json!({"accessToken": format!("at-{n}"), "expiresIn": 3600}))
                        .into_response(),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, m)
}

struct TempDir(std::path::PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
fn tempdir() -> TempDir {
    TempDir(std::env::temp_dir().join(format!("gw-mgr-{}", crate::ids::fast_uuid())))
}

fn creds() -> PrimaryCredentials {
    PrimaryCredentials {
        refresh_token: Secret::new("rt-0"),
        client_id: "cid".into(),
        client_secret: Secret::new("csec"),
        client_secret_expires_at: None,
        region: None,
        sso_region: None,
        start_url: None,
        profile_arn: Some("arn:aws:codewhisperer:us-east-1:1:profile/X".into()),
    }
}

fn grant(token: &str, expires_in: u64) -> TokenGrant {
    TokenGrant {
        access_token: Secret::new(token),
        refresh_token: None,
        expires_in: Some(expires_in),
    }
}

fn timing(cache_ttl_ms: u64) -> TokenTiming {
    TokenTiming {
        cache_ttl: Duration::from_millis(cache_ttl_ms),
        refresh_ahead: Duration::from_secs(300),
        check_interval: Duration::from_secs(60),
    }
}

fn manager(url: &str, dir: &TempDir, t: TokenTiming, initial: Option<&TokenGrant>) -> TokenManager {
    let oidc = OidcClient::new(reqwest::Client::new(), url, Duration::from_secs(5));
    let file = TokenFile::new(dir.0.join("tokens.json"));
    TokenManager::new(oidc, file, "us-east-1", t, creds(), initial)
}

#[tokio::test]
async fn a_fresh_token_is_served_from_the_cache() {
    let (url, m) = mock(0, 3600).await;
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(60_000), Some(&grant("at-initial", 3600)));
    assert_eq!(tm.access_token().await.unwrap(), "at-initial");
    assert_eq!(tm.access_token().await.unwrap(), "at-initial");
    assert_eq!(m.calls.load(Ordering::SeqCst), 0);
    assert_eq!(tm.api_region(), "us-east-1");
    assert_eq!(
        tm.profile_arn().as_deref(),
        Some("arn:aws:codewhisperer:us-east-1:1:profile/X")
    );
}

#[tokio::test]
async fn a_stale_token_is_refreshed_and_the_rotated_refresh_token_saved() {
    let (url, m) = mock(0, 3600).await;
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(20), Some(&grant("at-initial", 3600)));
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert_eq!(tm.access_token().await.unwrap(), "at-1");
    assert_eq!(m.calls.load(Ordering::SeqCst), 1);
    let saved = TokenFile::new(dir.0.join("tokens.json"))
        .load_primary()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(saved.refresh_token.expose(), "rt-1");
    assert_eq!(saved.profile_arn, creds().profile_arn);
}

#[tokio::test]
async fn no_rotation_means_no_write() {
    let (url, m) = mock(0, 3600).await;
    m.mode.store(3, Ordering::SeqCst);
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(60_000), None);
    assert_eq!(tm.access_token().await.unwrap(), "at-1");
    assert!(!dir.0.join("tokens.json").exists());
}

#[tokio::test]
async fn concurrent_forced_refreshes_share_one_call() {
    let (url, m) = mock(150, 3600).await;
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(60_000), Some(&grant("at-initial", 3600)));
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let tm = tm.clone();
            tokio::spawn(async move { tm.force_refresh().await })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap(), "at-1");
    }
    assert_eq!(m.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_refresh_falls_back_to_a_valid_token_only() {
    let (url, m) = mock(0, 3600).await;
    m.mode.store(1, Ordering::SeqCst);
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(10), Some(&grant("at-old", 3600)));
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(tm.access_token().await.unwrap(), "at-old");
    assert_eq!(m.calls.load(Ordering::SeqCst), 1);
    // The failure is not retried on every request.
    assert_eq!(tm.access_token().await.unwrap(), "at-old");
    assert_eq!(m.calls.load(Ordering::SeqCst), 1);
    // A forced refresh does not fall back.
    let err = tm.force_refresh().await.unwrap_err();
    assert_eq!(err.status(), StatusCode::BAD_GATEWAY);

    // An expired token is not used.
    let tm = manager(&url, &dir, timing(10), Some(&grant("at-expired", 0)));
    let err = tm.access_token().await.unwrap_err();
    assert_eq!(err.kind(), "upstream_api_error");
}

#[tokio::test]
async fn rejected_credentials_are_a_config_error() {
    let (url, m) = mock(0, 3600).await;
    m.mode.store(2, Ordering::SeqCst);
    let dir = tempdir();
    let tm = manager(&url, &dir, timing(10), None);
    let err = tm.access_token().await.unwrap_err();
    assert_eq!(err.kind(), "config_error");
    assert!(err.to_string().contains("invalid_grant"));
    assert!(!err.to_string().contains("rt-0"));
}

#[tokio::test]
async fn no_credentials_is_a_config_error() {
    let tm = TokenManager::without_credentials("eu-central-1");
    assert!(!tm.has_credentials());
    assert_eq!(tm.api_region(), "eu-central-1");
    assert_eq!(tm.access_token().await.unwrap_err().kind(), "config_error");
    assert_eq!(tm.profile_arn(), None);
}

#[tokio::test]
async fn the_background_task_refreshes_before_expiry() {
    let (url, m) = mock(0, 3600).await;
    let dir = tempdir();
    let t = TokenTiming {
        cache_ttl: Duration::from_secs(600),
        refresh_ahead: Duration::from_secs(300),
        check_interval: Duration::from_millis(20),
    };
    // Expires in 100 s: inside the 300 s window, so the first check refreshes.
    let tm = manager(&url, &dir, t, Some(&grant("at-initial", 100)));
    let cancel = CancellationToken::new();
    let task = tm.spawn_refresher(cancel.clone());
    for _ in 0..100 {
        if m.calls.load(Ordering::SeqCst) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The new token lasts 3600 s: no further refreshes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(m.calls.load(Ordering::SeqCst), 1);
    assert_eq!(tm.access_token().await.unwrap(), "at-1");
    cancel.cancel();
    task.await.unwrap();
}
