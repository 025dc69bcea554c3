//! The completions vendor and the custom endpoint over HTTP: chunks parsed
//! with `wire::sse::SseParser`, usage only with `include_usage`, tool-call
//! deltas, reasoning, unknown fields, faults, authentication, models.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use upstream_sim::{Service, Vendor};

use crate::common::*;
use crate::vendors_support::*;

#[tokio::test]
async fn streaming_without_include_usage_has_no_usage() {
    let sim = sim().await;
    let resp = post_completions(
        &sim,
        &openai_body("gpt-4o", "sim: text len=50 chunk=25", true),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    assert!(resp.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .starts_with("req_"));
    assert!(resp.headers().contains_key("x-ratelimit-remaining-tokens"));
    let read = read_sse(resp).await;
    assert!(read.done());
    let chunks = read.chunks();
    assert_eq!(chunks.len(), 4, "role, two content chunks, finish");
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], "gpt-4o");
        assert!(c["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(c.get("usage").is_none());
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(read.openai_text().chars().count(), 50);
    assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[3]["choices"][0]["delta"], json!({}));
}

#[tokio::test]
async fn include_usage_adds_a_usage_chunk_and_null_usage() {
    let sim = sim().await;
    let mut body = openai_body(
        "gpt-4o",
        &format!("{}\nsim: text len=8", "x".repeat(5000)),
        true,
    );
    body["stream_options"] = json!({"include_usage": true});
    let read = read_sse(post_completions(&sim, &body).await).await;
    let chunks = read.chunks();
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    let usage = &last["usage"];
    let prompt = body.to_string().len().div_ceil(4) as u64;
    assert_eq!(usage["prompt_tokens"], prompt);
    assert_eq!(usage["completion_tokens"], 2);
    assert_eq!(usage["total_tokens"], prompt + 2);
    let cached = usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        cached > 0 && cached % 128 == 0,
        "a long prompt is partly cached: {cached}"
    );
    assert!(chunks[..chunks.len() - 1]
        .iter()
        .all(|c| c["usage"].is_null() && c.get("usage").is_some()));
}

#[tokio::test]
async fn non_streaming_completion() {
    let sim = sim().await;
    let (status, headers, body) =
        json_of(post_completions(&sim, &openai_body("gpt-4.1", "sim: echo\nsay it", false)).await)
            .await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "gpt-4.1");
    let choice = &body["choices"][0];
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "sim: echo\nsay it");
    assert_eq!(choice["finish_reason"], "stop");
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(body["usage"]["prompt_tokens_details"]["cached_tokens"].is_u64());
}

