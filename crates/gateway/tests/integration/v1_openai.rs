//! `POST /v1/chat/completions` against the simulator: the full non-streaming
//! shape, the streaming headers and chunk order, usage on and off, parallel
//! tool calls and the tool-result round trip, and reasoning deltas.

use serde_json::{json, Value};
use upstream_sim::primary::content::{generate, Flavor};
use upstream_sim::primary::events::{default_answer_text, TOOLS_PREAMBLE};

use crate::common::*;

fn tools() -> Value {
    json!([
        {"type": "function", "function": {
            "name": "get_weather", "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
        {"type": "function", "function": {
            "name": "get_time", "description": "Time in a zone",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}, "hours": {"type": "integer"}}, "required": ["zone"]}}}
    ])
}

fn assert_chunk_head(chunk: &Value, id: &str, created: u64) {
    assert_eq!(chunk["id"], id);
    assert_eq!(chunk["object"], "chat.completion.chunk");
    assert_eq!(chunk["created"], created);
    assert_eq!(chunk["model"], "claude-sonnet-4.5");
}

#[tokio::test]
async fn non_streaming_answer_has_the_full_shape() {
    let env = ProxyEnv::start(&[]).await;
    let before = gateway::ids::unix_now();
    let resp = env
        .post(
            "/v1/chat/completions",
            &chat_body("sim: text len=150 chunk=7", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let v: Value = resp.json().await.unwrap();
    let id = v["id"].as_str().unwrap();
    assert!(id.starts_with("chatcmpl-") && id.len() > 9, "{id}");
    assert_eq!(v["object"], "chat.completion");
    let created = v["created"].as_u64().unwrap();
    assert!(created >= before && created <= before + 60);
    assert_eq!(v["model"], "claude-sonnet-4.5");
    let choices = v["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 1);
    assert_eq!(choices[0]["index"], 0);
    assert_eq!(choices[0]["message"]["role"], "assistant");
    assert_eq!(
        choices[0]["message"]["content"],
        generate(150, Flavor::Answer)
    );
    assert_eq!(choices[0]["finish_reason"], "stop");
    let usage = &v["usage"];
    let prompt = usage["prompt_tokens"].as_u64().unwrap();
    let completion = usage["completion_tokens"].as_u64().unwrap();
    assert!(prompt > 0 && completion > 0, "{usage}");
    assert_eq!(usage["total_tokens"].as_u64().unwrap(), prompt + completion);

    // What went upstream: the resolved model and the user's text.
    let sent = env.chat_requests();
    assert_eq!(sent.len(), 1);
    let current = &sent[0]["conversationState"]["currentMessage"]["userInputMessage"];
    assert_eq!(current["modelId"], "claude-sonnet-4.5");
    assert!(current["content"]
        .as_str()
        .unwrap()
        .contains("sim: text len=150 chunk=7"));
}

#[tokio::test]
async fn streaming_headers_and_chunk_order() {
    let env = ProxyEnv::start(&[]).await;
    let resp = env
        .post(
            "/v1/chat/completions",
            &chat_body("sim: text len=95 chunk=10", true),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    let stream = OpenAiStream::read(resp).await;
    assert!(stream.done, "ends with [DONE]");
    assert!(stream.error.is_none());
    let first = &stream.chunks[0];
    let id = first["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("chatcmpl-"), "{id}");
    let created = first["created"].as_u64().unwrap();
    for c in &stream.chunks {
        assert_chunk_head(c, &id, created);
    }
    // First: the role delta.
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(first["choices"][0]["finish_reason"], Value::Null);
    // Then content deltas, each with finish_reason null.
    let n = stream.chunks.len();
    let content = &stream.chunks[1..n - 2];
    assert!(content.len() >= 2, "several content deltas");
    for c in content {
        assert!(c["choices"][0]["delta"]["content"].is_string(), "{c}");
        assert_eq!(c["choices"][0]["finish_reason"], Value::Null);
        assert_eq!(c["choices"][0]["index"], 0);
    }
    assert_eq!(stream.text(), generate(95, Flavor::Answer));
    // The finish chunk: empty delta and a reason.
    let finish = &stream.chunks[n - 2];
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    // The usage chunk: no choices.
    let usage = &stream.chunks[n - 1];
    assert_eq!(usage["choices"], json!([]));
    let prompt = usage["usage"]["prompt_tokens"].as_u64().unwrap();
    let completion = usage["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(prompt > 0 && completion > 0);
    assert_eq!(
        usage["usage"]["total_tokens"].as_u64().unwrap(),
        prompt + completion
    );
}

#[tokio::test]
async fn include_usage_false_leaves_the_usage_chunk_out() {
    let env = ProxyEnv::start(&[]).await;
    let mut body = chat_body("sim: text len=30", true);
    body["stream_options"] = json!({"include_usage": false});
    let stream = OpenAiStream::read(env.post("/v1/chat/completions", &body).await).await;
    assert!(stream.done);
    assert!(stream.chunks.iter().all(|c| c.get("usage").is_none()));
    let last = stream.chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(stream.text(), generate(30, Flavor::Answer));
}

/// The tool calls of a stream, per index: (id, name, joined arguments).
fn streamed_tool_calls(stream: &OpenAiStream) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in stream.choice_chunks() {
        let Some(deltas) = chunk["choices"][0]["delta"]["tool_calls"].as_array() else {
            continue;
        };
        for d in deltas {
            let index = d["index"].as_u64().unwrap() as usize;
            if let Some(id) = d["id"].as_str() {
                assert_eq!(index, calls.len(), "a new call takes the next index");
                assert_eq!(d["type"], "function");
                calls.push((
                    id.to_owned(),
                    d["function"]["name"].as_str().unwrap().to_owned(),
                    d["function"]["arguments"].as_str().unwrap_or("").to_owned(),
                ));
            } else {
                calls[index]
                    .2
                    .push_str(d["function"]["arguments"].as_str().unwrap());
            }
        }
    }
    calls
}

#[tokio::test]
async fn streamed_tool_calls_and_the_tool_result_round_trip() {
    let env = ProxyEnv::start(&[]).await;
    let mut body = chat_body("sim: tools n=2 fragments=3", true);
    body["tools"] = tools();
    let stream = OpenAiStream::read(env.post("/v1/chat/completions", &body).await).await;
    assert!(stream.done);
    assert_eq!(stream.text(), TOOLS_PREAMBLE);
    let calls = streamed_tool_calls(&stream);
    assert_eq!(calls.len(), 2, "{:?}", stream.chunks);
    assert_eq!(calls[0].1, "get_weather");
    assert_eq!(calls[1].1, "get_time");
    assert_ne!(calls[0].0, calls[1].0);
    let args0: Value = serde_json::from_str(&calls[0].2).unwrap();
    let args1: Value = serde_json::from_str(&calls[1].2).unwrap();
    assert_eq!(args0, json!({"city": "city-0"}));
    assert_eq!(args1, json!({"zone": "zone-1", "hours": 2}));
    // Arguments came in several fragments.
    let fragments = stream
        .choice_chunks()
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]
                .get("id")
                .is_none()
        })
        .filter(|c| c["choices"][0]["delta"]["tool_calls"].is_array())
        .count();
    assert!(fragments >= 4, "{fragments} argument fragments");
    let finish = stream.choice_chunks().last().unwrap()["choices"][0].clone();
    assert_eq!(finish["finish_reason"], "tool_calls");
    assert_eq!(finish["delta"], json!({}));

    // The round trip: the assistant's calls and the tool results go back.
    let follow_up = json!({
        "model": "claude-sonnet-4.5",
        "tools": tools(),
        "messages": [
            {"role": "user", "content": "sim: tools n=2 fragments=3"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": calls[0].0, "type": "function", "function": {"name": calls[0].1, "arguments": calls[0].2}},
                {"id": calls[1].0, "type": "function", "function": {"name": calls[1].1, "arguments": calls[1].2}},
            ]},
            {"role": "tool", "tool_call_id": calls[0].0, "content": "sunny, 21 C"},
            {"role": "tool", "tool_call_id": calls[1].0, "content": "14:05"},
        ],
    });
    let resp = env.post("/v1/chat/completions", &follow_up).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(
        v["choices"][0]["message"]["content"],
        default_answer_text("claude-sonnet-4.5")
    );
    assert_eq!(v["choices"][0]["finish_reason"], "stop");

    let sent = env.chat_requests();
    assert_eq!(sent.len(), 2);
    let state = &sent[1]["conversationState"];
    let history = state["history"].as_array().unwrap();
    let assistant = &history.last().unwrap()["assistantResponseMessage"];
    let uses = assistant["toolUses"].as_array().unwrap();
    assert_eq!(uses.len(), 2);
    assert_eq!(uses[0]["toolUseId"], calls[0].0.as_str());
    assert_eq!(uses[0]["input"], args0);
    assert_eq!(uses[1]["toolUseId"], calls[1].0.as_str());
    let current = &state["currentMessage"]["userInputMessage"];
    let ctx = &current["userInputMessageContext"];
    let results = ctx["toolResults"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["toolUseId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [calls[0].0.as_str(), calls[1].0.as_str()]);
    assert_eq!(results[0]["content"][0]["text"], "sunny, 21 C");
    assert_eq!(results[1]["content"][0]["text"], "14:05");
    let names: Vec<&str> = ctx["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["toolSpecification"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "get_time"]);
}

#[tokio::test]
async fn non_streaming_tool_calls() {
    let env = ProxyEnv::start(&[]).await;
    let mut body = chat_body("sim: tools n=2 fragments=3", false);
    body["tools"] = tools();
    let v: Value = env
        .post("/v1/chat/completions", &body)
        .await
        .json()
        .await
        .unwrap();
    let message = &v["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], TOOLS_PREAMBLE);
    let calls = message["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    for (i, (name, args)) in [
        ("get_weather", json!({"city": "city-0"})),
        ("get_time", json!({"zone": "zone-1", "hours": 2})),
    ]
    .into_iter()
    .enumerate()
    {
        assert!(calls[i]["id"].as_str().is_some_and(|s| !s.is_empty()));
        assert_eq!(calls[i]["type"], "function");
        assert_eq!(calls[i]["function"]["name"], name);
        let got: Value =
            serde_json::from_str(calls[i]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(got, args);
    }
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn thinking_comes_as_reasoning_content_before_the_answer() {
    let env = ProxyEnv::start(&[]).await;
    let stream = OpenAiStream::read(
        env.post("/v1/chat/completions", &chat_body("sim: thinking", true))
            .await,
    )
    .await;
    assert!(stream.done);
    assert_eq!(stream.reasoning(), generate(120, Flavor::Thought));
    assert_eq!(stream.text(), generate(80, Flavor::Answer));
    // Every reasoning delta precedes every content delta.
    let kinds: Vec<&str> = stream
        .choice_chunks()
        .iter()
        .filter_map(|c| {
            let d = &c["choices"][0]["delta"];
            if d["reasoning_content"].is_string() {
                Some("r")
            } else if d["content"].as_str().is_some_and(|s| !s.is_empty()) {
                Some("c")
            } else {
                None
            }
        })
        .collect();
    let first_content = kinds.iter().position(|k| *k == "c").unwrap();
    assert!(kinds[..first_content].iter().all(|k| *k == "r"));
    assert!(
        kinds[first_content..].iter().all(|k| *k == "c"),
        "{kinds:?}"
    );
    assert!(first_content > 0);

    // Non-streaming: the same reasoning in the message.
    let v: Value = env
        .post("/v1/chat/completions", &chat_body("sim: reasoning", false))
        .await
        .json()
        .await
        .unwrap();
    let message = &v["choices"][0]["message"];
    assert_eq!(message["reasoning_content"], generate(120, Flavor::Thought));
    assert_eq!(message["content"], generate(80, Flavor::Answer));
}
