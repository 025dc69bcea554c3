//! Budgets and rate limits through the real gateway (issue 21): a key's
//! requests and tokens per minute with the `x-ratelimit-*` headers, a
//! user's limits set by an admin, a budget spent then refused then reset
//! by its period (the limits clock moved forward), two replicas sharing one
//! limit through Redis, and Redis stopped mid-test with requests still
//! served. Redis: `TEST_REDIS_URL` (default the machine's
//! `redis://127.0.0.1:6379`), and a `redis-server` of our own to stop.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{chat_body, client, free_port, messages_body, TestDb, UiClient};
use crate::keys_support::{connect_upstream, user_id, Deployment, KeyHeader};

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// Move the limits clock to just after the start of a minute, so a test's
/// requests all fall in one window.
fn start_of_a_minute() {
    let now = gateway::limits::clock::now();
    gateway::limits::clock::shift_for_tests(60 - now.rem_euclid(60) + 1);
}

async fn new_key(ui: &UiClient, body: Value) -> (String, Value) {
    let resp = ui.post("/_ui/api/keys", body).await;
    assert_eq!(resp.status(), 200);
    let created: Value = resp.json().await.unwrap();
    (created["key"].as_str().unwrap().to_owned(), created)
}

async fn chat(base: &str, key: &str, content: &str) -> reqwest::Response {
    client()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&chat_body(content, false))
        .send()
        .await
        .unwrap()
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

async fn error_of(resp: reqwest::Response) -> (u16, Option<String>, String, String) {
    let status = resp.status().as_u16();
    let retry = header(&resp, "retry-after");
    let body: Value = resp.json().await.unwrap();
    let kind = body["error"]["type"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (status, retry, kind, message)
}

crate::both_stores!(
    key_and_user_rate_limits,
    a_budget_is_spent_refused_and_reset
);

/// `rpm_limit` 5: five answers carry the headers counting down, the sixth
/// is 429 `rate_limited` with `retry-after`; other `/v1` calls count too;
/// `tpm_limit` refuses a request larger than the limit; an admin's limit on
/// the user applies to every key of the user.
async fn key_and_user_rate_limits(db: TestDb) {
    let d = Deployment::start(db).await;
    let base = d.env.url("");
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    start_of_a_minute();
    let (key, created) = new_key(&admin, json!({"label": "five", "rpm_limit": 5})).await;
    assert_eq!(created["rpm_limit"], 5);
    assert_eq!(created["tpm_limit"], Value::Null);
    for n in 1..=4 {
        let resp = chat(&base, &key, "hi").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "x-ratelimit-limit-requests").as_deref(),
            Some("5")
        );
        let remaining = (5 - n).to_string();
        assert_eq!(
            header(&resp, "x-ratelimit-remaining-requests").as_deref(),
            Some(remaining.as_str())
        );
        let reset: i64 = header(&resp, "x-ratelimit-reset-requests")
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&reset), "{reset}");
        assert_eq!(
            header(&resp, "x-ratelimit-limit-tokens"),
            None,
            "no token limit"
        );
    }
    // The fifth is a model listing: it counts as a request.
    let resp = client()
        .get(format!("{base}/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        header(&resp, "x-ratelimit-remaining-requests").as_deref(),
        Some("0")
    );
    let resp = d
        .v1(
            "/messages",
            &key,
            KeyHeader::XApiKey,
            &messages_body("hi", true),
        )
        .await;
    assert_eq!(
        header(&resp, "x-ratelimit-remaining-requests").as_deref(),
        Some("0")
    );
    let (status, retry, kind, message) = error_of(resp).await;
    assert_eq!((status, kind.as_str()), (429, "rate_limited"), "{message}");
    let retry: u64 = retry.expect("retry-after").parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert!(message.contains("5 requests per minute"), "{message}");

    // Tokens per minute: a request larger than the limit is refused before
    // any upstream call; a small one goes through with the token headers.
    let (tkey, _) = new_key(&admin, json!({"tpm_limit": 200})).await;
    let before = d.sim.requests().len();
    let (status, _, kind, message) = error_of(chat(&base, &tkey, &"word ".repeat(400)).await).await;
    assert_eq!((status, kind.as_str()), (429, "rate_limited"), "{message}");
    assert!(
        message.contains("larger than the token rate limit"),
        "{message}"
    );
    assert_eq!(
        d.sim.requests().len(),
        before,
        "refused before the upstream"
    );
    let resp = chat(&base, &tkey, "hi").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        header(&resp, "x-ratelimit-limit-tokens").as_deref(),
        Some("200")
    );
    let remaining: i64 = header(&resp, "x-ratelimit-remaining-tokens")
        .unwrap()
        .parse()
        .unwrap();
    assert!((100..200).contains(&remaining), "{remaining}");

    // An admin limits a user: 2 requests a minute for all its keys.
    let bob = d.user(&admin, "bob@example.com").await;
    connect_upstream(&bob).await;
    let bob_id = user_id(&bob).await;
    let path = format!("/_ui/api/admin/users/{bob_id}/limits");
    assert_eq!(
        bob.patch(&path, json!({"rpm_limit": 100})).await.status(),
        403
    );
    let resp = admin
        .patch(&path, json!({"rpm_limit": 2, "budget_usd": null}))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"ok": true}));
    let shown: Value = admin.get(&path).await.json().await.unwrap();
    assert_eq!(shown["rpm_limit"], 2);
    assert_eq!(admin.patch(&path, json!({"rpm": 2})).await.status(), 400);
    let (k1, _) = new_key(&bob, json!({})).await;
    let (k2, _) = new_key(&bob, json!({})).await;
    assert_eq!(chat(&base, &k1, "hi").await.status(), 200);
    assert_eq!(chat(&base, &k2, "hi").await.status(), 200);
    let (status, _, kind, message) = error_of(chat(&base, &k1, "hi").await).await;
    assert_eq!((status, kind.as_str()), (429, "rate_limited"));
    assert!(message.contains("your account"), "{message}");
    // Lifted: requests go through again, without headers.
    let resp = admin.patch(&path, json!({"rpm_limit": null})).await;
    assert_eq!(resp.status(), 200);
    let resp = chat(&base, &k2, "hi").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(header(&resp, "x-ratelimit-limit-requests"), None);
}

