//! An answer plan in the messages vendor's shapes.
//!
//! Stream: `message_start` (usage with `input_tokens`, both cache fields and
//! `output_tokens: 1`), then per block `content_block_start` / deltas /
//! `content_block_stop` (a `ping` after the first start), then
//! `message_delta` (stop reason, `output_tokens`) and `message_stop`. Text
//! streams as `text_delta`s; thinking as `thinking_delta`s then one
//! `signature_delta`; a tool call as an empty `input_json_delta` then its
//! argument fragments. With `extra`, an `event: vendor_extra` follows
//! `message_start`. The JSON response holds the same blocks.

use serde_json::{json, Map, Value};

use crate::content;
use crate::vendor_common::answer::{Answer, Block, Ending, Usage};
use crate::vendor_common::sse::SseFrames;

/// The vendor's `stop_reason`.
pub fn stop_reason(ending: Ending) -> &'static str {
    match ending {
        Ending::EndTurn => "end_turn",
        Ending::ToolUse => "tool_use",
        Ending::Length => "max_tokens",
    }
}

fn usage_json(u: &Usage, output_tokens: u64) -> Value {
    json!({
        "input_tokens": u.input,
        "cache_creation_input_tokens": u.cache_creation,
        "cache_read_input_tokens": u.cache_read,
        "output_tokens": output_tokens,
    })
}

/// The payload of the unknown event / field of the `extra` option.
fn extra_payload() -> Value {
    json!({"note": "a field a client does not know", "sim": true})
}

/// The streamed answer, as SSE events.
pub(crate) fn stream(answer: &Answer, id: &str, model: &str, extra: bool) -> SseFrames {
    let mut f = SseFrames::new();
    f.json_event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage_json(&answer.usage, 1),
        }}),
    );
    if extra {
        f.json_event(
            "vendor_extra",
            &json!({"type": "vendor_extra", "vendor_extra": extra_payload()}),
        );
    }
    if answer.blocks.is_empty() {
        ping(&mut f);
    }
    for (index, block) in answer.blocks.iter().enumerate() {
        let start = match block {
            Block::Text(_) => json!({"type": "text", "text": ""}),
            Block::Thinking { .. } => json!({"type": "thinking", "thinking": "", "signature": ""}),
            Block::Tool { id, name, .. } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            }
        };
        f.json_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        if index == 0 {
            ping(&mut f);
        }
        let delta = |f: &mut SseFrames, delta: Value| {
            f.json_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        match block {
            Block::Text(text) => {
                for piece in content::chunks(text, answer.chunk) {
                    delta(&mut f, json!({"type": "text_delta", "text": piece}));
                }
            }
            Block::Thinking { text, signature } => {
                for piece in content::chunks(text, answer.chunk) {
                    delta(&mut f, json!({"type": "thinking_delta", "thinking": piece}));
                }
                delta(
                    &mut f,
                    json!({"type": "signature_delta", "signature": signature}),
                );
            }
            Block::Tool { arguments, .. } => {
                delta(
                    &mut f,
                    json!({"type": "input_json_delta", "partial_json": ""}),
                );
                for piece in content::fragments(arguments, answer.fragments) {
                    delta(
                        &mut f,
                        json!({"type": "input_json_delta", "partial_json": piece}),
                    );
                }
            }
        }
        f.json_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
    }
    f.json_event(
        "message_delta",
        &json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason(answer.ending), "stop_sequence": null},
            "usage": {"output_tokens": answer.usage.output}}),
    );
    f.json_event("message_stop", &json!({"type": "message_stop"}));
    f
}

fn ping(f: &mut SseFrames) {
    f.json_event("ping", &json!({"type": "ping"}));
}

