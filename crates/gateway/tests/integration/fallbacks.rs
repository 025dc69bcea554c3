//! Fallback chains through the real gateway (issue 21): an administrator's
//! chain `claude-sonnet-4.5` -> (an unconnected provider, skipped) ->
//! `completions_vendor/gpt-4o` takes over when `primary` answers 500, 429
//! or drops the connection before its answer begins, in both client
//! formats, streamed and not; the answer names the model and provider that
//! served it and usage is recorded against them; a model without a chain
//! keeps its error.

use serde_json::{json, Value};
use upstream_sim::{Scenario, Vendor};

use crate::accounts_support::{connect_vendor, v1_key, vendors_env};
use crate::common::{chat_body, client, messages_body, start_sim, FullEnv, TestDb};
use crate::keys_support::{connect_upstream, user_id};

crate::both_stores!(a_chain_takes_over_before_the_first_byte);

async fn v1(
    env: &FullEnv,
    key: &str,
    anthropic: bool,
    stream: bool,
    model: &str,
) -> reqwest::Response {
    let (path, mut body) = if anthropic {
        ("/v1/messages", messages_body("hi", stream))
    } else {
        ("/v1/chat/completions", chat_body("hi", stream))
    };
    body["model"] = json!(model);
    client()
        .post(env.url(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The `model` an answer names: the JSON's, or the stream's first event's.
async fn answered_model(resp: reqwest::Response, stream: bool) -> String {
    let text = resp.text().await.unwrap();
    if !stream {
        let v: Value = serde_json::from_str(&text).unwrap();
        return v["model"].as_str().unwrap_or_default().to_owned();
    }
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(m) = v["model"].as_str().or(v["message"]["model"].as_str()) {
            return m.to_owned();
        }
    }
    panic!("no model in the stream: {text}");
}

async fn a_chain_takes_over_before_the_first_byte(db: TestDb) {
    let sim = start_sim().await;
    let env = vendors_env(db, &sim).await;
    let admin = env.admin().await;
    connect_upstream(&admin).await;
    connect_vendor(
        &admin,
        &sim,
        Vendor::Completions,
        "completions_vendor",
        "sk-admin-openai",
        json!({}),
    )
    .await;
    let key = v1_key(&admin).await;

    let chains = json!({"chains": [{
        "model": "claude-sonnet-4.5",
        "fallbacks": ["messages_vendor/claude-sonnet-4-5-20250929", "completions_vendor/gpt-4o"],
    }]});
    let resp = admin.put("/_ui/api/admin/fallbacks", chains.clone()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap(), chains);
    let stored: Value = admin
        .get("/_ui/api/admin/fallbacks")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(stored, chains);
    let bad = json!({"chains": [{"model": "a", "fallbacks": ["a"]}]});
    assert_eq!(
        admin.put("/_ui/api/admin/fallbacks", bad).await.status(),
        400
    );

    // Healthy: the model itself answers.
    let resp = v1(&env, &key, false, false, "claude-sonnet-4.5").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-gateway-provider"], "primary");

    let before = sim.requests().len();
    let faults = [
        "status code=500",
        "status code=429",
        "default disconnect_after=0",
    ];
    for fault in faults {
        sim.set_default_scenario(Some(fault.parse::<Scenario>().unwrap()));
        for (anthropic, stream) in [(false, false), (false, true), (true, false), (true, true)] {
            let resp = v1(&env, &key, anthropic, stream, "claude-sonnet-4.5").await;
            let what = format!("{fault}, anthropic {anthropic}, stream {stream}");
            assert_eq!(resp.status(), 200, "{what}");
            assert_eq!(
                resp.headers()["x-gateway-provider"],
                "completions_vendor",
                "{what}"
            );
            let model = answered_model(resp, stream).await;
            assert!(model.contains("gpt-4o"), "{what}: {model}");
        }
    }
    assert!(sim.requests().len() > before);
    // A model without a chain keeps its error.
    let resp = v1(&env, &key, false, false, "claude-haiku-4.5").await;
    assert_eq!(resp.status(), 502, "the drop is a 502 without a chain");
    sim.set_default_scenario(None);

    // Usage went to what answered.
    let me = user_id(&admin).await;
    let rows = env.db.usage_rows(me, 14).await;
    let served: Vec<_> = rows
        .iter()
        .filter(|r| r.provider == "completions_vendor")
        .collect();
    let requests: i64 = served.iter().map(|r| r.requests).sum();
    assert_eq!(requests, 12, "{rows:?}");
    assert!(served
        .iter()
        .all(|r| r.model == "gpt-4o" && r.status == 200));
}
