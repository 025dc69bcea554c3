//! Usage over HTTP (spec 2.9): a row per `/v1` chat request, streaming and
//! not, in both formats, with the tokens the client was told, the status and
//! the latency; the reports of `/_ui/api/usage`, `/_ui/api/admin/usage` and
//! `/_ui/api/admin/usage/users` grouped by day, model and provider, filtered
//! by dates, and who may read which.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::{chat_body, messages_body, AnthropicStream, OpenAiStream, TestDb};
use crate::keys_support::{connect_upstream, create_key, user_id, Deployment, KeyHeader};
use gateway::store::ids::UserId;
use gateway::store::usage::UsageRecord;

both_stores!(every_chat_request_is_recorded_and_reported);

/// The usage rows of `user`, once they stand for `n` requests (written
/// within a couple of seconds, off the hot path).
async fn records(d: &Deployment, user: UserId, n: usize) -> Vec<UsageRecord> {
    let rows = d.env.db.usage_rows(user, n).await;
    assert_eq!(crate::common::requests_in(&rows), n, "{rows:?}");
    rows
}

async fn report(ui: &crate::common::UiClient, path: &str) -> Value {
    let resp = ui.get(path).await;
    assert_eq!(resp.status(), 200, "{path}");
    resp.json().await.unwrap()
}

fn today() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}",
        now.year(),
        u8::from(now.month()),
        now.day()
    )
}

