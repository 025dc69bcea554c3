//! `GET /v1/models` in proxy mode: the simulator's models under their own ids,
//! each usable as `model` as it is, and the dated and dashed vendor names
//! resolving to the upstream id.

use std::collections::BTreeSet;

use serde_json::Value;
use upstream_sim::primary::events::default_answer_text;

use crate::common::*;

#[tokio::test]
async fn models_are_listed_and_every_id_is_usable() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client()
        .get(env.url("/v1/models"))
        .bearer_auth(API_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let list: Value = resp.json().await.unwrap();
    assert_eq!(list["object"], "list");
    let data = list["data"].as_array().unwrap();
    let listed: BTreeSet<&str> = data.iter().map(|m| m["id"].as_str().unwrap()).collect();
    let upstream: BTreeSet<String> = upstream_sim::primary::models::default_models()
        .into_iter()
        .map(|m| m.model_id)
        .collect();
    let upstream: BTreeSet<&str> = upstream.iter().map(String::as_str).collect();
    assert_eq!(listed, upstream);
    for m in data {
        assert_eq!(m["object"], "model");
        assert!(m["created"].as_u64().unwrap() > 0);
        assert!(m["owned_by"].as_str().is_some_and(|o| !o.is_empty()));
        assert!(
            m["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{m}"
        );
    }

    for id in &listed {
        let mut body = chat_body("hello", false);
        body["model"] = Value::from(*id);
        let resp = env.post("/v1/chat/completions", &body).await;
        assert_eq!(resp.status(), 200, "{id}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["model"], *id);
        assert_eq!(
            v["choices"][0]["message"]["content"],
            default_answer_text(id),
            "{id} goes upstream as it is"
        );
    }

    // Missing key: the list is behind client auth too.
    let resp = client().get(env.url("/v1/models")).send().await.unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn vendor_style_names_resolve() {
    let env = ProxyEnv::start(&[]).await;
    for name in [
        "claude-sonnet-4-5-20250929",
        "claude-sonnet-4-5",
        "claude-sonnet-4.5",
    ] {
        let mut body = messages_body("hello", false);
        body["model"] = Value::from(name);
        let resp = env.post("/v1/messages", &body).await;
        assert_eq!(resp.status(), 200, "{name}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(
            v["model"], name,
            "the answer names the model as the client did"
        );
        assert_eq!(
            v["content"][0]["text"],
            default_answer_text("claude-sonnet-4.5")
        );
        let sent = env.chat_requests();
        let model = &sent.last().unwrap()["conversationState"]["currentMessage"]
            ["userInputMessage"]["modelId"];
        assert_eq!(model, "claude-sonnet-4.5", "{name}");
    }
}
