//! The messages vendor over HTTP: streams parsed with `wire::sse::SseParser`
//! and JSON answers checked against the vendor's shapes, authentication,
//! validation, each fault, count_tokens, models, recording.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use upstream_sim::{Service, Vendor, VendorFault, VendorScenario};

use crate::common::*;
use crate::vendors_support::*;

#[tokio::test]
async fn streaming_text_has_the_vendor_event_sequence() {
    let sim = sim().await;
    let resp = post_messages(&sim, &messages_body("sim: text len=45 chunk=10\nhi", true)).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    assert!(resp.headers()["request-id"]
        .to_str()
        .unwrap()
        .starts_with("req_"));
    assert!(resp
        .headers()
        .contains_key("anthropic-ratelimit-requests-remaining"));
    let read = read_sse(resp).await;
    assert!(!read.transfer_failed);
    let named = read.named();
    let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..3], ["message_start", "content_block_start", "ping"]);
    assert_eq!(
        names[names.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "content_block_delta")
            .count(),
        5
    );
    let start = &named[0].1["message"];
    assert_eq!(
        start["model"], "claude-sonnet-4-5",
        "the request's model is echoed"
    );
    assert_eq!(start["role"], "assistant");
    assert!(start["id"].as_str().unwrap().starts_with("msg_"));
    let usage = &start["usage"];
    assert!(usage["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(usage["cache_creation_input_tokens"], 0);
    assert_eq!(usage["cache_read_input_tokens"], 0);
    assert_eq!(read.anthropic_text().chars().count(), 45);
    let delta = &named[named.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 12);
    assert_eq!(sim.vendor_stream_stats(Vendor::Messages).completed, 1);
}

#[tokio::test]
async fn non_streaming_answer_holds_the_same_content() {
    let sim = sim().await;
    let (status, headers, body) =
        json_of(post_messages(&sim, &messages_body("sim: echo\nrepeat me", false)).await).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["type"], "message");
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(
        body["content"][0],
        json!({"type": "text", "text": "sim: echo\nrepeat me"})
    );
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(body["stop_sequence"], Value::Null);
    assert!(body["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert_eq!(sim.vendor_stream_stats(Vendor::Messages).started, 0);
}

#[tokio::test]
async fn parallel_tool_use_blocks_with_input_json_deltas() {
    let sim = sim().await;
    let body = with_messages_tools(messages_body("sim: tools n=2 fragments=4\nread", true));
    let read = read_sse(post_messages(&sim, &body).await).await;
    let named = read.named();
    let starts: Vec<&Value> = named
        .iter()
        .filter(|(n, _)| n == "content_block_start")
        .map(|(_, v)| &v["content_block"])
        .collect();
    assert_eq!(starts[0]["type"], "text");
    assert_eq!(
        (starts[1]["type"].as_str(), starts[1]["name"].as_str()),
        (Some("tool_use"), Some("read_file"))
    );
    assert_eq!(starts[2]["name"], "list_dir");
    assert!(starts[1]["id"].as_str().unwrap().starts_with("toolu_"));
    for (index, expected) in [(1, "path-0"), (2, "path-1")] {
        let pieces: Vec<&str> = named
            .iter()
            .filter(|(_, v)| v["index"] == index && v["delta"]["type"] == "input_json_delta")
            .map(|(_, v)| v["delta"]["partial_json"].as_str().unwrap())
            .collect();
        assert_eq!(pieces.len(), 5, "an empty first delta, then 4 fragments");
        let input: Value = serde_json::from_str(&pieces.concat()).unwrap();
        assert_eq!(input, json!({"path": expected}));
    }
    let stop = named.iter().find(|(n, _)| n == "message_delta").unwrap();
    assert_eq!(stop.1["delta"]["stop_reason"], "tool_use");

    let (_, _, whole) = json_of(
        post_messages(
            &sim,
            &with_messages_tools(messages_body("sim: tools n=2", false)),
        )
        .await,
    )
    .await;
    assert_eq!(whole["content"][2]["input"], json!({"path": "path-1"}));
    assert_eq!(whole["stop_reason"], "tool_use");
}

#[tokio::test]
async fn thinking_block_with_signature_then_text() {
    let sim = sim().await;
    let read = read_sse(
        post_messages(
            &sim,
            &messages_body("sim: thinking thinking_len=30 len=10 chunk=10", true),
        )
        .await,
    )
    .await;
    let named = read.named();
    let first_block = named
        .iter()
        .find(|(n, _)| n == "content_block_start")
        .unwrap();
    assert_eq!(first_block.1["content_block"]["type"], "thinking");
    let kinds: Vec<&str> = named
        .iter()
        .filter(|(n, _)| n == "content_block_delta")
        .map(|(_, v)| v["delta"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "signature_delta",
            "text_delta"
        ]
    );
    let (_, _, whole) =
        json_of(post_messages(&sim, &messages_body("sim: thinking", false)).await).await;
    assert_eq!(whole["content"][0]["type"], "thinking");
    assert!(!whole["content"][0]["signature"]
        .as_str()
        .unwrap()
        .is_empty());
    assert_eq!(whole["content"][1]["type"], "text");
}

#[tokio::test]
async fn cache_control_reports_cache_tokens() {
    let sim = sim().await;
    let mut body = messages_body("hi", true);
    body["system"] =
        json!([{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]);
    let read = read_sse(post_messages(&sim, &body).await).await;
    let usage = read.named()[0].1["message"]["usage"].clone();
    let total = body.to_string().len().div_ceil(4) as u64;
    let (input, write, cached) = (
        usage["input_tokens"].as_u64().unwrap(),
        usage["cache_creation_input_tokens"].as_u64().unwrap(),
        usage["cache_read_input_tokens"].as_u64().unwrap(),
    );
    assert!(write > 0 && cached > 0);
    assert_eq!(input + write + cached, total);
}

#[tokio::test]
async fn unknown_event_and_field_with_extra() {
    let sim = sim().await;
    let read = read_sse(post_messages(&sim, &messages_body("sim: text extra=1", true)).await).await;
    let named = read.named();
    assert_eq!(named[1].0, "vendor_extra");
    assert_eq!(named[1].1["type"], "vendor_extra");
    let (_, _, whole) =
        json_of(post_messages(&sim, &messages_body("sim: text extra=1", false)).await).await;
    assert_eq!(whole["vendor_extra"]["sim"], true);
}

#[tokio::test]
async fn authentication_failures() {
    let sim = sim().await;
    let url = format!("{}/v1/messages", sim.messages_vendor_url());
    let body = &messages_body("hi", false);
    let send = |req: reqwest::RequestBuilder| async move {
        json_of(req.json(body).send().await.unwrap()).await
    };
    let cases = [
        (
            client()
                .post(&url)
                .header("anthropic-version", "2023-06-01"),
            401,
            "x-api-key header is required",
        ),
        (
            client()
                .post(&url)
                .header("x-api-key", "sk-wrong")
                .header("anthropic-version", "2023-06-01"),
            401,
            "invalid x-api-key",
        ),
        (
            client()
                .post(&url)
                .bearer_auth("sk-ant-oat01-unknown")
                .header("anthropic-version", "2023-06-01"),
            401,
            "OAuth authentication is currently not supported.",
        ),
        (
            client()
                .post(&url)
                .bearer_auth("sk-ant-oat01-unknown")
                .header("anthropic-version", "2023-06-01")
                .header("anthropic-beta", "oauth-2025-04-20"),
            401,
            "Invalid bearer token",
        ),
        (
            client()
                .post(&url)
                .header("x-api-key", sim.messages_vendor_api_key()),
            400,
            "anthropic-version: header is required",
        ),
    ];
    for (req, status, message) in cases {
        let (got, headers, err) = send(req).await;
        assert_eq!(got, status, "{message}");
        assert_eq!(err["type"], "error");
        assert_eq!(err["error"]["message"], message);
        let expected_type = if status == 401 {
            "authentication_error"
        } else {
            "invalid_request_error"
        };
        assert_eq!(err["error"]["type"], expected_type);
        assert_eq!(headers["request-id"], err["request_id"].as_str().unwrap());
    }
}

#[tokio::test]
async fn oauth_bearer_with_beta_works_until_expired() {
    let sim = sim().await;
    let tokens = sim.seed_messages_vendor_oauth();
    let call = || {
        client()
            .post(format!("{}/v1/messages", sim.messages_vendor_url()))
            .bearer_auth(&tokens.access_token)
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-beta", "claude-code-20250219,oauth-2025-04-20")
            .json(&messages_body("hi", false))
            .send()
    };
    assert_eq!(call().await.unwrap().status(), 200);
    sim.expire_messages_vendor_oauth_tokens();
    let (status, _, err) = json_of(call().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expired"));
}

#[tokio::test]
async fn validation_errors_use_the_vendor_body() {
    let sim = sim().await;
    let mut body = messages_body("hi", false);
    body.as_object_mut().unwrap().remove("max_tokens");
    let (status, _, err) = json_of(post_messages(&sim, &body).await).await;
    assert_eq!(status, 400);
    assert_eq!(
        err["error"],
        json!({"type": "invalid_request_error", "message": "max_tokens: Field required"})
    );
    let body = json!({"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]});
    let (status, _, err) = json_of(post_messages(&sim, &body).await).await;
    assert_eq!(status, 400);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("roles must alternate"));
    let (status, _, err) =
        json_of(post_messages(&sim, &messages_body("sim: text bogus=1", false)).await).await;
    assert_eq!(status, 400);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("bad sim directive"));
}

#[tokio::test]
async fn rate_limit_once_then_success_with_headers() {
    let sim = sim().await;
    let body = messages_body(
        "sim: status code=429 retry_after=7 times=1\nsim: text len=5",
        false,
    );
    let (status, headers, err) = json_of(post_messages(&sim, &body).await).await;
    assert_eq!(status, 429);
    assert_eq!(headers["retry-after"], "7");
    assert_eq!(headers["anthropic-ratelimit-requests-remaining"], "0");
    assert!(headers.contains_key("anthropic-ratelimit-input-tokens-reset"));
    assert!(headers.contains_key("anthropic-ratelimit-output-tokens-limit"));
    assert_eq!(headers["x-should-retry"], "true");
    assert_eq!(err["error"]["type"], "rate_limit_error");
    assert!(err["request_id"].as_str().unwrap().starts_with("req_"));
    let (status, _, ok) = json_of(post_messages(&sim, &body).await).await;
    assert_eq!(status, 200, "the retry gets the next line");
    assert_eq!(
        ok["content"][0]["text"].as_str().unwrap().chars().count(),
        5
    );
    // Without `times`, always.
    for _ in 0..3 {
        let always = messages_body("sim: status code=429 retry_after=1\nsim: text", true);
        assert_eq!(post_messages(&sim, &always).await.status(), 429);
    }
    // A queued scenario wins over directives, once.
    sim.push_vendor_scenario(Vendor::Messages, VendorScenario::rate_limited(2));
    let resp = post_messages(&sim, &messages_body("sim: text", true)).await;
    assert_eq!(
        (
            resp.status().as_u16(),
            resp.headers()["retry-after"].to_str().unwrap()
        ),
        (429, "2")
    );
    assert_eq!(
        post_messages(&sim, &messages_body("sim: text", true))
            .await
            .status(),
        200
    );
}

#[tokio::test]
async fn overloaded_529_and_other_statuses() {
    let sim = sim().await;
    for (code, kind) in [
        (529, "overloaded_error"),
        (500, "api_error"),
        (402, "billing_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
    ] {
        sim.push_vendor_scenario(Vendor::Messages, VendorScenario::status(code));
        let (status, _, err) = json_of(post_messages(&sim, &messages_body("hi", true)).await).await;
        assert_eq!(status, code);
        assert_eq!(err["error"]["type"], kind);
    }
    let (_, _, err) =
        json_of(post_messages(&sim, &messages_body("sim: status code=529", false)).await).await;
    assert_eq!(err["error"]["message"], "Overloaded");
}

#[tokio::test]
async fn error_event_mid_stream() {
    let sim = sim().await;
    let read = read_sse(
        post_messages(
            &sim,
            &messages_body("sim: text len=100 chunk=10 error_after=4", true),
        )
        .await,
    )
    .await;
    assert!(!read.transfer_failed);
    let named = read.named();
    assert_eq!(named.len(), 5);
    let (name, data) = named.last().unwrap();
    assert_eq!(name, "error");
    assert_eq!(
        data,
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    // Non-streaming: the HTTP error of that type.
    let (status, _, err) = json_of(
        post_messages(
            &sim,
            &messages_body("sim: text error_after=1 error=api_error", false),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, err["error"]["type"].as_str()),
        (500, Some("api_error"))
    );
}

#[tokio::test]
async fn disconnect_mid_stream_is_counted_as_aborted() {
    let sim = sim().await;
    let read = read_sse(
        post_messages(
            &sim,
            &messages_body("sim: text len=100 chunk=10 disconnect_after=3", true),
        )
        .await,
    )
    .await;
    assert!(read.transfer_failed);
    assert_eq!(read.events.len(), 3);
    assert!(eventually(|| sim.vendor_stream_stats(Vendor::Messages).aborted == 1).await);
    sim.push_vendor_scenario(
        Vendor::Messages,
        VendorScenario::echo().with_fault(VendorFault::Disconnect { after: 0 }),
    );
    let resp = post_messages(&sim, &messages_body("hello there", false)).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.bytes().await.is_err(), "the JSON body is cut");
}

#[tokio::test]
async fn slow_first_byte_and_cancelled_streams() {
    let sim = sim().await;
    let started = Instant::now();
    let resp = post_messages(&sim, &messages_body("sim: text delay=300ms", true)).await;
    assert_eq!(resp.status(), 200, "headers come at once");
    assert!(started.elapsed() < Duration::from_millis(250));
    let read = read_sse(resp).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(!read.events.is_empty());

    let resp = post_messages(
        &sim,
        &messages_body("sim: text len=100 chunk=5 interval=50ms", true),
    )
    .await;
    let mut resp = resp;
    let _ = resp.chunk().await.unwrap();
    drop(resp);
    assert!(eventually(|| sim.cancelled_vendor_streams(Vendor::Messages) == 1).await);
}

#[tokio::test]
async fn count_tokens_and_models() {
    let sim = sim().await;
    let mut body = messages_body("count me", false);
    body.as_object_mut().unwrap().remove("max_tokens");
    body.as_object_mut().unwrap().remove("stream");
    let resp = client()
        .post(format!(
            "{}/v1/messages/count_tokens",
            sim.messages_vendor_url()
        ))
        .header("x-api-key", sim.messages_vendor_api_key())
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, _, count) = json_of(resp).await;
    assert_eq!(status, 200);
    assert_eq!(
        count,
        json!({"input_tokens": body.to_string().len().div_ceil(4)})
    );

    let models = |query: &'static str| {
        client()
            .get(format!("{}/v1/models{query}", sim.messages_vendor_url()))
            .header("x-api-key", sim.messages_vendor_api_key())
            .header("anthropic-version", "2023-06-01")
            .send()
    };
    let (status, _, list) = json_of(models("").await.unwrap()).await;
    assert_eq!(status, 200);
    let first = &list["data"][0];
    assert_eq!(first["type"], "model");
    assert!(first["display_name"].is_string() && first["created_at"].is_string());
    assert_eq!(list["has_more"], false);
    assert_eq!(list["first_id"], first["id"]);
    let (_, _, page) = json_of(models("?limit=2").await.unwrap()).await;
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    assert_eq!(page["has_more"], true);
}

#[tokio::test]
async fn strict_models_refuse_unknown_names() {
    let sim = sim().await;
    sim.update_vendors(|c| c.strict_models = true);
    let mut body = messages_body("hi", false);
    body["model"] = json!("claude-nonexistent");
    let (status, _, err) = json_of(post_messages(&sim, &body).await).await;
    assert_eq!(
        (status, err["error"]["type"].as_str()),
        (404, Some("not_found_error"))
    );
    assert_eq!(
        post_messages(&sim, &messages_body("hi", false))
            .await
            .status(),
        200
    );
}

#[tokio::test]
async fn unknown_fields_and_headers_are_recorded() {
    let sim = sim().await;
    let mut body = messages_body("hi", false);
    body["vendor_future_field"] = json!({"kept": [1, 2]});
    let resp = client()
        .post(format!("{}/v1/messages", sim.messages_vendor_url()))
        .header("x-api-key", sim.messages_vendor_api_key())
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "interleaved-thinking-2025-05-14")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let recorded = sim.requests_to("/messages_vendor/v1/messages");
    assert_eq!(recorded.len(), 1);
    let r = &recorded[0];
    assert_eq!(r.service, Service::MessagesVendor);
    assert_eq!(
        r.json().unwrap()["vendor_future_field"],
        json!({"kept": [1, 2]})
    );
    assert!(std::str::from_utf8(&r.body)
        .unwrap()
        .contains("vendor_future_field"));
    assert_eq!(
        r.header("anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
    // Unknown paths under the prefix answer the vendor's 404, recorded as the vendor.
    let (status, _, err) = json_of(
        client()
            .get(format!("{}/v2/nothing", sim.messages_vendor_url()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, err["error"]["type"].as_str()),
        (404, Some("not_found_error"))
    );
    assert_eq!(
        sim.requests_to("/messages_vendor/v2/nothing")[0].service,
        Service::MessagesVendor
    );
}