async fn every_chat_request_is_recorded_and_reported(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    let created = create_key(&admin, "usage").await;
    let key = created["key"].as_str().unwrap();
    let key_id = created["id"].as_str().unwrap();

    // 1: chat completions, whole.
    let resp = d
        .v1(
            "/chat/completions",
            key,
            KeyHeader::Bearer,
            &chat_body("one", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let whole: Value = resp.json().await.unwrap();
    // 2: chat completions, streamed.
    let resp = d
        .v1(
            "/chat/completions",
            key,
            KeyHeader::Bearer,
            &chat_body("two", true),
        )
        .await;
    let streamed = OpenAiStream::read(resp).await;
    let stream_usage = streamed
        .chunks
        .iter()
        .find(|c| c.get("usage").is_some_and(|u| !u.is_null()))
        .map(|c| c["usage"].clone())
        .expect("a usage chunk");
    // 3: messages, streamed.
    let resp = d
        .v1(
            "/messages",
            key,
            KeyHeader::XApiKey,
            &messages_body("three", true),
        )
        .await;
    let events = AnthropicStream::read(resp).await;
    let delta_usage = events.all("message_delta")[0]["usage"].clone();
    // 4: messages, whole.
    let resp = d
        .v1(
            "/messages",
            key,
            KeyHeader::XApiKey,
            &messages_body("four", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let message: Value = resp.json().await.unwrap();
    // 5: refused by validation (recorded, with no route).
    let resp = d
        .v1(
            "/chat/completions",
            key,
            KeyHeader::Bearer,
            &json!({"model": "claude-sonnet-4.5", "messages": []}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    // Not chat calls: no usage rows.
    let resp = crate::common::client()
        .get(d.env.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let admin_id = user_id(&admin).await;
    let rows = records(&d, admin_id, 5).await;
    // Requests of one second that differ only in their counts share a row:
    // the two whole answers may, and the two streams.
    let (routed, refused): (Vec<&UsageRecord>, Vec<&UsageRecord>) =
        rows.iter().partition(|r| r.status != 400);
    let model = routed[0].model.clone();
    assert!(!model.is_empty());
    for r in &routed {
        assert_eq!(r.provider, "primary", "{r:?}");
        assert_eq!(r.model, model, "{r:?}");
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.key_id.map(|k| k.to_string()).as_deref(), Some(key_id));
        assert!(r.input_tokens > 0 && r.output_tokens > 0, "{r:?}");
        assert!(r.latency_ms >= 0);
    }
    let of_kind = |stream: bool| -> Vec<&UsageRecord> {
        routed
            .iter()
            .copied()
            .filter(|r| r.stream == stream)
            .collect()
    };
    let (whole_rows, stream_rows) = (of_kind(false), of_kind(true));
    let sum =
        |rows: &[&UsageRecord], f: fn(&UsageRecord) -> i64| rows.iter().map(|r| f(r)).sum::<i64>();
    assert_eq!(sum(&whole_rows, |r| r.requests), 2, "{rows:?}");
    assert_eq!(sum(&stream_rows, |r| r.requests), 2, "{rows:?}");
    // The tokens are the ones the clients were told.
    let prompt = |u: &Value| u["prompt_tokens"].as_i64().unwrap();
    let completion = |u: &Value| u["completion_tokens"].as_i64().unwrap();
    let number = |v: &Value| v.as_i64().unwrap_or(0);
    let message_input = number(&message["usage"]["input_tokens"])
        + number(&message["usage"]["cache_read_input_tokens"])
        + number(&message["usage"]["cache_creation_input_tokens"]);
    assert_eq!(
        sum(&whole_rows, |r| r.input_tokens
            + r.cache_read_tokens
            + r.cache_write_tokens),
        prompt(&whole["usage"]) + message_input
    );
    assert_eq!(
        sum(&whole_rows, |r| r.output_tokens),
        completion(&whole["usage"]) + number(&message["usage"]["output_tokens"])
    );
    assert_eq!(
        sum(&stream_rows, |r| r.output_tokens),
        completion(&stream_usage) + number(&delta_usage["output_tokens"])
    );
    let [refused] = refused[..] else {
        panic!("one refused request: {rows:?}")
    };
    assert_eq!((refused.status, refused.provider.as_str()), (400, ""));
    assert_eq!(refused.requests, 1);
    assert_eq!(refused.input_tokens + refused.output_tokens, 0);

    // Own report, by day (the default): one day, five requests, one error.
    let sum = |f: fn(&UsageRecord) -> i64| rows.iter().map(f).sum::<i64>();
    let by_day = report(&admin, "/_ui/api/usage").await;
    assert_eq!(by_day["group_by"], "day");
    assert_eq!(by_day["count"], 1, "{by_day}");
    let row = &by_day["rows"][0];
    assert_eq!(row["group"], today());
    assert_eq!(row["requests"], 5);
    assert_eq!(row["errors"], 1);
    assert_eq!(row["input_tokens"], sum(|r| r.input_tokens));
    assert_eq!(row["output_tokens"], sum(|r| r.output_tokens));
    assert_eq!(by_day["totals"]["requests"], 5);

    // By model and by provider: the routed requests and the refused one.
    for (group, name) in [("model", model.as_str()), ("provider", "primary")] {
        let body = report(&admin, &format!("/_ui/api/usage?group_by={group}")).await;
        assert_eq!(body["count"], 2, "{body}");
        let rows: Vec<&Value> = body["rows"].as_array().unwrap().iter().collect();
        let routed = rows
            .iter()
            .find(|r| r["group"] == name)
            .expect("the routed group");
        assert_eq!(routed["requests"], 4);
        assert_eq!(routed["errors"], 0);
        let unrouted = rows
            .iter()
            .find(|r| r["group"] == "")
            .expect("the refused request");
        assert_eq!(unrouted["requests"], 1);
        assert_eq!(unrouted["errors"], 1);
        // Most tokens first.
        assert_eq!(rows[0]["group"], name);
    }

    // Date ranges.
    let tomorrow = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    let tomorrow = format!(
        "{:04}-{:02}-{:02}",
        tomorrow.year(),
        u8::from(tomorrow.month()),
        tomorrow.day()
    );
    let body = report(&admin, &format!("/_ui/api/usage?from={tomorrow}")).await;
    assert_eq!(body["count"], 0);
    assert_eq!(body["totals"]["requests"], 0);
    let body = report(
        &admin,
        &format!("/_ui/api/usage?from={}&to={}", today(), today()),
    )
    .await;
    assert_eq!(body["totals"]["requests"], 5);
    let body = report(
        &admin,
        "/_ui/api/usage?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z",
    )
    .await;
    assert_eq!(body["count"], 0);
    for bad in [
        "from=yesterday",
        "group_by=week",
        "to=2000-01-01&from=2001-01-01",
    ] {
        let resp = admin.get(&format!("/_ui/api/usage?{bad}")).await;
        assert_eq!(resp.status(), 400, "{bad}");
    }

    // A second user: their own report sees only theirs; admins see both.
    let bob = d.user(&admin, "bob@example.com").await;
    connect_upstream(&bob).await;
    let bob_key = create_key(&bob, "bob").await["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let resp = d
        .v1(
            "/chat/completions",
            &bob_key,
            KeyHeader::Bearer,
            &chat_body("bob", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let bob_id = user_id(&bob).await;
    records(&d, bob_id, 1).await;
    let body = report(&bob, "/_ui/api/usage").await;
    assert_eq!(body["totals"]["requests"], 1);
    assert_eq!(bob.get("/_ui/api/admin/usage").await.status(), 403);
    assert_eq!(bob.get("/_ui/api/admin/usage/users").await.status(), 403);
    assert_eq!(
        bob.get(&format!("/_ui/api/usage?user_id={admin_id}"))
            .await
            .status(),
        400
    );

    let body = report(&admin, "/_ui/api/admin/usage").await;
    assert_eq!(body["totals"]["requests"], 6);
    let body = report(&admin, &format!("/_ui/api/admin/usage?user_id={bob_id}")).await;
    assert_eq!(body["totals"]["requests"], 1);
    let body = report(&admin, "/_ui/api/admin/usage?group_by=provider").await;
    let primary = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "primary")
        .unwrap()
        .clone();
    assert_eq!(primary["requests"], 5);

    let body = report(&admin, "/_ui/api/admin/usage/users").await;
    assert_eq!(body["count"], 2, "{body}");
    let by_email: Vec<(String, i64)> = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["email"].as_str().unwrap().to_owned(),
                r["requests"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by_email,
        [
            ("admin@example.com".to_owned(), 5),
            ("bob@example.com".to_owned(), 1)
        ]
    );
    assert_eq!(body["rows"][1]["user_id"], bob_id.to_string());
    let body = report(&admin, "/_ui/api/admin/usage/users?group_by=day").await;
    assert_eq!(body["count"], 2);
    assert_eq!(body["rows"][0]["group"], today());
}
