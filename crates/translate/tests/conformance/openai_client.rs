//! The OpenAI chat-completions client side of the matrix: canonical events
//! through `translate::openai::StreamEncoder` (bytes parsed back with
//! `SseParser`, every chunk checked) or `translate::openai::render_response`
//! (the JSON checked field by field).

use std::collections::BTreeSet;

use bytes::BytesMut;
use serde_json::{json, Value};
use translate::openai::{render_response, StreamEncoder};
use translate::{ChatEvent, ChatResponse, ResponseMeta, Usage};

use crate::chunking::{self, Cut};
use crate::fixtures::{Block, Expected};
use crate::matrix::{openai_finish_reason, Args};

pub fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "chatcmpl-gw0conformance0001".into(),
        model: "gateway-model-1".into(),
        created: 1_767_225_600,
    }
}

/// OpenAI usage for canonical usage: `prompt_tokens` counts every prompt
/// token (uncached, cache reads and cache writes), `cached_tokens` the reads.
fn usage_json(u: &Usage) -> Value {
    let prompt = u.input_tokens.unwrap_or(0)
        + u.cache_read_tokens.unwrap_or(0)
        + u.cache_write_tokens.unwrap_or(0);
    let completion = u.output_tokens.unwrap_or(0);
    let mut v = json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    });
    if let Some(read) = u.cache_read_tokens {
        v["prompt_tokens_details"] = json!({ "cached_tokens": read });
    }
    v
}

/// What the recording says that OpenAI output has no place for: thinking
/// signatures, redacted thinking, the matched stop sequence.
fn dropped(exp: &Expected) -> Vec<&'static str> {
    let mut out = exp.opaque_reasoning();
    out.extend(exp.stop_sequence);
    out
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

/// What a stream's deltas were about, in order, consecutive repeats merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Reasoning,
    Content,
    ToolCalls,
}

fn expected_phases(exp: &Expected) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    for b in &exp.blocks {
        let phase = match b {
            Block::Thinking { .. } => Phase::Reasoning,
            Block::Text(_) => Phase::Content,
            Block::Tool { .. } => Phase::ToolCalls,
            Block::Redacted(_) => continue,
        };
        if out.last() != Some(&phase) {
            out.push(phase);
        }
    }
    out
}

/// The events as an OpenAI client stream (usage included), and the usage
/// the encoder accounted.
pub fn encode(events: &[ChatEvent]) -> (BytesMut, Usage) {
    let mut encoder = StreamEncoder::new(meta(), true);
    let mut bytes = BytesMut::new();
    for e in events {
        encoder.push(e, &mut bytes);
    }
    encoder.finish(&mut bytes);
    (bytes, *encoder.usage())
}

/// The `data` of every event of an OpenAI client stream.
pub fn stream_datas(events: &[ChatEvent]) -> Vec<String> {
    let (bytes, _) = encode(events);
    let sse = chunking::sse_events(&bytes, Cut::Every(5));
    assert!(
        sse.iter().all(|e| e.event.is_none()),
        "OpenAI streams name no events"
    );
    sse.into_iter().map(|e| e.data).collect()
}

/// The whole OpenAI response for the events.
pub fn whole(events: &[ChatEvent]) -> Value {
    serde_json::to_value(render_response(&crate::matrix::collect(events), &meta())).unwrap()
}