/// A daily budget on a key: spent by the first answer (its cost is counted
/// when the usage is written), the next request is 429 `budget_exceeded`
/// naming the reset time; the key list shows the spend; the next day (the
/// limits clock moved) the key works again.
async fn a_budget_is_spent_refused_and_reset(db: TestDb) {
    let d = Deployment::start(db).await;
    let base = d.env.url("");
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    // A price for the simulator's model, so answers cost something.
    let entries: Value = admin
        .get("/_ui/api/models/registry?provider=primary")
        .await
        .json()
        .await
        .unwrap();
    let sonnet = entries["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["model_id"] == "claude-sonnet-4.5")
        .expect("the registry lists the model")
        .clone();
    let resp = admin
        .patch(
            &format!(
                "/_ui/api/models/registry/{}",
                sonnet["id"].as_str().unwrap()
            ),
            json!({"input_price_per_mtok": 1000, "output_price_per_mtok": 1000}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let (key, created) = new_key(
        &admin,
        json!({"budget_usd": 0.001, "budget_period": "daily"}),
    )
    .await;
    assert_eq!(created["budget_period"], "daily");
    assert_eq!(chat(&base, &key, "hi").await.status(), 200);
    // Refused once the first answer's cost is written (about a second).
    let mut refused = None;
    for _ in 0..100 {
        let resp = chat(&base, &key, "hi").await;
        if resp.status() == 429 {
            refused = Some(error_of(resp).await);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, retry, kind, message) = refused.expect("the budget ran out");
    assert_eq!(kind, "budget_exceeded", "{message}");
    assert!(
        message.contains("this API key") && message.contains("USD per day"),
        "{message}"
    );
    assert!(
        message.contains("resets at") && message.contains("T00:00:00Z"),
        "{message}"
    );
    assert_eq!(retry, None);
    let list: Value = admin.get("/_ui/api/keys").await.json().await.unwrap();
    let shown = &list["keys"][0];
    assert!(shown["spend_usd"].as_f64().unwrap() >= 0.001, "{shown}");
    assert!(shown["budget_resets_at"]
        .as_str()
        .unwrap()
        .ends_with("T00:00:00Z"));
    // Tomorrow: a new period.
    gateway::limits::clock::shift_for_tests(86_400);
    assert_eq!(chat(&base, &key, "hi").await.status(), 200);
}

/// Two replicas on one Redis: one limit of 6 requests a minute, taken
/// alternately on each, admits exactly 6.
#[tokio::test]
async fn two_replicas_share_one_limit_through_redis() {
    let db = match TestDb::postgres().await {
        Some(db) => db,
        None => TestDb::sqlite(),
    };
    let url = redis_url();
    let d = Deployment::start_with(db, &[("REDIS_URL", &url)]).await;
    let two = d.env.replica().await;
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    start_of_a_minute();
    let (key, _) = new_key(&admin, json!({"rpm_limit": 6})).await;
    let bases = [d.env.url(""), two.url("")];
    let mut admitted = 0;
    for i in 0..10 {
        let status = chat(&bases[i % 2], &key, "hi").await.status();
        if status == 200 {
            admitted += 1;
        } else {
            assert_eq!(status, 429);
        }
    }
    assert_eq!(admitted, 6);
}

/// A Redis of our own, stopped mid-test: the limit holds while it runs;
/// once it is gone requests are served (fail open) without headers.
#[tokio::test]
async fn requests_are_served_when_redis_stops() {
    let port = free_port();
    let mut redis = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server (Debian's redis-server package)");
    let url = format!("redis://127.0.0.1:{port}");
    // Wait until it accepts connections.
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let d = Deployment::start_with(TestDb::sqlite(), &[("REDIS_URL", &url)]).await;
    let base = d.env.url("");
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    start_of_a_minute();
    let (key, _) = new_key(&admin, json!({"rpm_limit": 2})).await;
    assert_eq!(chat(&base, &key, "hi").await.status(), 200);
    assert_eq!(chat(&base, &key, "hi").await.status(), 200);
    assert_eq!(chat(&base, &key, "hi").await.status(), 429);
    redis.kill().unwrap();
    redis.wait().unwrap();
    for _ in 0..3 {
        let resp = chat(&base, &key, "hi").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(header(&resp, "x-ratelimit-limit-requests"), None);
    }
}