/// The non-streaming response.
pub fn response(answer: &Answer, id: &str, model: &str, extra: bool) -> Value {
    let content: Vec<Value> = answer
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::Thinking { text, signature } => {
                json!({"type": "thinking", "thinking": text, "signature": signature})
            }
            Block::Tool {
                id,
                name,
                arguments,
            } => {
                let input: Value =
                    serde_json::from_str(arguments).unwrap_or_else(|_| Value::Object(Map::new()));
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        })
        .collect();
    let mut out = json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content,
        "stop_reason": stop_reason(answer.ending), "stop_sequence": null,
        "usage": usage_json(&answer.usage, answer.usage.output),
    });
    if extra {
        out["vendor_extra"] = extra_payload();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vendor_common::answer::RequestInfo;
    use crate::vendor_common::scenario::VendorScenario;
    use crate::vendor_common::Vendor;
    use wire::sse::SseParser;

    fn plan(s: VendorScenario) -> Answer {
        let req = RequestInfo {
            model: "claude-x",
            user_text: "hello".into(),
            tools: Vec::new(),
            body_len: 40,
            cache_control: false,
        };
        Answer::plan(&s, &req, Vendor::Messages, || "toolu_1".to_owned()).unwrap()
    }

    fn events(f: SseFrames) -> Vec<(String, Value)> {
        let steps = crate::vendor_common::sse::play(&VendorScenario::echo(), f, |_, _| {});
        let mut p = SseParser::new();
        for s in steps {
            if let crate::primary::stream::Step::Bytes(b) = s {
                p.feed(&b);
            }
        }
        let mut out = Vec::new();
        while let Some(e) = p.next_event().unwrap() {
            out.push((
                e.event.unwrap().into_owned(),
                serde_json::from_str(&e.data).unwrap(),
            ));
        }
        out
    }

    #[test]
    fn text_stream_order() {
        let ev = events(stream(
            &plan(VendorScenario::echo()),
            "msg_1",
            "claude-x",
            false,
        ));
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(ev[0].1["message"]["model"], "claude-x");
        assert_eq!(ev[0].1["message"]["usage"]["input_tokens"], 10);
        assert_eq!(ev[3].1["delta"]["text"], "hello");
        assert_eq!(ev[5].1["delta"]["stop_reason"], "end_turn");
        assert_eq!(ev[5].1["usage"]["output_tokens"], 2);
        // Every event's `type` matches its SSE name.
        assert!(ev.iter().all(|(n, v)| v["type"] == n.as_str()));
    }

    #[test]
    fn thinking_then_signature_then_text() {
        let ev = events(stream(&plan(VendorScenario::thinking()), "m", "c", true));
        assert_eq!(ev[1].0, "vendor_extra");
        let deltas: Vec<&str> = ev
            .iter()
            .filter(|(n, _)| n == "content_block_delta")
            .map(|(_, v)| v["delta"]["type"].as_str().unwrap())
            .collect();
        let sig = deltas.iter().position(|t| *t == "signature_delta").unwrap();
        assert!(deltas[..sig].iter().all(|t| *t == "thinking_delta"));
        assert!(deltas[sig + 1..].iter().all(|t| *t == "text_delta"));
        assert_eq!(deltas.len(), 6 + 1 + 4);
    }

    #[test]
    fn tool_json_and_response_agree() {
        let a = plan(VendorScenario::tools(1, 2));
        let ev = events(stream(&a, "m", "c", false));
        let partial: String = ev
            .iter()
            .filter(|(_, v)| v["delta"]["type"] == "input_json_delta")
            .map(|(_, v)| v["delta"]["partial_json"].as_str().unwrap().to_owned())
            .collect();
        let r = response(&a, "m", "c", false);
        assert_eq!(
            r["content"][1]["input"],
            serde_json::from_str::<Value>(&partial).unwrap()
        );
        assert_eq!(r["content"][1]["id"], "toolu_1");
        assert_eq!(r["stop_reason"], "tool_use");
        assert_eq!(r["usage"]["output_tokens"], a.usage.output);
        assert!(r.get("vendor_extra").is_none());
    }
}
