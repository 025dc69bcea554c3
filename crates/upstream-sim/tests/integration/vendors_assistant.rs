//! The assistant vendor over HTTP: the token exchange (credentials, user
//! agent, denial), expiry and re-exchange, the required editor headers, chat
//! in both modes and the model list.

use std::time::Duration;

use serde_json::Value;
use upstream_sim::{Service, SimConfig, SimHandle, Vendor, VendorScenario, VendorsConfig};

use crate::common::*;
use crate::vendors_support::*;

async fn exchange(sim: &SimHandle, auth: Option<&str>, user_agent: bool) -> reqwest::Response {
    let mut req = client().get(sim.assistant_vendor_token_url());
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    if user_agent {
        req = req.header("user-agent", "GitHubCopilotChat/0.26.7");
    }
    req.send().await.unwrap()
}

async fn token(sim: &SimHandle) -> Value {
    let auth = format!("token {}", sim.assistant_vendor_github_token());
    let resp = exchange(sim, Some(&auth), true).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

fn chat_request(api: &str, token: &str, body: &Value) -> reqwest::RequestBuilder {
    client()
        .post(format!("{api}/chat/completions"))
        .bearer_auth(token)
        .header("Copilot-Integration-Id", "vscode-chat")
        .header("Editor-Version", "vscode/1.104.1")
        .header("Editor-Plugin-Version", "copilot-chat/0.26.7")
        .json(body)
}

#[tokio::test]
async fn exchange_answers_a_token_and_the_api_endpoint() {
    let sim = sim().await;
    let t = token(&sim).await;
    let token = t["token"].as_str().unwrap();
    assert!(token.starts_with("tid=") && token.contains(";exp="));
    let expires_at = t["expires_at"].as_u64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(expires_at >= now + 1799 && expires_at <= now + 1801);
    assert_eq!(t["refresh_in"], 1500);
    assert_eq!(t["endpoints"]["api"], sim.assistant_vendor_api_url());
    assert_eq!(t["chat_enabled"], true);
    assert_eq!(sim.assistant_vendor_exchanges(), 1);
    let recorded = sim.requests_to("/assistant_vendor_code_host/copilot_internal/v2/token");
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].service, Service::AssistantVendorCodeHost);
    assert_eq!(
        recorded[0].header("user-agent"),
        Some("GitHubCopilotChat/0.26.7")
    );
}

#[tokio::test]
async fn exchange_refusals() {
    let sim = sim().await;
    let good = format!("token {}", sim.assistant_vendor_github_token());
    let resp = exchange(&sim, Some("token gho_wrong"), true).await;
    let (status, _, err) = json_of(resp).await;
    assert_eq!(
        (status, err["message"].as_str()),
        (401, Some("Bad credentials"))
    );
    assert_eq!(exchange(&sim, None, true).await.status(), 401);
    let resp = exchange(&sim, Some(&good), false).await;
    assert_eq!(resp.status(), 403);
    assert!(resp.text().await.unwrap().contains("User-Agent"));
    // The code host also takes `Bearer`.
    let bearer = format!("Bearer {}", sim.assistant_vendor_github_token());
    assert_eq!(exchange(&sim, Some(&bearer), true).await.status(), 200);
    sim.update_vendors(|c| c.deny_assistant_exchange = true);
    assert_eq!(exchange(&sim, Some(&good), true).await.status(), 404);
    assert_eq!(sim.assistant_vendor_exchanges(), 1);
}

#[tokio::test]
async fn chat_streaming_and_not() {
    let sim = sim().await;
    let t = token(&sim).await;
    let (api, token) = (
        t["endpoints"]["api"].as_str().unwrap(),
        t["token"].as_str().unwrap(),
    );
    let resp = chat_request(
        api,
        token,
        &openai_body("claude-sonnet-4.5", "sim: text len=40 chunk=10", true),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp
        .headers()
        .contains_key("x-ratelimit-remaining-requests"));
    let read = read_sse(resp).await;
    assert!(read.done());
    assert_eq!(read.openai_text().chars().count(), 40);
    assert_eq!(read.chunks()[0]["model"], "claude-sonnet-4.5");
    let resp = chat_request(
        api,
        token,
        &openai_body("gpt-4.1", "sim: echo\nhello", false),
    )
    .send()
    .await
    .unwrap();
    let (status, _, whole) = json_of(resp).await;
    assert_eq!(status, 200);
    assert_eq!(
        whole["choices"][0]["message"]["content"],
        "sim: echo\nhello"
    );
    let recorded = sim.requests_to("/assistant_vendor_api/chat/completions");
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].service, Service::AssistantVendorApi);
    assert_eq!(
        recorded[0].header("editor-plugin-version"),
        Some("copilot-chat/0.26.7")
    );
    assert_eq!(sim.vendor_stream_stats(Vendor::Assistant).completed, 1);
}

