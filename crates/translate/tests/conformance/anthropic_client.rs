//! The Anthropic messages client side of the matrix: canonical events through
//! `translate::anthropic::StreamEncoder` (bytes parsed back with `SseParser`,
//! the event sequence walked block by block) or
//! `translate::anthropic::render_response` (the JSON checked field by field).

use std::collections::BTreeSet;

use bytes::BytesMut;
use serde_json::{json, Map, Value};
use translate::anthropic::{render_response, StreamEncoder};
use translate::{ChatEvent, ChatResponse, ResponseMeta, Usage};

use crate::chunking::{self, Cut};
use crate::fixtures::{Block, Expected};
use crate::matrix::anthropic_stop_reason;

pub fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "msg_gw0conformance0001".into(),
        model: "gateway-model-1".into(),
        created: 1_767_225_600,
    }
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

/// Messages-format usage for canonical usage: cache fields only when known.
fn usage_json(u: &Usage) -> Value {
    let mut v = Map::new();
    v.insert("input_tokens".into(), json!(u.input_tokens.unwrap_or(0)));
    if let Some(n) = u.cache_write_tokens {
        v.insert("cache_creation_input_tokens".into(), json!(n));
    }
    if let Some(n) = u.cache_read_tokens {
        v.insert("cache_read_input_tokens".into(), json!(n));
    }
    v.insert("output_tokens".into(), json!(u.output_tokens.unwrap_or(0)));
    Value::Object(v)
}

/// A block as the client must see it. A thinking block without a provider
/// signature carries `signature: ""` (the `Unsigned` cells).
fn block_json(b: &Block) -> Value {
    match b {
        Block::Thinking { text, signature } => {
            json!({"type": "thinking", "thinking": text, "signature": signature.unwrap_or("")})
        }
        Block::Redacted(data) => json!({"type": "redacted_thinking", "data": data}),
        Block::Text(text) => json!({"type": "text", "text": text}),
        Block::Tool {
            id,
            name,
            arguments,
        } => json!({
            "type": "tool_use",
            "id": id,
            "name": name,
            "input": serde_json::from_str::<Value>(arguments).unwrap(),
        }),
    }
}

/// One block read back from the stream.
#[derive(Debug)]
struct StreamedBlock {
    start: Value,
    text: String,
    signature: Option<String>,
    partial_json: String,
}

/// The data of every event of the messages stream for the events, each
/// checked to carry its SSE event name as `type`.
pub fn stream_datas(events: &[ChatEvent]) -> Vec<Value> {
    let mut encoder = StreamEncoder::new(meta(), Usage::default());
    let mut bytes = BytesMut::new();
    for e in events {
        encoder.push(e, &mut bytes);
    }
    encoder.finish(&mut bytes);
    let sse = chunking::sse_events(&bytes, Cut::Every(5));
    sse.iter()
        .map(|e| {
            let data: Value = serde_json::from_str(&e.data).unwrap();
            assert_eq!(
                e.event.as_deref(),
                data["type"].as_str(),
                "event name = type"
            );
            data
        })
        .collect()
}

/// The whole messages response for the events.
pub fn whole(events: &[ChatEvent]) -> Value {
    serde_json::to_value(render_response(&crate::matrix::collect(events), &meta())).unwrap()
}

