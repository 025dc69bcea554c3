//! Provider credentials through the gateway: the messages vendor's OAuth
//! bearer (headers, single-flight refresh, rotated tokens kept across a
//! restart, refused refresh) and the assistant vendor's exchanged token
//! (headers, re-exchange on expiry and after a 401).

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::Vendor;

use super::common::{self, config_from, proxy_env, Gateway, ProxyEnv};
use super::relay_support::{body, start, start_with_sim, vendor_chats, Client};

/// A gateway whose messages vendor uses OAuth tokens the simulator issued.
async fn oauth_env(sim: upstream_sim::SimHandle) -> (ProxyEnv, upstream_sim::OAuthTokens) {
    let tokens = sim.seed_messages_vendor_oauth();
    let oauth_url = sim.messages_vendor_oauth_url();
    let base = sim.messages_vendor_url();
    let env = start_with_sim(
        sim,
        &[],
        &[
            ("MESSAGES_VENDOR_BASE_URL", base.as_str()),
            ("MESSAGES_VENDOR_OAUTH_BASE_URL", oauth_url.as_str()),
            ("MESSAGES_VENDOR_OAUTH_TOKEN", tokens.access_token.as_str()),
            (
                "MESSAGES_VENDOR_REFRESH_TOKEN",
                tokens.refresh_token.as_str(),
            ),
        ],
    )
    .await;
    (env, tokens)
}

fn ask(client: Client) -> Value {
    body(
        client,
        "messages_vendor/claude-sonnet-4-5",
        json!("hi"),
        false,
    )
}

async fn fifty_at_once(env: &ProxyEnv) {
    let calls = (0..50).map(|i| {
        let client = if i % 2 == 0 {
            Client::Anthropic
        } else {
            Client::OpenAi
        };
        let req = ask(client);
        async move { env.post(client.path(), &req).await.status() }
    });
    for status in futures::future::join_all(calls).await {
        assert_eq!(status, 200);
    }
}

#[tokio::test]
async fn oauth_traffic_is_a_bearer_with_the_oauth_beta_merged_with_the_clients() {
    let (env, tokens) = oauth_env(common::start_sim().await).await;
    let resp = common::client()
        .post(env.url("/v1/messages"))
        .bearer_auth(common::API_KEY)
        .header("anthropic-beta", "interleaved-thinking-2025-05-14")
        .json(&ask(Client::Anthropic))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let sent = &vendor_chats(&env.sim, Vendor::Messages)[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {}", tokens.access_token).as_str())
    );
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14,oauth-2025-04-20")
    );
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(env.sim.messages_vendor_oauth_refreshes(), 0);
}

#[tokio::test]
async fn fifty_concurrent_requests_with_an_expired_oauth_token_cause_one_refresh() {
    let (env, tokens) = oauth_env(common::start_sim().await).await;
    env.sim.expire_messages_vendor_oauth_tokens();
    fifty_at_once(&env).await;
    assert_eq!(env.sim.messages_vendor_oauth_refreshes(), 1);
    assert!(
        !env.sim
            .messages_vendor_refresh_token_live(&tokens.refresh_token),
        "rotated"
    );
}

#[tokio::test]
async fn fifty_concurrent_requests_with_an_expiring_oauth_token_cause_one_refresh() {
    let sim = common::start_sim().await;
    // Refreshed tokens live 8 s: the gateway refreshes them with 4 s left
    // (half their life, as it is shorter than the 300 s margin), which
    // leaves the burst below 4 s to finish on the token it refreshed.
    sim.update_vendors(|v| v.oauth.access_token_ttl = Duration::from_secs(8));
    let (env, _) = oauth_env(sim).await;
    // The first refresh (after a rejection) tells the gateway the expiry.
    env.sim.expire_messages_vendor_oauth_tokens();
    assert_eq!(
        env.post("/v1/messages", &ask(Client::Anthropic))
            .await
            .status(),
        200
    );
    assert_eq!(env.sim.messages_vendor_oauth_refreshes(), 1);
    // Within the margin now: the next burst refreshes ahead, once.
    tokio::time::sleep(Duration::from_millis(4200)).await;
    fifty_at_once(&env).await;
    assert_eq!(env.sim.messages_vendor_oauth_refreshes(), 2);
    let calls = vendor_chats(&env.sim, Vendor::Messages).len();
    assert_eq!(calls, 52, "one rejected call, then 51 accepted ones");
}