/// Encodes the events as an OpenAI client stream and checks every chunk.
pub fn check_stream(events: &[ChatEvent], exp: &Expected) {
    let meta = meta();
    let (bytes, usage) = encode(events);
    assert_eq!(usage, exp.usage, "usage the encoder accounted");

    let raw = String::from_utf8(bytes.to_vec()).unwrap();
    for dropped in dropped(exp) {
        assert!(
            !raw.contains(dropped),
            "{dropped} reached the OpenAI stream"
        );
    }
    let sse = chunking::sse_events(&bytes, Cut::Every(5));
    assert!(
        sse.iter().all(|e| e.event.is_none()),
        "OpenAI streams name no events"
    );
    let (done, rest) = sse.split_last().unwrap();
    assert_eq!(done.data, "[DONE]", "the stream ends with [DONE]");
    let chunks: Vec<Value> = rest
        .iter()
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect();
    assert!(chunks.len() >= 3, "role, finish and usage chunks at least");

    for c in &chunks {
        assert_eq!(c["id"], meta.id.as_str());
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["created"], meta.created);
        assert_eq!(c["model"], meta.model.as_str());
    }

    // The role chunk first.
    let first = &chunks[0];
    assert_eq!(
        keys(first),
        set(&["id", "object", "created", "model", "choices"])
    );
    assert_eq!(
        first["choices"],
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}])
    );

    // The usage chunk last, with empty choices.
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(
        keys(usage),
        set(&["id", "object", "created", "model", "choices", "usage"])
    );
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"], usage_json(&exp.usage), "usage chunk");

    // The finish chunk just before it.
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(
        keys(finish),
        set(&["id", "object", "created", "model", "choices"])
    );
    assert_eq!(
        finish["choices"],
        json!([{"index": 0, "delta": {}, "finish_reason": openai_finish_reason(&exp.stop)}])
    );

    // Every chunk between: one choice, one kind of delta, finish_reason null.
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut tools: Vec<(String, String, String)> = Vec::new();
    let mut phases: Vec<Phase> = Vec::new();
    for c in &chunks[1..chunks.len() - 2] {
        assert_eq!(
            keys(c),
            set(&["id", "object", "created", "model", "choices"])
        );
        let choices = c["choices"].as_array().unwrap();
        assert_eq!(choices.len(), 1, "{c}");
        let choice = &choices[0];
        assert_eq!(keys(choice), set(&["index", "delta", "finish_reason"]));
        assert_eq!(choice["index"], 0);
        assert_eq!(
            choice["finish_reason"],
            Value::Null,
            "only the finish chunk finishes"
        );
        let delta = choice["delta"].as_object().unwrap();
        assert_eq!(delta.len(), 1, "one kind of delta per chunk: {c}");
        let (key, value) = delta.iter().next().unwrap();
        let phase = match key.as_str() {
            "content" => {
                let t = value.as_str().unwrap();
                assert!(!t.is_empty(), "no empty content chunk");
                text.push_str(t);
                Phase::Content
            }
            "reasoning_content" => {
                let t = value.as_str().unwrap();
                assert!(!t.is_empty(), "no empty reasoning chunk");
                reasoning.push_str(t);
                Phase::Reasoning
            }
            "tool_calls" => {
                let calls = value.as_array().unwrap();
                assert_eq!(calls.len(), 1, "one call fragment per chunk");
                let call = &calls[0];
                let index = call["index"].as_u64().unwrap() as usize;
                if index == tools.len() {
                    // First fragment: id, type and name, empty arguments.
                    assert_eq!(keys(call), set(&["index", "id", "type", "function"]));
                    assert_eq!(call["type"], "function");
                    assert_eq!(keys(&call["function"]), set(&["name", "arguments"]));
                    assert_eq!(call["function"]["arguments"], "");
                    tools.push((
                        call["id"].as_str().unwrap().to_owned(),
                        call["function"]["name"].as_str().unwrap().to_owned(),
                        String::new(),
                    ));
                } else {
                    assert!(
                        index < tools.len(),
                        "call {index} before its first fragment"
                    );
                    assert_eq!(keys(call), set(&["index", "function"]));
                    assert_eq!(keys(&call["function"]), set(&["arguments"]));
                    let args = call["function"]["arguments"].as_str().unwrap();
                    assert!(!args.is_empty(), "no empty argument fragment");
                    tools[index].2.push_str(args);
                }
                Phase::ToolCalls
            }
            other => panic!("unexpected delta member `{other}`: {c}"),
        };
        if phases.last() != Some(&phase) {
            phases.push(phase);
        }
    }
    assert_eq!(phases, expected_phases(exp), "order of the deltas");
    assert_eq!(text, exp.text(), "content");
    assert_eq!(reasoning, exp.thinking(), "reasoning_content");
    let want: Vec<(String, String, String)> = exp
        .tools()
        .into_iter()
        .map(|(id, name, args)| (id.to_owned(), name.to_owned(), args.to_owned()))
        .collect();
    assert_eq!(tools, want, "tool calls (id, name, arguments)");
}

