//! Which provider serves a request (interfaces.md 5), `/v1/models` across
//! providers, and `POST /v1/messages/count_tokens`.

use serde_json::{json, Value};
use upstream_sim::{Service, Vendor};

use super::common;
use super::relay_support::{body, start, vendor_chats, Client};

/// Send `model` as an OpenAI client; the provider that got it, with the model it got.
async fn served_by(env: &common::ProxyEnv, model: &str) -> (String, String) {
    env.sim.clear();
    let resp = env
        .post(
            "/v1/chat/completions",
            &body(Client::OpenAi, model, json!("hi"), false),
        )
        .await;
    assert_eq!(
        resp.status(),
        200,
        "{model}: {}",
        resp.text().await.unwrap()
    );
    for vendor in [
        Vendor::Messages,
        Vendor::Completions,
        Vendor::Assistant,
        Vendor::Custom,
    ] {
        if let Some(sent) = vendor_chats(&env.sim, vendor).pop() {
            return (
                vendor.id().to_owned(),
                sent.json().unwrap()["model"].as_str().unwrap().to_owned(),
            );
        }
    }
    let primary = env.chat_requests();
    assert_eq!(primary.len(), 1, "{model}: nobody got it");
    let model_id = primary[0]["conversationState"]["currentMessage"]["userInputMessage"]["modelId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    ("primary".to_owned(), model_id)
}

fn pair(provider: &str, model: &str) -> (String, String) {
    (provider.to_owned(), model.to_owned())
}

#[tokio::test]
async fn families_go_to_their_own_vendor_and_the_rest_to_primary() {
    let env = start(&[Vendor::Messages, Vendor::Completions], &[]).await;
    assert_eq!(
        served_by(&env, "claude-sonnet-4-5").await,
        pair("messages_vendor", "claude-sonnet-4-5")
    );
    assert_eq!(
        served_by(&env, "claude-sonnet-4.5").await,
        pair("messages_vendor", "claude-sonnet-4-5")
    );
    assert_eq!(
        served_by(&env, "gpt-4o").await,
        pair("completions_vendor", "gpt-4o")
    );
    assert_eq!(
        served_by(&env, "o4-mini").await,
        pair("completions_vendor", "o4-mini")
    );
    assert_eq!(
        served_by(&env, "chatgpt-4o-latest").await,
        pair("completions_vendor", "chatgpt-4o-latest")
    );
    assert_eq!(
        served_by(&env, "deepseek-3.2").await,
        pair("primary", "deepseek-3.2")
    );
    // An explicit prefix wins over the family.
    assert_eq!(
        served_by(&env, "primary/claude-sonnet-4.5").await,
        pair("primary", "claude-sonnet-4.5")
    );
}

#[tokio::test]
async fn without_other_providers_everything_goes_to_primary() {
    let env = start(&[], &[]).await;
    assert_eq!(
        served_by(&env, "claude-sonnet-4.5").await,
        pair("primary", "claude-sonnet-4.5")
    );
}

#[tokio::test]
async fn listing_providers_serve_the_models_they_list() {
    let env = start(&[Vendor::Assistant, Vendor::Custom], &[]).await;
    assert_eq!(
        served_by(&env, "gpt-4o").await,
        pair("assistant_vendor", "gpt-4o")
    );
    assert_eq!(
        served_by(&env, "claude-sonnet-4.5").await,
        pair("assistant_vendor", "claude-sonnet-4.5")
    );
    assert_eq!(
        served_by(&env, "llama3.1:8b").await,
        pair("custom", "llama3.1:8b")
    );
    // Not listed anywhere: primary.
    assert_eq!(
        served_by(&env, "claude-haiku-4.5").await,
        pair("primary", "claude-haiku-4.5")
    );
}

#[tokio::test]
async fn the_native_vendor_ranks_before_the_assistant() {
    let env = start(
        &[Vendor::Assistant, Vendor::Messages, Vendor::Completions],
        &[],
    )
    .await;
    assert_eq!(
        served_by(&env, "gpt-4o").await,
        pair("completions_vendor", "gpt-4o")
    );
    assert_eq!(
        served_by(&env, "claude-sonnet-4.5").await,
        pair("messages_vendor", "claude-sonnet-4-5")
    );
    assert_eq!(
        served_by(&env, "gemini-2.5-pro").await,
        pair("assistant_vendor", "gemini-2.5-pro")
    );
    assert_eq!(
        served_by(&env, "assistant_vendor/gpt-4o").await,
        pair("assistant_vendor", "gpt-4o")
    );
}

#[tokio::test]
async fn an_explicit_but_unconfigured_provider_is_a_clear_error() {
    let env = start(&[Vendor::Messages], &[]).await;
    for (model, variable) in [
        ("completions_vendor/gpt-4o", "COMPLETIONS_VENDOR_API_KEY"),
        ("custom/llama3", "CUSTOM_BASE_URL"),
        ("assistant_vendor/gpt-4o", "ASSISTANT_VENDOR_GITHUB_TOKEN"),
    ] {
        for client in [Client::OpenAi, Client::Anthropic] {
            let resp = env
                .post(client.path(), &body(client, model, json!("hi"), true))
                .await;
            assert_eq!(resp.status(), 400, "{model}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "invalid_model");
            let message = v["error"]["message"].as_str().unwrap();
            let provider = model.split('/').next().unwrap();
            assert!(message.contains(provider), "{message}");
            assert!(message.contains("not configured"), "{message}");
            assert!(message.contains(variable), "{message}");
        }
    }
    assert!(env
        .sim
        .requests()
        .iter()
        .all(|r| r.service != Service::CompletionsVendor));
    assert!(
        env.chat_requests().is_empty(),
        "no silent fallback to primary"
    );
}

#[tokio::test]
async fn models_lists_every_configured_provider_with_prefixed_ids() {
    let env = start(
        &[
            Vendor::Messages,
            Vendor::Completions,
            Vendor::Assistant,
            Vendor::Custom,
        ],
        &[],
    )
    .await;
    let list: Value = common::client()
        .get(env.url("/v1/models"))
        .bearer_auth(common::API_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    for id in [
        "claude-sonnet-4.5",
        "messages_vendor/claude-sonnet-4-5-20250929",
        "completions_vendor/gpt-4o",
        "assistant_vendor/gpt-4o",
        "assistant_vendor/claude-sonnet-4.5",
        "custom/llama3.1:8b",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(
        !ids.contains(&"assistant_vendor/text-embedding-3-small"),
        "chat models only"
    );
    let owner = |id: &str| {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()["owned_by"]
            .clone()
    };
    assert_eq!(owner("custom/llama3.1:8b"), "custom");
    assert_eq!(owner("claude-sonnet-4.5"), "primary");
    // Each listing was fetched once and is cached.
    let again = common::client()
        .get(env.url("/v1/models"))
        .bearer_auth(common::API_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
    let fetches = env
        .sim
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/models"))
        .count();
    assert_eq!(fetches, 4, "one listing per provider");

    // The messages format's shape for its SDKs.
    let anthropic: Value = common::client()
        .get(env.url("/v1/models"))
        .bearer_auth(common::API_KEY)
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let entry = anthropic["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "messages_vendor/claude-sonnet-4-5-20250929")
        .unwrap();
    assert_eq!(entry["display_name"], "Claude Sonnet 4.5");
    assert_eq!(entry["created_at"], "2025-09-29T00:00:00Z");
}

#[tokio::test]
async fn a_failing_listing_leaves_the_others() {
    let env = start(
        &[Vendor::Completions],
        &[("COMPLETIONS_VENDOR_API_KEY", "wrong-key")],
    )
    .await;
    let list: Value = common::client()
        .get(env.url("/v1/models"))
        .bearer_auth(common::API_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"claude-sonnet-4.5"));
    assert!(!ids.iter().any(|id| id.starts_with("completions_vendor/")));
}

fn count_body(model: &str) -> Value {
    json!({
        "model": model,
        "max_tokens": 100,
        "temperature": 0.5,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "How many tokens is this?"}],
        "tools": [{"name": "t", "input_schema": {"type": "object"}}],
    })
}

#[tokio::test]
async fn count_tokens_asks_the_messages_vendor_when_it_serves_the_model() {
    let env = start(&[Vendor::Messages], &[]).await;
    let resp = env
        .post(
            "/v1/messages/count_tokens",
            &count_body("claude-sonnet-4.5"),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert!(v["input_tokens"].as_u64().unwrap() > 0, "{v}");
    let sent = env
        .sim
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/v1/messages/count_tokens"))
        .expect("the vendor was asked");
    let sent = sent.json().unwrap();
    assert_eq!(sent["model"], "claude-sonnet-4-5");
    assert!(
        sent.get("max_tokens").is_none() && sent.get("temperature").is_none(),
        "{sent}"
    );
    assert_eq!(sent["system"], "Be brief.");
    assert!(sent["tools"].is_array());
}

#[tokio::test]
async fn count_tokens_is_estimated_otherwise() {
    let env = start(&[Vendor::Completions], &[]).await;
    for model in ["claude-sonnet-4.5", "completions_vendor/gpt-4o"] {
        let mut req = count_body(model);
        req.as_object_mut().unwrap().remove("max_tokens");
        let resp = env.post("/v1/messages/count_tokens", &req).await;
        assert_eq!(resp.status(), 200, "{model}");
        let v: Value = resp.json().await.unwrap();
        assert!(v["input_tokens"].as_u64().unwrap() > 5, "{v}");
    }
    assert!(env
        .sim
        .requests()
        .iter()
        .all(|r| !r.path.contains("count_tokens")));
    let resp = env
        .post(
            "/v1/messages/count_tokens",
            &json!({"model": "x", "messages": []}),
        )
        .await;
    assert_eq!(resp.status(), 400);
}