/// Encodes the events as a messages stream and walks it event by event.
pub fn check_stream(events: &[ChatEvent], exp: &Expected) {
    let meta = meta();
    let datas = stream_datas(events);
    let mut it = datas.iter().peekable();

    // message_start
    let start = it.next().unwrap();
    assert_eq!(keys(start), set(&["type", "message"]));
    assert_eq!(start["type"], "message_start");
    let message = &start["message"];
    assert_eq!(
        keys(message),
        set(&[
            "id",
            "type",
            "role",
            "content",
            "model",
            "stop_reason",
            "stop_sequence",
            "usage"
        ])
    );
    assert_eq!(message["id"], meta.id.as_str());
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], json!([]));
    assert_eq!(message["model"], meta.model.as_str());
    assert_eq!(message["stop_reason"], Value::Null);
    assert_eq!(message["stop_sequence"], Value::Null);
    let mut usage = message["usage"].as_object().unwrap().clone();

    // Content blocks: start, deltas, stop; indexes from 0; never interleaved.
    let mut blocks: Vec<StreamedBlock> = Vec::new();
    while it.peek().unwrap()["type"] == "content_block_start" {
        let ev = it.next().unwrap();
        let index = blocks.len();
        assert_eq!(keys(ev), set(&["type", "index", "content_block"]));
        assert_eq!(ev["index"], index, "blocks are numbered in order");
        let mut block = StreamedBlock {
            start: ev["content_block"].clone(),
            text: String::new(),
            signature: None,
            partial_json: String::new(),
        };
        let kind = block.start["type"].as_str().unwrap().to_owned();
        match kind.as_str() {
            "text" => assert_eq!(block.start, json!({"type": "text", "text": ""})),
            "thinking" => assert_eq!(
                block.start,
                json!({"type": "thinking", "thinking": "", "signature": ""})
            ),
            "tool_use" => {
                assert_eq!(keys(&block.start), set(&["type", "id", "name", "input"]));
                assert_eq!(block.start["input"], json!({}));
            }
            "redacted_thinking" => {
                assert_eq!(keys(&block.start), set(&["type", "data"]));
            }
            other => panic!("unexpected block type {other}"),
        }
        loop {
            let ev = it.next().unwrap();
            if ev["type"] == "content_block_stop" {
                assert_eq!(*ev, json!({"type": "content_block_stop", "index": index}));
                break;
            }
            assert_eq!(
                ev["type"], "content_block_delta",
                "inside block {index}: {ev}"
            );
            assert_eq!(keys(ev), set(&["type", "index", "delta"]));
            assert_eq!(ev["index"], index, "a delta for another block");
            assert!(
                block.signature.is_none(),
                "the signature is the block's last delta"
            );
            let delta = &ev["delta"];
            match (kind.as_str(), delta["type"].as_str().unwrap()) {
                ("text", "text_delta") => {
                    assert_eq!(keys(delta), set(&["type", "text"]));
                    block.text.push_str(delta["text"].as_str().unwrap());
                }
                ("thinking", "thinking_delta") => {
                    assert_eq!(keys(delta), set(&["type", "thinking"]));
                    block.text.push_str(delta["thinking"].as_str().unwrap());
                }
                ("thinking", "signature_delta") => {
                    assert_eq!(keys(delta), set(&["type", "signature"]));
                    block.signature = Some(delta["signature"].as_str().unwrap().to_owned());
                }
                ("tool_use", "input_json_delta") => {
                    assert_eq!(keys(delta), set(&["type", "partial_json"]));
                    block
                        .partial_json
                        .push_str(delta["partial_json"].as_str().unwrap());
                }
                (kind, delta_kind) => panic!("a {delta_kind} in a {kind} block"),
            }
        }
        blocks.push(block);
    }

    // message_delta, message_stop, nothing after.
    let delta = it.next().unwrap();
    assert_eq!(keys(delta), set(&["type", "delta", "usage"]));
    assert_eq!(delta["type"], "message_delta");
    assert_eq!(
        delta["delta"],
        json!({"stop_reason": anthropic_stop_reason(&exp.stop), "stop_sequence": exp.stop_sequence})
    );
    let delta_usage = delta["usage"].as_object().unwrap();
    assert!(
        delta_usage.contains_key("output_tokens"),
        "message_delta has output_tokens"
    );
    for (k, v) in delta_usage {
        usage.insert(k.clone(), v.clone());
    }
    assert_eq!(Value::Object(usage), usage_json(&exp.usage), "usage");
    assert_eq!(*it.next().unwrap(), json!({"type": "message_stop"}));
    assert!(it.next().is_none(), "events after message_stop");

    // The blocks say what the recording says.
    assert_eq!(blocks.len(), exp.blocks.len(), "blocks: {blocks:?}");
    for (got, want) in blocks.iter().zip(&exp.blocks) {
        match want {
            Block::Thinking { text, signature } => {
                assert_eq!(got.start["type"], "thinking");
                assert_eq!(got.text, *text, "thinking");
                assert_eq!(got.signature.as_deref(), *signature, "signature_delta");
            }
            Block::Redacted(data) => {
                assert_eq!(
                    got.start,
                    json!({"type": "redacted_thinking", "data": data})
                )
            }
            Block::Text(text) => {
                assert_eq!(got.start["type"], "text");
                assert_eq!(got.text, *text, "text");
            }
            Block::Tool {
                id,
                name,
                arguments,
            } => {
                assert_eq!(got.start["type"], "tool_use");
                assert_eq!(got.start["id"], *id);
                assert_eq!(got.start["name"], *name);
                assert_eq!(got.partial_json, *arguments, "input_json_delta text");
            }
        }
    }
}

/// Renders the collected answer as a messages response and checks every field.
pub fn check_whole(resp: &ChatResponse, exp: &Expected) {
    let meta = meta();
    let v = serde_json::to_value(render_response(resp, &meta)).unwrap();
    assert_eq!(
        keys(&v),
        set(&[
            "id",
            "type",
            "role",
            "content",
            "model",
            "stop_reason",
            "stop_sequence",
            "usage"
        ])
    );
    assert_eq!(v["id"], meta.id.as_str());
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["model"], meta.model.as_str());
    assert_eq!(v["stop_reason"], anthropic_stop_reason(&exp.stop));
    assert_eq!(v["stop_sequence"], json!(exp.stop_sequence));
    assert_eq!(v["usage"], usage_json(&exp.usage), "usage");
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), exp.blocks.len(), "content: {content:?}");
    for (got, want) in content.iter().zip(&exp.blocks) {
        assert_eq!(*got, block_json(want));
    }
}