#[tokio::test]
async fn parallel_tool_calls_interleaved() {
    let sim = sim().await;
    let body = with_openai_tools(openai_body(
        "gpt-4o",
        "sim: tools n=2 fragments=3 preamble=false interleave=true",
        true,
    ));
    let read = read_sse(post_completions(&sim, &body).await).await;
    let chunks = read.chunks();
    let mut args = vec![String::new(); 2];
    let mut order = Vec::new();
    let mut names = Vec::new();
    for c in &chunks {
        for tc in c["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            order.push(i);
            if let Some(id) = tc.get("id") {
                assert!(id.as_str().unwrap().starts_with("call_"));
                assert_eq!(tc["type"], "function");
                names.push(tc["function"]["name"].as_str().unwrap().to_owned());
            }
            args[i].push_str(tc["function"]["arguments"].as_str().unwrap());
        }
    }
    assert_eq!(names, ["read_file", "list_dir"]);
    assert_eq!(order, [0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(
        serde_json::from_str::<Value>(&args[0]).unwrap(),
        json!({"path": "path-0"})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&args[1]).unwrap(),
        json!({"path": "path-1"})
    );
    assert_eq!(
        chunks[0]["choices"][0]["delta"]["role"], "assistant",
        "the first call carries the role"
    );
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );

    let body = with_openai_tools(openai_body("gpt-4o", "sim: tools n=2", false));
    let (_, _, whole) = json_of(post_completions(&sim, &body).await).await;
    let calls = whole["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["function"]["arguments"], r#"{"path":"path-1"}"#);
    assert_eq!(whole["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn reasoning_content_then_text() {
    let sim = sim().await;
    let read = read_sse(
        post_completions(
            &sim,
            &openai_body("o3", "sim: thinking thinking_len=40 len=20 chunk=20", true),
        )
        .await,
    )
    .await;
    let chunks = read.chunks();
    let kinds: Vec<&str> = chunks
        .iter()
        .filter_map(|c| {
            let d = &c["choices"][0]["delta"];
            if d.get("reasoning_content").is_some() {
                Some("reasoning")
            } else if d["content"].as_str().is_some_and(|s| !s.is_empty()) {
                Some("content")
            } else {
                None
            }
        })
        .collect();
    assert_eq!(kinds, ["reasoning", "reasoning", "content"]);
    let (_, _, whole) =
        json_of(post_completions(&sim, &openai_body("o3", "sim: thinking", false)).await).await;
    assert_eq!(
        whole["choices"][0]["message"]["reasoning_content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        120
    );
    assert!(
        whole["usage"]["completion_tokens_details"]["reasoning_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[tokio::test]
async fn unknown_field_in_a_chunk_with_extra() {
    let sim = sim().await;
    let read =
        read_sse(post_completions(&sim, &openai_body("gpt-4o", "sim: text extra=1", true)).await)
            .await;
    let chunks = read.chunks();
    assert_eq!(chunks[0]["vendor_extra"]["sim"], true);
    let (_, _, whole) =
        json_of(post_completions(&sim, &openai_body("gpt-4o", "sim: text extra=1", false)).await)
            .await;
    assert_eq!(whole["vendor_extra"]["sim"], true);
}

#[tokio::test]
async fn errors_with_the_vendor_body_and_rate_limit_headers() {
    let sim = sim().await;
    let body = openai_body(
        "gpt-4o",
        "sim: status code=429 retry_after=3 times=1\nsim: text len=3",
        false,
    );
    let (status, headers, err) = json_of(post_completions(&sim, &body).await).await;
    assert_eq!(status, 429);
    assert_eq!(headers["retry-after"], "3");
    assert_eq!(headers["x-ratelimit-remaining-requests"], "0");
    assert!(headers.contains_key("x-ratelimit-reset-tokens"));
    let e = &err["error"];
    assert_eq!(e["code"], "rate_limit_exceeded");
    assert!(e.get("param").is_some() && e["message"].is_string() && e["type"].is_string());
    assert_eq!(post_completions(&sim, &body).await.status(), 200);

    for (code, kind) in [
        (500, "server_error"),
        (503, "server_error"),
        (400, "invalid_request_error"),
    ] {
        let body = openai_body("gpt-4o", &format!("sim: status code={code}"), true);
        let (status, _, err) = json_of(post_completions(&sim, &body).await).await;
        assert_eq!((status, err["error"]["type"].as_str()), (code, Some(kind)));
    }
    let quota = openai_body(
        "gpt-4o",
        "sim: status code=429 error_type=insufficient_quota",
        false,
    );
    let (_, _, err) = json_of(post_completions(&sim, &quota).await).await;
    assert_eq!(err["error"]["code"], "insufficient_quota");
}

#[tokio::test]
async fn error_object_mid_stream_and_disconnect() {
    let sim = sim().await;
    let read = read_sse(
        post_completions(
            &sim,
            &openai_body("gpt-4o", "sim: text len=100 chunk=10 error_after=3", true),
        )
        .await,
    )
    .await;
    assert!(!read.transfer_failed);
    assert!(!read.done(), "no [DONE] after an error");
    assert_eq!(read.events.len(), 4);
    let last: Value = serde_json::from_str(&read.events[3].data).unwrap();
    assert_eq!(last["error"]["type"], "server_error");
    assert!(last["error"]["message"].is_string());

    let read = read_sse(
        post_completions(
            &sim,
            &openai_body(
                "gpt-4o",
                "sim: text len=100 chunk=10 disconnect_after=2",
                true,
            ),
        )
        .await,
    )
    .await;
    assert!(read.transfer_failed);
    assert_eq!(read.events.len(), 2);
    assert!(eventually(|| sim.vendor_stream_stats(Vendor::Completions).aborted == 1).await);
}

#[tokio::test]
async fn slow_first_byte_and_header_delay() {
    let sim = sim().await;
    let started = Instant::now();
    let resp = post_completions(
        &sim,
        &openai_body("gpt-4o", "sim: text header_delay=200ms", true),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(read_sse(resp).await.done());
    let started = Instant::now();
    let resp = post_completions(&sim, &openai_body("gpt-4o", "sim: text delay=200ms", false)).await;
    assert!(started.elapsed() < Duration::from_millis(180));
    let _ = resp.bytes().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn authentication_and_validation() {
    let sim = sim().await;
    let url = format!("{}/v1/chat/completions", sim.completions_vendor_url());
    let body = openai_body("gpt-4o", "hi", false);
    let (status, _, err) = json_of(post_bearer(&url, None, &body).await).await;
    assert_eq!(status, 401);
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("You didn't provide an API key"));
    let (status, _, err) = json_of(post_bearer(&url, Some("sk-wrong-key-123"), &body).await).await;
    assert_eq!(
        (status, err["error"]["code"].as_str()),
        (401, Some("invalid_api_key"))
    );
    let (status, _, err) = json_of(
        post_completions(
            &sim,
            &json!({"messages": [{"role": "user", "content": "x"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, err["error"]["message"].as_str()),
        (400, Some("you must provide a model parameter"))
    );
    let mut bad = openai_body("gpt-4o", "hi", false);
    bad["stream_options"] = json!({"include_usage": true});
    let (status, _, err) = json_of(post_completions(&sim, &bad).await).await;
    assert_eq!(
        (status, err["error"]["param"].as_str()),
        (400, Some("stream_options"))
    );
}

#[tokio::test]
async fn models_and_recording() {
    let sim = sim().await;
    let resp = client()
        .get(format!("{}/v1/models", sim.completions_vendor_url()))
        .bearer_auth(sim.completions_vendor_api_key())
        .send()
        .await
        .unwrap();
    let (status, _, list) = json_of(resp).await;
    assert_eq!(status, 200);
    assert_eq!(list["object"], "list");
    let gpt = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "gpt-4o")
        .unwrap();
    assert_eq!(gpt["object"], "model");
    assert!(gpt["created"].is_u64() && gpt["owned_by"].is_string());

    let mut body = openai_body("gpt-4o", "hi", false);
    body["vendor_future_field"] = json!("kept");
    assert_eq!(post_completions(&sim, &body).await.status(), 200);
    let recorded = sim.requests_to("/completions_vendor/v1/chat/completions");
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].service, Service::CompletionsVendor);
    assert_eq!(recorded[0].json().unwrap()["vendor_future_field"], "kept");
}

#[tokio::test]
async fn custom_endpoint_under_its_v1_root() {
    let sim = sim().await;
    let url = format!("{}/chat/completions", sim.custom_url());
    let key = sim.custom_api_key().unwrap();
    let resp = post_bearer(
        &url,
        Some(&key),
        &openai_body("llama3.1:8b", "sim: text len=30", true),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert!(!resp.headers().contains_key("x-ratelimit-limit-requests"));
    let read = read_sse(resp).await;
    assert!(read.done());
    assert_eq!(read.openai_text().chars().count(), 30);
    assert_eq!(read.chunks()[0]["model"], "llama3.1:8b");
    let (status, _, whole) =
        json_of(post_bearer(&url, Some(&key), &openai_body("llama3.1:8b", "hi", false)).await)
            .await;
    assert_eq!(status, 200);
    assert!(whole["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .contains("custom"));
    assert_eq!(
        post_bearer(&url, None, &openai_body("m", "hi", false))
            .await
            .status(),
        401
    );

    // Without a configured key, any or none is accepted.
    sim.update_vendors(|c| c.custom_api_key = None);
    assert_eq!(
        post_bearer(&url, None, &openai_body("m", "hi", false))
            .await
            .status(),
        200
    );
    assert_eq!(
        post_bearer(&url, Some("anything"), &openai_body("m", "hi", false))
            .await
            .status(),
        200
    );

    let resp = client()
        .get(format!("{}/models", sim.custom_url()))
        .send()
        .await
        .unwrap();
    let (status, _, list) = json_of(resp).await;
    assert_eq!((status, list["object"].as_str()), (200, Some("list")));
    assert_eq!(
        sim.requests_to("/custom/v1/chat/completions")[0].service,
        Service::Custom
    );
    // The custom root has no `/v1/chat/completions` below it.
    let wrong = post_bearer(
        &format!("{}/v1/chat/completions", sim.custom_url()),
        None,
        &openai_body("m", "hi", false),
    )
    .await;
    assert_eq!(wrong.status(), 404);
    assert_eq!(sim.vendor_stream_stats(Vendor::Custom).completed, 1);
    assert_eq!(sim.vendor_stream_stats(Vendor::Completions).started, 0);
}
