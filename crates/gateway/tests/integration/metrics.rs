//! `GET /metrics` after known traffic (issue 18; interfaces-full.md 6): the
//! counters and histograms move by what was sent, with the labels the
//! contract fixes; `METRICS_TOKEN` guards the scrape; no label names a user
//! or a key. Values are compared before and after the traffic, so other
//! gateways of the same process (there are none under nextest) would not
//! disturb them.

use serde_json::json;

use crate::common::{
    chat_body, client, messages_body, read_sse, OpenAiStream, ProxyEnv, TestDb, API_KEY,
};
use crate::keys_support::{connect_upstream, user_id, Deployment};
use crate::metrics_support::{scrape, Scrape};

const CHAT: &str = "/v1/chat/completions";
const MESSAGES: &str = "/v1/messages";
const MODEL: &str = "claude-sonnet-4.5";

fn requests(s: &Scrape, endpoint: &str, format: &str, provider: &str, status: &str) -> f64 {
    s.value(
        "gateway_requests_total",
        &[
            ("endpoint", endpoint),
            ("format", format),
            ("provider", provider),
            ("status", status),
        ],
    )
}

#[tokio::test]
async fn proxy_mode_counts_requests_tokens_retries_and_streams() {
    let env = ProxyEnv::start(&[]).await;
    let base = env.url("");
    let before = scrape(&base).await;

    // A plain answer, a streamed answer in the messages format, an answer
    // after one upstream 429, a wrong key, and a model listing.
    let resp = env.post(CHAT, &chat_body("sim: text len=40", false)).await;
    assert_eq!(resp.status(), 200);
    resp.bytes().await.unwrap();
    let resp = env
        .post(MESSAGES, &messages_body("sim: text len=60", true))
        .await;
    assert_eq!(resp.status(), 200);
    let (_, broken) = read_sse(resp).await;
    assert!(broken.is_none());
    let resp = env
        .post(
            CHAT,
            &chat_body("sim: status code=429 times=1\nsim: text len=10", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    resp.bytes().await.unwrap();
    let resp = client()
        .post(env.url(CHAT))
        .bearer_auth("not-the-key")
        .json(&chat_body("hi", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = client()
        .get(env.url("/v1/models"))
        .bearer_auth(API_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let resp = client().get(env.url("/metrics")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let after = Scrape(resp.text().await.unwrap());
    let moved = |f: &dyn Fn(&Scrape) -> f64| f(&after) - f(&before);

    assert_eq!(
        moved(&|s| requests(s, CHAT, "openai", "primary", "200")),
        2.0
    );
    assert_eq!(
        moved(&|s| requests(s, MESSAGES, "anthropic", "primary", "200")),
        1.0
    );
    assert_eq!(moved(&|s| requests(s, CHAT, "openai", "none", "401")), 1.0);
    assert_eq!(
        moved(&|s| requests(s, "/v1/models", "openai", "none", "200")),
        1.0
    );
    assert!(after.has(
        "gateway_requests_total",
        &[("provider", "primary"), ("model", MODEL)]
    ));

    // Durations: every request; the chat calls' to the end of the answer.
    let chat_duration = |s: &Scrape| {
        s.value(
            "gateway_request_duration_seconds_count",
            &[
                ("endpoint", CHAT),
                ("provider", "primary"),
                ("model", MODEL),
            ],
        )
    };
    assert_eq!(moved(&chat_duration), 2.0);
    assert_eq!(
        moved(&|s| s.value(
            "gateway_request_duration_seconds_count",
            &[("endpoint", MESSAGES)]
        )),
        1.0
    );
    assert!(after.has(
        "gateway_request_duration_seconds_bucket",
        &[("endpoint", CHAT), ("le", "+Inf")]
    ));
    // Time to first token: the stream only.
    assert_eq!(
        moved(&|s| s.value(
            "gateway_time_to_first_token_seconds_count",
            &[("provider", "primary"), ("model", MODEL)]
        )),
        1.0
    );
    // Tokens by kind.
    for kind in ["input", "output"] {
        assert!(
            moved(&|s| s.value(
                "gateway_tokens_total",
                &[("provider", "primary"), ("model", MODEL), ("kind", kind)]
            )) > 0.0,
            "{kind} tokens"
        );
    }
    // The 429: one upstream error, one retry.
    assert_eq!(
        moved(&|s| s.value(
            "gateway_upstream_errors_total",
            &[("provider", "primary"), ("kind", "rate_limited")]
        )),
        1.0
    );
    assert_eq!(
        moved(&|s| s.value("gateway_upstream_retries_total", &[("provider", "primary")])),
        1.0
    );
    assert_eq!(after.value("gateway_open_streams", &[]), 0.0);
    assert_eq!(after.value("gateway_build_info", &[("mode", "proxy")]), 1.0);
    assert!(after
        .0
        .contains("# TYPE gateway_request_duration_seconds histogram"));
    assert!(after.0.contains("# TYPE gateway_requests_total counter"));
}

/// `gateway_open_streams` counts a stream while it is open; an answer that
/// breaks after it began counts a `stream` upstream error.
#[tokio::test]
async fn open_streams_and_broken_streams() {
    let env = ProxyEnv::start(&[]).await;
    let base = env.url("");
    let before = scrape(&base).await;
    let resp = env
        .post(
            CHAT,
            &chat_body("sim: text len=200 chunk=10 interval=50ms", true),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let during = scrape(&base).await;
    assert_eq!(during.value("gateway_open_streams", &[]), 1.0);
    resp.bytes().await.unwrap();
    let broken = OpenAiStream::read(
        env.post(
            CHAT,
            &chat_body("sim: text len=100 chunk=10 error_after=3", true),
        )
        .await,
    )
    .await;
    assert!(broken.error.is_some());
    let after = scrape(&base).await;
    assert_eq!(after.value("gateway_open_streams", &[]), 0.0);
    let stream_errors = |s: &Scrape| {
        s.value(
            "gateway_upstream_errors_total",
            &[("provider", "primary"), ("kind", "stream")],
        )
    };
    assert_eq!(stream_errors(&after) - stream_errors(&before), 1.0);
}

#[tokio::test]
async fn a_metrics_token_guards_the_scrape() {
    let env = ProxyEnv::start(&[("METRICS_TOKEN", "scrape-secret-1")]).await;
    let url = env.url("/metrics");
    let resp = client().get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["type"], "auth_error", "{v}");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("METRICS_TOKEN"));
    let resp = client()
        .get(&url)
        .bearer_auth("scrape-secret-2")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = client()
        .get(&url)
        .bearer_auth("scrape-secret-1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("gateway_build_info"));
}

/// Full deployment: the key cache's hits and misses, a rate-limited key,
/// the usage queue, and no user or key id anywhere in the scrape.
#[tokio::test]
async fn full_mode_counts_caches_and_limits_without_ids() {
    let d = Deployment::start(TestDb::sqlite()).await;
    let base = d.env.url("");
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    let resp = admin
        .post(
            "/_ui/api/keys",
            json!({"label": "one a minute", "rpm_limit": 1}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let created: serde_json::Value = resp.json().await.unwrap();
    let key = created["key"].as_str().unwrap().to_owned();
    let key_id = created["id"].as_str().unwrap().to_owned();
    let user_id = user_id(&admin).await.to_string();

    let before = scrape(&base).await;
    let chat = || async {
        client()
            .post(format!("{base}{CHAT}"))
            .bearer_auth(&key)
            .json(&chat_body("sim: text len=10", false))
            .send()
            .await
            .unwrap()
    };
    assert_eq!(chat().await.status(), 200);
    assert_eq!(chat().await.status(), 429);
    let after = scrape(&base).await;
    let moved = |name: &str, labels: &[(&str, &str)]| {
        after.value(name, labels) - before.value(name, labels)
    };
    assert_eq!(
        moved("gateway_rate_limited_total", &[("kind", "rate")]),
        1.0
    );
    assert_eq!(
        moved(
            "gateway_cache_requests_total",
            &[("cache", "api_key"), ("result", "miss")]
        ),
        1.0
    );
    assert_eq!(
        moved(
            "gateway_cache_requests_total",
            &[("cache", "api_key"), ("result", "hit")]
        ),
        1.0
    );
    assert_eq!(
        moved(
            "gateway_requests_total",
            &[("status", "429"), ("provider", "none")]
        ),
        1.0
    );
    assert!(after.has("gateway_usage_queue_depth", &[]));
    assert!(after.has("gateway_usage_dropped_total", &[]));
    // At least the connection serving this scrape is a task.
    assert!(after.value("gateway_runtime_tasks", &[]) >= 1.0);
    assert_eq!(after.value("gateway_build_info", &[("mode", "full")]), 1.0);
    for secret in [key.as_str(), key_id.as_str(), user_id.as_str()] {
        assert!(!after.0.contains(secret), "the scrape names {secret}");
    }
}
