//! An answer plan in the OpenAI chat-completions shapes.
//!
//! Stream: `data:` lines of `chat.completion.chunk` objects, then
//! `data: [DONE]`. The first chunk carries `role` (and `content: ""`, or the
//! first tool call when the answer opens with one); thinking streams as
//! `reasoning_content` deltas, text as `content` deltas; each tool call opens
//! with a chunk holding its `index`, `id`, `type` and `function.name` (with
//! empty `arguments`), then argument fragments under the same `index`
//! (alternating between calls when `interleave` is set). A chunk with an empty
//! delta carries `finish_reason`. With `stream_options.include_usage`, every
//! chunk has `usage: null` and a last chunk with `choices: []` carries the
//! usage; without it no chunk has a `usage` key. With `extra`, the first chunk
//! has an unknown `vendor_extra` field. The JSON response holds the same
//! content and always its usage.
//!
//! Cached prompt tokens (`prompt_tokens_details.cached_tokens`): the cache
//! reads of a request marked with `cache_control`; otherwise, as the vendor
//! caches long prompts by itself, half of a prompt of 1024 tokens or more,
//! rounded down to a multiple of 128.

use serde_json::{json, Value};

use crate::content;
use crate::vendor_common::answer::{Answer, Block, Ending, Usage};
use crate::vendor_common::sse::SseFrames;

/// What every chunk of one answer repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkMeta<'a> {
    pub id: &'a str,
    pub created: u64,
    pub model: &'a str,
    pub fingerprint: &'a str,
    pub include_usage: bool,
    pub extra: bool,
}

/// The vendor's `finish_reason`.
pub fn finish_reason(ending: Ending) -> &'static str {
    match ending {
        Ending::EndTurn => "stop",
        Ending::ToolUse => "tool_calls",
        Ending::Length => "length",
    }
}

/// Cached prompt tokens, as the module docs describe.
pub fn cached_tokens(u: &Usage) -> u64 {
    let prompt = u.prompt_total();
    if u.cache_read > 0 {
        u.cache_read
    } else if prompt >= 1024 {
        prompt / 2 / 128 * 128
    } else {
        0
    }
}

/// The `usage` object.
pub fn usage_json(u: &Usage) -> Value {
    let prompt = u.prompt_total();
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": u.output,
        "total_tokens": prompt + u.output,
        "prompt_tokens_details": {"cached_tokens": cached_tokens(u), "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": u.reasoning, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
        },
    })
}

fn extra_payload() -> Value {
    json!({"note": "a field a client does not know", "sim": true})
}

/// Builds the chunks of one answer.
struct Chunks<'a> {
    meta: &'a ChunkMeta<'a>,
    frames: SseFrames,
}

impl Chunks<'_> {
    fn push(&mut self, choices: Value, usage: Option<Value>) {
        let m = self.meta;
        let mut chunk = json!({
            "id": m.id, "object": "chat.completion.chunk", "created": m.created,
            "model": m.model, "system_fingerprint": m.fingerprint, "choices": choices,
        });
        if m.include_usage {
            chunk["usage"] = usage.unwrap_or(Value::Null);
        }
        if m.extra && self.frames.len() == 0 {
            chunk["vendor_extra"] = extra_payload();
        }
        self.frames.json_data(&chunk);
    }

    fn delta(&mut self, delta: Value) {
        self.push(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
            None,
        );
    }
}

/// One tool call of the answer.
struct Call<'a> {
    index: usize,
    id: &'a str,
    name: &'a str,
    fragments: Vec<&'a str>,
}

fn opening(call: &Call<'_>) -> Value {
    json!([{"index": call.index, "id": call.id, "type": "function",
        "function": {"name": call.name, "arguments": ""}}])
}

/// The streamed answer, as SSE data lines.
pub(crate) fn stream(answer: &Answer, meta: &ChunkMeta<'_>) -> SseFrames {
    let mut c = Chunks {
        meta,
        frames: SseFrames::new(),
    };
    let calls: Vec<Call<'_>> = answer
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Tool {
                id,
                name,
                arguments,
            } => Some((id, name, arguments)),
            _ => None,
        })
        .enumerate()
        .map(|(index, (id, name, arguments))| Call {
            index,
            id,
            name,
            fragments: content::fragments(arguments, answer.fragments),
        })
        .collect();
    let opens_with_tool = matches!(answer.blocks.first(), Some(Block::Tool { .. }));
    if !opens_with_tool {
        c.delta(json!({"role": "assistant", "content": "", "refusal": null}));
    }
    for block in &answer.blocks {
        match block {
            Block::Thinking { text, .. } => {
                for piece in content::chunks(text, answer.chunk) {
                    c.delta(json!({"reasoning_content": piece}));
                }
            }
            Block::Text(text) => {
                for piece in content::chunks(text, answer.chunk) {
                    c.delta(json!({"content": piece}));
                }
            }
            Block::Tool { .. } => {}
        }
    }
    let mut tool_deltas = Vec::new();
    if answer.interleave {
        let rounds = calls.iter().map(|t| t.fragments.len()).max().unwrap_or(0) + 1;
        for round in 0..rounds {
            for call in &calls {
                if round == 0 {
                    tool_deltas.push(opening(call));
                } else if let Some(piece) = call.fragments.get(round - 1) {
                    tool_deltas
                        .push(json!([{"index": call.index, "function": {"arguments": piece}}]));
                }
            }
        }
    } else {
        for call in &calls {
            tool_deltas.push(opening(call));
            for piece in &call.fragments {
                tool_deltas.push(json!([{"index": call.index, "function": {"arguments": piece}}]));
            }
        }
    }
    for (i, tool_calls) in tool_deltas.into_iter().enumerate() {
        if i == 0 && opens_with_tool {
            c.delta(json!({"role": "assistant", "content": null, "tool_calls": tool_calls, "refusal": null}));
        } else {
            c.delta(json!({"tool_calls": tool_calls}));
        }
    }
    c.push(
        json!([{"index": 0, "delta": {}, "logprobs": null,
            "finish_reason": finish_reason(answer.ending)}]),
        None,
    );
    if meta.include_usage {
        c.push(json!([]), Some(usage_json(&answer.usage)));
    }
    c.frames.data(b"[DONE]");
    c.frames
}

/// The non-streaming response.
pub fn response(answer: &Answer, meta: &ChunkMeta<'_>) -> Value {
    let text = answer.text();
    let mut thinking = String::new();
    let mut tool_calls = Vec::new();
    for block in &answer.blocks {
        match block {
            Block::Thinking { text, .. } => thinking.push_str(text),
            Block::Tool {
                id,
                name,
                arguments,
            } => tool_calls.push(json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments}})),
            Block::Text(_) => {}
        }
    }
    let has_text = answer.blocks.iter().any(|b| matches!(b, Block::Text(_)));
    let mut message = json!({
        "role": "assistant",
        "content": if has_text { Value::String(text) } else { Value::Null },
        "refusal": null,
        "annotations": [],
    });
    if !thinking.is_empty() {
        message["reasoning_content"] = Value::String(thinking);
    }
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    let mut out = json!({
        "id": meta.id, "object": "chat.completion", "created": meta.created, "model": meta.model,
        "choices": [{"index": 0, "message": message, "logprobs": null,
            "finish_reason": finish_reason(answer.ending)}],
        "usage": usage_json(&answer.usage),
        "service_tier": "default",
        "system_fingerprint": meta.fingerprint,
    });
    if meta.extra {
        out["vendor_extra"] = extra_payload();
    }
    out
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
