//! Native pass-through is byte-faithful: the client's body reaches the
//! provider with only `model` rewritten (unknown fields, number spellings and
//! order kept), and the provider's answer reaches the client as it was sent,
//! unknown events and fields included.

use serde_json::{json, Value};
use upstream_sim::Vendor;

use super::common::{client, read_sse, API_KEY};
use super::relay_support::{only_chat, start, vendor_chats};

/// `"id":"..."` and `"system_fingerprint":"..."` values and `"created":N`
/// numbers replaced, so two answers to the same request compare equal.
fn mask(text: &str) -> String {
    mask_ids_and_times(&mask_string(text, "system_fingerprint"))
}

/// `"key":"..."` string values replaced by `*`.
fn mask_string(text: &str, key: &str) -> String {
    let pattern = format!("\"{key}\":\"");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&pattern) {
        let start = at + pattern.len();
        out.push_str(&rest[..start]);
        let end = start + rest[start..].find('"').unwrap();
        out.push('*');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `"id":"..."` values and `"created":N` numbers replaced.
fn mask_ids_and_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let id = rest.find("\"id\":\"");
        let created = rest.find("\"created\":");
        let (at, is_id) = match (id, created) {
            (Some(a), Some(b)) if a < b => (a, true),
            (Some(a), None) => (a, true),
            (_, Some(b)) => (b, false),
            (None, None) => break,
        };
        if is_id {
            let start = at + "\"id\":\"".len();
            out.push_str(&rest[..start]);
            let end = start + rest[start..].find('"').unwrap();
            out.push('*');
            rest = &rest[end..];
        } else {
            let start = at + "\"created\":".len();
            out.push_str(&rest[..start]);
            let digits = rest[start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .count();
            out.push('0');
            rest = &rest[start + digits..];
        }
    }
    out.push_str(rest);
    out
}

async fn post_raw(
    base: &str,
    path: &str,
    raw: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = client()
        .post(format!("{base}{path}"))
        .bearer_auth(API_KEY)
        .header("content-type", "application/json")
        .body(raw.to_owned());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn unknown_request_fields_reach_the_messages_vendor_byte_for_byte() {
    let env = start(&[Vendor::Messages], &[]).await;
    let raw = r#"{"model":"messages_vendor/claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":[{"type":"text","text":"hi \u00e9 ✓","cache_control":{"type":"ephemeral"}}]}],"temperature":1.0e0,"x_vendor_field":{"nested":[1,2.50,"é",null]},"context_management":{"edits":[]},"stream":false}"#;
    let resp = post_raw(
        &env.gateway.base,
        "/v1/messages",
        raw,
        &[
            ("anthropic-beta", "context-management-2025-06-27"),
            ("anthropic-version", "2023-06-01"),
        ],
    )
    .await;
    assert_eq!(resp.status(), 200);
    let sent = only_chat(&env.sim, Vendor::Messages);
    let expected = raw.replace("messages_vendor/claude-sonnet-4-5", "claude-sonnet-4-5");
    assert_eq!(std::str::from_utf8(&sent.body).unwrap(), expected);
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("context-management-2025-06-27")
    );
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.header("x-api-key"),
        Some(env.sim.messages_vendor_api_key().as_str())
    );
    assert_eq!(sent.header("authorization"), None);
}

#[tokio::test]
async fn unknown_request_fields_reach_openai_format_providers_byte_for_byte() {
    for vendor in [Vendor::Completions, Vendor::Custom, Vendor::Assistant] {
        let env = start(&[vendor], &[]).await;
        let raw = format!(
            r#"{{"model":"{}/gpt-4o","messages":[{{"role":"user","content":"hi"}}],"x_vendor_field":{{"a":[1,2.50]}},"logprobs":false,"seed":7,"response_format":{{"type":"text"}}}}"#,
            vendor.id()
        );
        let resp = post_raw(&env.gateway.base, "/v1/chat/completions", &raw, &[]).await;
        assert_eq!(resp.status(), 200, "{vendor}");
        let sent = only_chat(&env.sim, vendor);
        let expected = raw.replace(&format!("{}/gpt-4o", vendor.id()), "gpt-4o");
        assert_eq!(
            std::str::from_utf8(&sent.body).unwrap(),
            expected,
            "{vendor}"
        );
    }
}