#[tokio::test]
async fn expired_token_is_401_and_a_new_exchange_works() {
    let config = SimConfig {
        vendors: VendorsConfig {
            assistant_token_ttl: Duration::from_millis(300),
            ..VendorsConfig::default()
        },
        ..SimConfig::default()
    };
    let sim = sim_with(config).await;
    let t = token(&sim).await;
    assert_eq!(
        t["refresh_in"], 0,
        "a sub-second lifetime asks for a refresh at once"
    );
    let api = sim.assistant_vendor_api_url();
    let body = openai_body("gpt-4o", "hi", false);
    let old = t["token"].as_str().unwrap();
    assert_eq!(
        chat_request(&api, old, &body)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    tokio::time::sleep(Duration::from_millis(350)).await;
    let (status, _, err) = json_of(chat_request(&api, old, &body).send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert_eq!(err["error"]["code"], "token_expired");
    let fresh = token(&sim).await;
    assert_ne!(fresh["token"], t["token"]);
    let resp = chat_request(&api, fresh["token"].as_str().unwrap(), &body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(sim.assistant_vendor_exchanges(), 2);

    // Expiring on demand.
    sim.update_vendors(|c| c.assistant_token_ttl = Duration::from_secs(1800));
    let issued = sim.issue_assistant_vendor_token();
    assert_eq!(
        chat_request(&api, &issued.token, &body)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    sim.expire_assistant_vendor_tokens();
    assert_eq!(
        chat_request(&api, &issued.token, &body)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
}

#[tokio::test]
async fn required_headers_and_unknown_tokens() {
    let sim = sim().await;
    let issued = sim.issue_assistant_vendor_token();
    let api = sim.assistant_vendor_api_url();
    let body = openai_body("gpt-4o", "hi", false);
    for missing in ["Copilot-Integration-Id", "Editor-Version"] {
        let mut req = client()
            .post(format!("{api}/chat/completions"))
            .bearer_auth(&issued.token)
            .json(&body);
        for (name, value) in [
            ("Copilot-Integration-Id", "vscode-chat"),
            ("Editor-Version", "vscode/1.104.1"),
        ] {
            if name != missing {
                req = req.header(name, value);
            }
        }
        let (status, _, err) = json_of(req.send().await.unwrap()).await;
        assert_eq!(status, 400);
        assert!(err["error"]["message"].as_str().unwrap().contains(missing));
    }
    let (status, _, err) = json_of(
        chat_request(&api, "tid=forged", &body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (401, Some("invalid_token"))
    );
    // The assistant's queue is its own.
    sim.push_vendor_scenario(Vendor::Assistant, VendorScenario::status(503));
    let resp = chat_request(&api, &issued.token, &body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    let resp = post_completions(&sim, &body).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn models_with_capabilities() {
    let sim = sim().await;
    let issued = sim.issue_assistant_vendor_token();
    let resp = client()
        .get(format!("{}/models", sim.assistant_vendor_api_url()))
        .bearer_auth(&issued.token)
        .header("Copilot-Integration-Id", "vscode-chat")
        .header("Editor-Version", "vscode/1.104.1")
        .send()
        .await
        .unwrap();
    let (status, _, list) = json_of(resp).await;
    assert_eq!(status, 200);
    assert_eq!(list["object"], "list");
    let sonnet = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "claude-sonnet-4.5")
        .unwrap();
    assert_eq!(sonnet["object"], "model");
    assert_eq!(sonnet["vendor"], "Anthropic");
    assert_eq!(sonnet["capabilities"]["type"], "chat");
    assert_eq!(sonnet["capabilities"]["supports"]["streaming"], true);
    assert!(sonnet["capabilities"]["limits"]["max_context_window_tokens"].is_u64());
}

#[tokio::test]
async fn image_requests_need_the_vision_header() {
    let sim = sim().await;
    let issued = sim.issue_assistant_vendor_token();
    let api = sim.assistant_vendor_api_url();
    let body = serde_json::json!({"model": "gpt-4o", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]});
    let (status, _, err) = json_of(
        chat_request(&api, &issued.token, &body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Copilot-Vision-Request"));
    let resp = chat_request(&api, &issued.token, &body)
        .header("Copilot-Vision-Request", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // The completions vendor has no such rule.
    assert_eq!(post_completions(&sim, &body).await.status(), 200);
}