/// Renders the collected answer as an OpenAI response and checks every field.
pub fn check_whole(resp: &ChatResponse, exp: &Expected, args: Args) {
    let meta = meta();
    let v = serde_json::to_value(render_response(resp, &meta)).unwrap();
    let raw = v.to_string();
    for dropped in dropped(exp) {
        assert!(
            !raw.contains(dropped),
            "{dropped} reached the OpenAI response"
        );
    }
    assert_eq!(
        keys(&v),
        set(&["id", "object", "created", "model", "choices", "usage"])
    );
    assert_eq!(v["id"], meta.id.as_str());
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["created"], meta.created);
    assert_eq!(v["model"], meta.model.as_str());
    assert_eq!(v["usage"], usage_json(&exp.usage), "usage");

    let choices = v["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 1);
    let choice = &choices[0];
    assert_eq!(keys(choice), set(&["index", "message", "finish_reason"]));
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], openai_finish_reason(&exp.stop));

    let msg = &choice["message"];
    let tools = exp.tools();
    let thinking = exp.thinking();
    let mut want_keys = vec!["role", "content"];
    if !thinking.is_empty() {
        want_keys.push("reasoning_content");
    }
    if !tools.is_empty() {
        want_keys.push("tool_calls");
    }
    assert_eq!(keys(msg), set(&want_keys), "message members");
    assert_eq!(msg["role"], "assistant");
    let text = exp.text();
    if text.is_empty() && !tools.is_empty() {
        assert_eq!(
            msg["content"],
            Value::Null,
            "content is null next to tool calls"
        );
    } else {
        assert_eq!(msg["content"], text.as_str());
    }
    if !thinking.is_empty() {
        assert_eq!(msg["reasoning_content"], thinking.as_str());
    }
    if !tools.is_empty() {
        let calls = msg["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), tools.len());
        for (call, (id, name, arguments)) in calls.iter().zip(tools) {
            assert_eq!(keys(call), set(&["id", "type", "function"]));
            assert_eq!(call["id"], id);
            assert_eq!(call["type"], "function");
            assert_eq!(keys(&call["function"]), set(&["name", "arguments"]));
            assert_eq!(call["function"]["name"], name);
            args.assert_eq(call["function"]["arguments"].as_str().unwrap(), arguments);
        }
    }
}

#[test]
fn without_include_usage_the_stream_has_no_usage_chunk() {
    let mut encoder = StreamEncoder::new(meta(), false);
    let mut bytes = BytesMut::new();
    for e in [
        ChatEvent::TextDelta("salut".into()),
        ChatEvent::Usage(Usage {
            input_tokens: Some(3),
            output_tokens: Some(1),
            ..Usage::default()
        }),
        ChatEvent::Stop {
            reason: translate::StopReason::EndTurn,
            stop_sequence: None,
        },
    ] {
        encoder.push(&e, &mut bytes);
    }
    encoder.finish(&mut bytes);
    let sse = chunking::sse_events(&bytes, Cut::Whole);
    let datas: Vec<&str> = sse.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(datas.len(), 4, "role, content, finish, [DONE]: {datas:?}");
    assert!(datas.iter().all(|d| !d.contains("\"usage\"")));
    assert_eq!(datas[3], "[DONE]");
}