#[tokio::test]
async fn a_streaming_openai_request_gets_usage_asked_for_and_keeps_its_other_options() {
    let env = start(&[Vendor::Completions], &[]).await;
    let raw = r#"{"model":"completions_vendor/gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":false,"x_opt":1},"x_top":true}"#;
    let resp = post_raw(&env.gateway.base, "/v1/chat/completions", raw, &[]).await;
    assert_eq!(resp.status(), 200);
    let (events, broken) = read_sse(resp).await;
    assert_eq!(broken, None);
    // The client asked for no usage: the usage chunk the gateway needed is not shown.
    for ev in &events {
        if ev.data != "[DONE]" {
            let v: Value = serde_json::from_str(&ev.data).unwrap();
            assert!(
                !v["choices"].as_array().unwrap().is_empty(),
                "usage chunk leaked: {v}"
            );
        }
    }
    assert_eq!(events.last().unwrap().data, "[DONE]");
    let sent = only_chat(&env.sim, Vendor::Completions);
    assert_eq!(
        std::str::from_utf8(&sent.body).unwrap(),
        r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true,"x_opt":1},"x_top":true}"#
    );
}

/// The gateway's stream equals the vendor's own answer to the same body
/// (ids and timestamps masked), unknown events included.
async fn stream_is_the_vendors_own(vendor: Vendor) {
    let env = start(&[vendor], &[]).await;
    let (path, body) = match vendor {
        Vendor::Messages => (
            "/v1/messages",
            json!({"model": "messages_vendor/claude-sonnet-4-5", "max_tokens": 256, "stream": true,
                   "messages": [{"role": "user", "content": "Tell me.\nsim: text len=90 chunk=7 extra=true"}]}),
        ),
        _ => (
            "/v1/chat/completions",
            json!({"model": format!("{}/gpt-4o", vendor.id()), "stream": true,
                   "stream_options": {"include_usage": true},
                   "messages": [{"role": "user", "content": "Tell me.\nsim: text len=90 chunk=7 extra=true"}]}),
        ),
    };
    let resp = env.post(path, &body).await;
    assert_eq!(resp.status(), 200);
    let through_gateway = resp.text().await.unwrap();

    // The same body, straight to the vendor.
    let sent = only_chat(&env.sim, vendor);
    let direct = client().post(format!("{}{}", env.sim.base_url(), sent.path));
    let direct = match vendor {
        Vendor::Messages => direct
            .header("x-api-key", env.sim.messages_vendor_api_key())
            .header("anthropic-version", "2023-06-01"),
        Vendor::Completions => direct.bearer_auth(env.sim.completions_vendor_api_key()),
        Vendor::Custom => direct.bearer_auth(env.sim.custom_api_key().unwrap_or_default()),
        Vendor::Assistant => direct.bearer_auth(env.sim.issue_assistant_vendor_token().token),
    };
    let direct = direct
        .header("content-type", "application/json")
        .header("copilot-integration-id", "vscode-chat")
        .header("editor-version", "vscode/1.104.1")
        .body(sent.body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(direct.status(), 200);
    let from_vendor = direct.text().await.unwrap();
    assert!(
        from_vendor.contains("vendor_extra"),
        "the scenario has an unknown member: {from_vendor}"
    );
    assert_eq!(mask(&through_gateway), mask(&from_vendor), "{vendor}");
    assert_eq!(vendor_chats(&env.sim, vendor).len(), 2);
}

#[tokio::test]
async fn an_unknown_stream_event_reaches_the_client_unchanged_messages_vendor() {
    stream_is_the_vendors_own(Vendor::Messages).await;
}

#[tokio::test]
async fn an_unknown_chunk_field_reaches_the_client_unchanged_completions_vendor() {
    stream_is_the_vendors_own(Vendor::Completions).await;
}

#[tokio::test]
async fn an_unknown_chunk_field_reaches_the_client_unchanged_custom() {
    stream_is_the_vendors_own(Vendor::Custom).await;
}

#[tokio::test]
async fn an_unknown_chunk_field_reaches_the_client_unchanged_assistant_vendor() {
    stream_is_the_vendors_own(Vendor::Assistant).await;
}

#[tokio::test]
async fn a_whole_answer_is_the_vendors_json_with_its_rate_limit_headers() {
    let env = start(&[Vendor::Messages], &[]).await;
    let body = json!({"model": "messages_vendor/claude-sonnet-4-5", "max_tokens": 64,
                      "messages": [{"role": "user", "content": "x\nsim: echo extra=true"}]});
    let resp = env.post("/v1/messages", &body).await;
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()
            .keys()
            .any(|k| k.as_str().starts_with("anthropic-ratelimit-")),
        "{:?}",
        resp.headers()
    );
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["type"], "message");
    assert_eq!(v["vendor_extra"]["sim"], true, "unknown members kept: {v}");
    assert_eq!(v["content"][0]["text"], "x\nsim: echo extra=true");
}

#[test]
fn masking_keeps_everything_but_ids_and_timestamps() {
    assert_eq!(
        mask(r#"{"id":"msg_1","created":123,"x":{"id":"t"},"n":"id","system_fingerprint":"fp_1"}"#),
        r#"{"id":"*","created":0,"x":{"id":"*"},"n":"id","system_fingerprint":"*"}"#
    );
}