#[tokio::test]
async fn rotated_oauth_tokens_are_used_after_a_restart() {
    let (env, tokens) = oauth_env(common::start_sim().await).await;
    env.sim.expire_messages_vendor_oauth_tokens();
    assert_eq!(
        env.post("/v1/messages", &ask(Client::Anthropic))
            .await
            .status(),
        200
    );
    assert_eq!(env.sim.messages_vendor_oauth_refreshes(), 1);
    let rotated_bearer = vendor_chats(&env.sim, Vendor::Messages)
        .last()
        .unwrap()
        .header("authorization")
        .unwrap()
        .to_owned();

    // The same configuration (the original, now dead, refresh token) and DATA_DIR.
    let mut vars = proxy_env(&env.sim, &env.dir);
    for (k, v) in [
        ("MESSAGES_VENDOR_BASE_URL", env.sim.messages_vendor_url()),
        (
            "MESSAGES_VENDOR_OAUTH_BASE_URL",
            env.sim.messages_vendor_oauth_url(),
        ),
        ("MESSAGES_VENDOR_OAUTH_TOKEN", tokens.access_token.clone()),
        (
            "MESSAGES_VENDOR_REFRESH_TOKEN",
            tokens.refresh_token.clone(),
        ),
    ] {
        vars.push((k.to_owned(), v));
    }
    let again = Gateway::start(config_from(vars)).await;
    let resp = common::client()
        .post(again.url("/v1/messages"))
        .bearer_auth(common::API_KEY)
        .json(&ask(Client::Anthropic))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        env.sim.messages_vendor_oauth_refreshes(),
        1,
        "no new refresh needed"
    );
    let used = vendor_chats(&env.sim, Vendor::Messages)
        .last()
        .unwrap()
        .header("authorization")
        .unwrap()
        .to_owned();
    assert_eq!(used, rotated_bearer);
    let stored = std::fs::read_to_string(env.dir.path().join("provider_tokens.json")).unwrap();
    assert!(
        !stored.contains(&tokens.refresh_token),
        "only a hash of the configured token"
    );
}

#[tokio::test]
async fn a_refused_oauth_refresh_says_which_variables_to_renew() {
    let sim = common::start_sim().await;
    sim.update_vendors(|v| v.oauth.reject_refresh = true);
    let (env, _) = oauth_env(sim).await;
    env.sim.expire_messages_vendor_oauth_tokens();
    let resp = env.post("/v1/messages", &ask(Client::Anthropic)).await;
    assert_eq!(resp.status(), 401);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["type"], "upstream_api_error");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("MESSAGES_VENDOR_REFRESH_TOKEN"),
        "{message}"
    );
}

fn assistant_ask(content: Value) -> Value {
    body(Client::OpenAi, "assistant_vendor/gpt-4o", content, false)
}

#[tokio::test]
async fn the_assistant_token_is_exchanged_once_and_sent_with_the_editor_headers() {
    let env = start(&[Vendor::Assistant], &[]).await;
    for _ in 0..3 {
        let resp = env
            .post("/v1/chat/completions", &assistant_ask(json!("hi")))
            .await;
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(
        env.sim.assistant_vendor_exchanges(),
        1,
        "cached until it is due"
    );
    let exchange = env
        .sim
        .requests()
        .into_iter()
        .find(|r| r.service == upstream_sim::Service::AssistantVendorCodeHost)
        .unwrap();
    assert_eq!(
        exchange.header("authorization"),
        Some(format!("token {}", env.sim.assistant_vendor_github_token()).as_str())
    );
    assert!(exchange.header("editor-version").is_some());
    let chats = vendor_chats(&env.sim, Vendor::Assistant);
    let sent = &chats[0];
    assert!(sent.header("authorization").unwrap().starts_with("Bearer "));
    for (name, value) in [
        ("copilot-integration-id", "vscode-chat"),
        ("editor-version", "vscode/1.104.1"),
        ("editor-plugin-version", "copilot-chat/0.26.7"),
        ("user-agent", "GitHubCopilotChat/0.26.7"),
        ("openai-intent", "conversation-panel"),
        ("x-github-api-version", "2025-04-01"),
        ("x-initiator", "user"),
    ] {
        assert_eq!(sent.header(name), Some(value), "{name}");
    }
    assert_eq!(sent.header("copilot-vision-request"), None);
    let ids: std::collections::HashSet<_> = chats
        .iter()
        .map(|c| c.header("x-request-id").unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 3, "a fresh X-Request-Id per request");

    // A tool result last: the agent speaks.
    let follow_up = json!({
        "model": "assistant_vendor/gpt-4o",
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    });
    assert_eq!(
        env.post("/v1/chat/completions", &follow_up).await.status(),
        200
    );
    let last = vendor_chats(&env.sim, Vendor::Assistant).pop().unwrap();
    assert_eq!(last.header("x-initiator"), Some("agent"));
}

#[tokio::test]
async fn the_assistant_token_is_exchanged_again_when_it_expires() {
    let sim = common::start_sim().await;
    sim.update_vendors(|v| v.assistant_token_ttl = Duration::from_secs(2));
    let env = start_with_sim(sim, &[Vendor::Assistant], &[]).await;
    assert_eq!(
        env.post("/v1/chat/completions", &assistant_ask(json!("a")))
            .await
            .status(),
        200
    );
    assert_eq!(env.sim.assistant_vendor_exchanges(), 1);
    // Used until half its two seconds are left.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        env.post("/v1/chat/completions", &assistant_ask(json!("b")))
            .await
            .status(),
        200
    );
    assert_eq!(env.sim.assistant_vendor_exchanges(), 2);
    assert_eq!(
        vendor_chats(&env.sim, Vendor::Assistant).len(),
        2,
        "no rejected call"
    );
}

