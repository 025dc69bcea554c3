//! The admins' live log stream (issue 18): replayed then live lines,
//! filtered by level and by request, a planted key never shown, requests
//! going on while a reader does not read, and non-admins refused.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{admin_env, client, FullEnv, TestDb, UiClient};

/// The `event: log` payloads (and `lagged` counts) read from `resp` until
/// `done` says so or `within` passes.
async fn read_events(
    resp: &mut reqwest::Response,
    within: Duration,
    mut done: impl FnMut(&[Value]) -> bool,
) -> (Vec<Value>, u64) {
    let start = Instant::now();
    let (mut buf, mut events, mut dropped) = (String::new(), Vec::new(), 0u64);
    while start.elapsed() < within && !done(&events) {
        let left = within.saturating_sub(start.elapsed());
        let Ok(Ok(Some(chunk))) = tokio::time::timeout(left, resp.chunk()).await else {
            break;
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let data = block.lines().find_map(|l| l.strip_prefix("data: "));
            if block.starts_with("event: log") {
                events.push(serde_json::from_str(data.unwrap_or("null")).unwrap());
            } else if block.starts_with("event: lagged") {
                let v: Value = serde_json::from_str(data.unwrap_or("null")).unwrap();
                dropped += v["dropped"].as_u64().unwrap_or(0);
            }
        }
    }
    (events, dropped)
}

async fn open(ui: &UiClient, query: &str) -> reqwest::Response {
    let resp = ui.get(&format!("/_ui/api/admin/logs/stream{query}")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    resp
}

#[tokio::test]
async fn admins_tail_the_log_live() {
    let env = FullEnv::start(TestDb::sqlite(), &admin_env()).await;
    // The binary installs the subscriber in main; this test process does it.
    gateway::logging::init(&env.config.log);
    let admin = env.admin().await;

    // A line logged before the reader connects is replayed.
    let resp = client()
        .get(env.url("/v1/models"))
        .header("x-request-id", "before-req-1")
        .bearer_auth("sk-planted-secret-value-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let mut all = open(&admin, "?replay=1000").await;
    let (events, _) = read_events(&mut all, Duration::from_secs(5), |e| {
        e.iter().any(|v| v["request_id"] == "before-req-1")
    })
    .await;
    let before = events
        .iter()
        .find(|v| v["request_id"] == "before-req-1")
        .expect("the earlier request's line is replayed");
    assert_eq!(before["replayed"], true);
    assert_eq!(before["level"], "info");
    assert!(before["timestamp"].as_str().unwrap().ends_with('Z'));
    assert!(before["fields"].is_object());

    // A new line arrives live, for this reader and for one filtered to it.
    let mut one = open(&admin, "?request_id=live-req-1&replay=0").await;
    let resp = client()
        .get(env.url("/health"))
        .header("x-request-id", "live-req-1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let (events, _) = read_events(&mut all, Duration::from_secs(5), |e| {
        e.iter().any(|v| v["request_id"] == "live-req-1")
    })
    .await;
    let live = events
        .iter()
        .find(|v| v["request_id"] == "live-req-1")
        .unwrap();
    assert_eq!(live["replayed"], false);
    let (events, _) = read_events(&mut one, Duration::from_secs(2), |e| !e.is_empty()).await;
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|v| v["request_id"] == "live-req-1"),
        "{events:?}"
    );

    // Level filter: only errors (none of the access lines).
    let mut errors = open(&admin, "?level=error&replay=1000").await;
    let (events, _) = read_events(&mut errors, Duration::from_millis(500), |_| false).await;
    assert!(events.iter().all(|v| v["level"] == "error"), "{events:?}");
    assert_eq!(
        admin
            .get("/_ui/api/admin/logs/stream?level=loud")
            .await
            .status(),
        400
    );

    // A reader that does not read: requests go on at full speed (its lines
    // queue in the socket, then are dropped for it: `logging::stream`'s
    // unit test shows the `lagged` count).
    let _idle = open(&admin, "?replay=0").await;
    let start = Instant::now();
    for _ in 0..1200 {
        let resp = client().get(env.url("/health")).send().await.unwrap();
        assert_eq!(resp.status(), 200);
    }
    assert!(start.elapsed() < Duration::from_secs(60));

    // The planted key appears in no line, replayed or live.
    let mut again = open(&admin, "?replay=1000&level=debug").await;
    let (events, _) = read_events(&mut again, Duration::from_secs(2), |e| e.len() >= 1000).await;
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains("sk-planted-secret-value-123"));

    // Not for users.
    let user = env.new_user(&admin, "user@example.com", "User").await;
    assert_eq!(
        user.client.get("/_ui/api/admin/logs/stream").await.status(),
        403
    );
}
