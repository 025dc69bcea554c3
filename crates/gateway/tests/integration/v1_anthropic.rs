//! `POST /v1/messages` against the simulator: the non-streaming shape and the
//! event order of a stream (`message_start`, blocks with their indexes,
//! thinking before text, `tool_use` with `input_json_delta`, `message_delta`,
//! `message_stop`), and the tool-result round trip.

use serde_json::{json, Value};
use upstream_sim::primary::content::{generate, Flavor};
use upstream_sim::primary::events::{default_answer_text, TOOLS_PREAMBLE};

use crate::common::*;

fn tools() -> Value {
    json!([
        {"name": "read_file", "description": "Read a file",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
        {"name": "list_dir", "description": "List a folder",
         "input_schema": {"type": "object", "properties": {"dir": {"type": "string"}, "all": {"type": "boolean"}}, "required": ["dir"]}}
    ])
}

/// One content block of a stream: its start data, its deltas and whether it stopped.
struct Block {
    start: Value,
    deltas: Vec<Value>,
    stopped: bool,
}

/// Check the block protocol (indexes from 0 in order, deltas only inside an
/// open block, each block stopped before the next starts) and return the blocks.
fn blocks(stream: &AnthropicStream) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for (name, data) in &stream.events {
        match name.as_str() {
            "content_block_start" => {
                assert_eq!(data["index"], out.len(), "block indexes count from 0");
                assert!(
                    out.last().is_none_or(|b| b.stopped),
                    "blocks do not overlap"
                );
                out.push(Block {
                    start: data["content_block"].clone(),
                    deltas: Vec::new(),
                    stopped: false,
                });
            }
            "content_block_delta" => {
                let b = out.last_mut().expect("a delta inside a block");
                assert!(!b.stopped);
                assert_eq!(data["index"], out.len() - 1);
                out.last_mut().unwrap().deltas.push(data["delta"].clone());
            }
            "content_block_stop" => {
                assert_eq!(data["index"], out.len() - 1);
                let b = out.last_mut().unwrap();
                assert!(!b.stopped);
                b.stopped = true;
            }
            _ => {}
        }
    }
    assert!(out.iter().all(|b| b.stopped), "every block is stopped");
    out
}

/// Joined `field` of the deltas of a block.
fn joined(b: &Block, field: &str) -> String {
    b.deltas.iter().filter_map(|d| d[field].as_str()).collect()
}