#[tokio::test]
async fn a_rejected_assistant_token_is_exchanged_again_and_the_call_retried_once() {
    let env = start(&[Vendor::Assistant], &[]).await;
    assert_eq!(
        env.post("/v1/chat/completions", &assistant_ask(json!("a")))
            .await
            .status(),
        200
    );
    env.sim.expire_assistant_vendor_tokens();
    for client in [Client::OpenAi, Client::Anthropic] {
        let req = body(client, "assistant_vendor/gpt-4o", json!("b"), true);
        let resp = env.post(client.path(), &req).await;
        assert_eq!(resp.status(), 200, "{client:?}");
        let _ = resp.text().await.unwrap();
        env.sim.expire_assistant_vendor_tokens();
    }
    assert_eq!(env.sim.assistant_vendor_exchanges(), 3);
    // 1 + (rejected + accepted) x 2.
    assert_eq!(vendor_chats(&env.sim, Vendor::Assistant).len(), 5);
}

#[tokio::test]
async fn an_account_without_the_assistant_is_a_clear_error() {
    let sim = common::start_sim().await;
    sim.update_vendors(|v| v.deny_assistant_exchange = true);
    let env = start_with_sim(sim, &[Vendor::Assistant], &[]).await;
    let resp = env
        .post("/v1/chat/completions", &assistant_ask(json!("a")))
        .await;
    assert_eq!(resp.status(), 404);
    let v: Value = resp.json().await.unwrap();
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("ASSISTANT_VENDOR_GITHUB_TOKEN"),
        "{message}"
    );
}

#[tokio::test]
async fn api_keys_are_sent_as_each_vendor_wants() {
    let env = start(
        &[Vendor::Messages, Vendor::Completions, Vendor::Custom],
        &[],
    )
    .await;
    for (vendor, model, client) in [
        (
            Vendor::Messages,
            "messages_vendor/claude-sonnet-4-5",
            Client::OpenAi,
        ),
        (
            Vendor::Completions,
            "completions_vendor/gpt-4o",
            Client::Anthropic,
        ),
        (Vendor::Custom, "custom/llama3", Client::Anthropic),
    ] {
        let resp = env
            .post(client.path(), &body(client, model, json!("hi"), false))
            .await;
        assert_eq!(resp.status(), 200, "{vendor}");
        let sent = vendor_chats(&env.sim, vendor).pop().unwrap();
        match vendor {
            Vendor::Messages => {
                assert_eq!(
                    sent.header("x-api-key"),
                    Some(env.sim.messages_vendor_api_key().as_str())
                );
                assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(sent.header("anthropic-beta"), None);
            }
            Vendor::Completions => assert_eq!(
                sent.header("authorization"),
                Some(format!("Bearer {}", env.sim.completions_vendor_api_key()).as_str())
            ),
            _ => assert_eq!(
                sent.header("authorization"),
                Some(format!("Bearer {}", env.sim.custom_api_key().unwrap()).as_str())
            ),
        }
    }
}