/// The envelope every stream has: `message_start` first, then blocks, then
/// exactly `message_delta`, `message_stop`.
fn assert_envelope(stream: &AnthropicStream, stop_reason: &str) -> (String, Value) {
    let names = stream.names();
    assert_eq!(names[0], "message_start", "{names:?}");
    let n = names.len();
    assert_eq!(
        &names[n - 2..],
        ["message_delta", "message_stop"],
        "{names:?}"
    );
    assert!(names[1..n - 2]
        .iter()
        .all(|n| n.starts_with("content_block_")));
    let start = &stream.all("message_start")[0]["message"];
    let id = start["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("msg_") && id.len() > 4, "{id}");
    assert_eq!(start["type"], "message");
    assert_eq!(start["role"], "assistant");
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["model"], "claude-sonnet-4.5");
    assert_eq!(start["stop_reason"], Value::Null);
    assert!(
        start["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{start}"
    );
    assert!(start["usage"]["output_tokens"].is_u64());
    let delta = stream.all("message_delta")[0].clone();
    assert_eq!(delta["delta"]["stop_reason"], stop_reason);
    assert_eq!(delta["delta"]["stop_sequence"], Value::Null);
    assert!(
        delta["usage"]["output_tokens"].as_u64().unwrap() > 0,
        "{delta}"
    );
    (id, delta)
}

#[tokio::test]
async fn non_streaming_answer_has_the_full_shape() {
    let env = ProxyEnv::start(&[]).await;
    let resp = env
        .post(
            "/v1/messages",
            &messages_body("sim: text len=120 chunk=9", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let id = v["id"].as_str().unwrap();
    assert!(id.starts_with("msg_"), "{id}");
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["model"], "claude-sonnet-4.5");
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": generate(120, Flavor::Answer)}])
    );
    assert_eq!(v["stop_reason"], "end_turn");
    assert_eq!(v["stop_sequence"], Value::Null);
    assert!(v["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn streaming_text_event_order() {
    let env = ProxyEnv::start(&[]).await;
    let resp = env
        .post(
            "/v1/messages",
            &messages_body("sim: text len=77 chunk=10", true),
        )
        .await;
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    let stream = AnthropicStream::read(resp).await;
    assert_envelope(&stream, "end_turn");
    let blocks = blocks(&stream);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].start, json!({"type": "text", "text": ""}));
    assert!(blocks[0].deltas.len() >= 2);
    assert!(blocks[0].deltas.iter().all(|d| d["type"] == "text_delta"));
    assert_eq!(joined(&blocks[0], "text"), generate(77, Flavor::Answer));
}

#[tokio::test]
async fn thinking_block_comes_before_the_text_block() {
    let env = ProxyEnv::start(&[]).await;
    let stream = AnthropicStream::read(
        env.post("/v1/messages", &messages_body("sim: thinking", true))
            .await,
    )
    .await;
    assert_envelope(&stream, "end_turn");
    let blocks = blocks(&stream);
    assert_eq!(blocks.len(), 2, "{:?}", stream.names());
    assert_eq!(blocks[0].start["type"], "thinking");
    let thinking: String = blocks[0]
        .deltas
        .iter()
        .filter(|d| d["type"] == "thinking_delta")
        .filter_map(|d| d["thinking"].as_str())
        .collect();
    assert_eq!(thinking, generate(120, Flavor::Thought));
    assert!(blocks[0]
        .deltas
        .iter()
        .all(|d| d["type"] == "thinking_delta" || d["type"] == "signature_delta"));
    assert_eq!(blocks[1].start["type"], "text");
    assert_eq!(joined(&blocks[1], "text"), generate(80, Flavor::Answer));

    // Native reasoning, non-streaming: a thinking block with its signature.
    let v: Value = env
        .post("/v1/messages", &messages_body("sim: reasoning", false))
        .await
        .json()
        .await
        .unwrap();
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{v}");
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(content[0]["thinking"], generate(120, Flavor::Thought));
    assert!(content[0]["signature"]
        .as_str()
        .unwrap()
        .starts_with("sim-signature-"));
    assert_eq!(
        content[1],
        json!({"type": "text", "text": generate(80, Flavor::Answer)})
    );
}

#[tokio::test]
async fn tool_use_blocks_stream_input_json_deltas() {
    let env = ProxyEnv::start(&[]).await;
    let mut body = messages_body("sim: tools n=2 fragments=3", true);
    body["tools"] = tools();
    let stream = AnthropicStream::read(env.post("/v1/messages", &body).await).await;
    assert_envelope(&stream, "tool_use");
    let blocks = blocks(&stream);
    assert_eq!(blocks.len(), 3, "{:?}", stream.names());
    assert_eq!(blocks[0].start["type"], "text");
    assert_eq!(joined(&blocks[0], "text"), TOOLS_PREAMBLE);
    let expected = [
        ("read_file", json!({"path": "path-0"})),
        ("list_dir", json!({"dir": "dir-1", "all": true})),
    ];
    let mut ids = Vec::new();
    for (b, (name, input)) in blocks[1..].iter().zip(expected) {
        assert_eq!(b.start["type"], "tool_use");
        assert_eq!(b.start["name"], name);
        assert_eq!(b.start["input"], json!({}));
        let id = b.start["id"].as_str().unwrap();
        assert!(!id.is_empty());
        ids.push(id.to_owned());
        assert!(b.deltas.iter().all(|d| d["type"] == "input_json_delta"));
        assert!(!b.deltas.is_empty());
        let got: Value = serde_json::from_str(&joined(b, "partial_json")).unwrap();
        assert_eq!(got, input);
    }
    assert_ne!(ids[0], ids[1]);

    // The round trip: tool_use blocks and tool_result blocks go back.
    let follow_up = json!({
        "model": "claude-sonnet-4.5",
        "max_tokens": 512,
        "tools": tools(),
        "messages": [
            {"role": "user", "content": "sim: tools n=2 fragments=3"},
            {"role": "assistant", "content": [
                {"type": "text", "text": TOOLS_PREAMBLE},
                {"type": "tool_use", "id": ids[0], "name": "read_file", "input": {"path": "path-0"}},
                {"type": "tool_use", "id": ids[1], "name": "list_dir", "input": {"dir": "dir-1", "all": true}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": ids[0], "content": "file body"},
                {"type": "tool_result", "tool_use_id": ids[1], "content": [{"type": "text", "text": "a b c"}]},
            ]},
        ],
    });
    let v: Value = env
        .post("/v1/messages", &follow_up)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": default_answer_text("claude-sonnet-4.5")}])
    );
    assert_eq!(v["stop_reason"], "end_turn");
    let sent = env.chat_requests();
    let ctx = &sent[1]["conversationState"]["currentMessage"]["userInputMessage"]
        ["userInputMessageContext"];
    let got: Vec<&str> = ctx["toolResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolUseId"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[0].as_str(), ids[1].as_str()]);
    assert_eq!(ctx["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn non_streaming_tool_use_blocks() {
    let env = ProxyEnv::start(&[]).await;
    let mut body = messages_body("sim: tools n=1 fragments=4 preamble=false", false);
    body["tools"] = tools();
    let v: Value = env.post("/v1/messages", &body).await.json().await.unwrap();
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{v}");
    assert_eq!(content[0]["type"], "tool_use");
    assert_eq!(content[0]["name"], "read_file");
    assert_eq!(content[0]["input"], json!({"path": "path-0"}));
    assert_eq!(v["stop_reason"], "tool_use");
}
