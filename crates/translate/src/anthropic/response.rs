//! Whole (non-streaming) answers, both ways: a collected [`ChatResponse`] to
//! the client's JSON body ([`write_response`]; [`render_response`] gives it
//! as a typed object), and a provider's JSON body to [`ChatEvent`]s.
//!
//! Both follow the encoder and the parser, so a streamed and a whole answer
//! never disagree: empty text is left out, thinking always carries a
//! `signature` (empty when the provider gave none, as the stream's
//! `content_block_start` does), and the stop reason is `tool_use` whenever
//! the answer called tools and the provider said `end_turn`.

use wire::anthropic as w;
use wire::json;

use super::arguments_object;
use crate::collect::ChatResponse;
use crate::model::{ChatEvent, ContentPart, Usage};
use crate::stop::{self, final_stop_reason};
use crate::ResponseMeta;

/// The messages-format body for a collected answer.
pub fn render_response(resp: &ChatResponse, meta: &ResponseMeta) -> w::MessagesResponse {
    let content = resp
        .content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text, .. } if text.is_empty() => None,
            ContentPart::Text { text, .. } => Some(w::ContentBlock::Text(w::TextBlock {
                text: text.clone(),
                cache_control: None,
                citations: None,
            })),
            ContentPart::Thinking {
                thinking,
                signature,
            } => Some(w::ContentBlock::Thinking(w::ThinkingBlock {
                thinking: thinking.clone(),
                signature: Some(signature.clone().unwrap_or_default()),
            })),
            ContentPart::RedactedThinking { data } => Some(w::ContentBlock::RedactedThinking(
                w::RedactedThinkingBlock { data: data.clone() },
            )),
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => Some(w::ContentBlock::ToolUse(w::ToolUseBlock {
                id: id.clone(),
                name: name.clone(),
                input: arguments_object(arguments),
                cache_control: None,
            })),
            // Inputs only; an answer never carries them.
            ContentPart::Image(_) | ContentPart::ToolResult { .. } => None,
        })
        .collect();
    let reason = final_stop_reason(resp.stop_reason.as_ref(), resp.has_tool_calls());
    w::MessagesResponse {
        id: meta.id.clone(),
        kind: "message".to_owned(),
        role: "assistant".to_owned(),
        content,
        model: meta.model.clone(),
        stop_reason: Some(stop::to_anthropic(&reason).to_owned()),
        stop_sequence: resp.stop_sequence.clone(),
        usage: w::Usage {
            input_tokens: resp.usage.input_tokens.unwrap_or(0),
            cache_creation_input_tokens: resp.usage.cache_write_tokens,
            cache_read_input_tokens: resp.usage.cache_read_tokens,
            output_tokens: resp.usage.output_tokens.unwrap_or(0),
        },
    }
}

/// [`render_response`] written straight into `out`: the bytes `serde_json`
/// writes for it, without building the typed object first (every string
/// cloned) or serde's per-field machinery. Every non-streaming messages
/// answer is written here.
pub fn write_response(resp: &ChatResponse, meta: &ResponseMeta, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":");
    json::write_str(out, &meta.id);
    out.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
    let mut first = true;
    for part in &resp.content {
        let Some(kind) = block_type(part) else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(b"{\"type\":");
        json::write_str(out, kind);
        match part {
            ContentPart::Text { text, .. } => {
                out.extend_from_slice(b",\"text\":");
                json::write_str(out, text);
            }
            ContentPart::Thinking {
                thinking,
                signature,
            } => {
                out.extend_from_slice(b",\"thinking\":");
                json::write_str(out, thinking);
                out.extend_from_slice(b",\"signature\":");
                json::write_str(out, signature.as_deref().unwrap_or_default());
            }
            ContentPart::RedactedThinking { data } => {
                out.extend_from_slice(b",\"data\":");
                json::write_str(out, data);
            }
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => {
                out.extend_from_slice(b",\"id\":");
                json::write_str(out, id);
                out.extend_from_slice(b",\"name\":");
                json::write_str(out, name);
                out.extend_from_slice(b",\"input\":");
                // A `Value` always serializes.
                let _ = serde_json::to_writer(&mut *out, &arguments_object(arguments));
            }
            ContentPart::Image(_) | ContentPart::ToolResult { .. } => {}
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"model\":");
    json::write_str(out, &meta.model);
    let reason = final_stop_reason(resp.stop_reason.as_ref(), resp.has_tool_calls());
    out.extend_from_slice(b",\"stop_reason\":");
    json::write_str(out, stop::to_anthropic(&reason));
    out.extend_from_slice(b",\"stop_sequence\":");
    match &resp.stop_sequence {
        Some(sequence) => json::write_str(out, sequence),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"usage\":{\"input_tokens\":");
    json::write_uint(out, resp.usage.input_tokens.unwrap_or(0));
    if let Some(tokens) = resp.usage.cache_write_tokens {
        out.extend_from_slice(b",\"cache_creation_input_tokens\":");
        json::write_uint(out, tokens);
    }
    if let Some(tokens) = resp.usage.cache_read_tokens {
        out.extend_from_slice(b",\"cache_read_input_tokens\":");
        json::write_uint(out, tokens);
    }
    out.extend_from_slice(b",\"output_tokens\":");
    json::write_uint(out, resp.usage.output_tokens.unwrap_or(0));
    out.extend_from_slice(b"}}");
}

/// The `type` of the block an answer's part becomes; `None` for what an
/// answer leaves out (empty text; images and tool results are inputs only).
fn block_type(part: &ContentPart) -> Option<&'static str> {
    match part {
        ContentPart::Text { text, .. } if text.is_empty() => None,
        ContentPart::Text { .. } => Some("text"),
        ContentPart::Thinking { .. } => Some("thinking"),
        ContentPart::RedactedThinking { .. } => Some("redacted_thinking"),
        ContentPart::ToolUse { .. } => Some("tool_use"),
        ContentPart::Image(_) | ContentPart::ToolResult { .. } => None,
    }
}

/// A provider's whole answer as the events its stream would have carried:
/// `Start`, `Usage`, the content in order (tool calls numbered among tool
/// calls), then `Stop` when the provider gave a reason. Server-tool blocks
/// have no canonical form and are skipped.
pub fn response_events(resp: &w::MessagesResponse) -> Vec<ChatEvent> {
    let mut events = Vec::with_capacity(resp.content.len() * 2 + 3);
    events.push(ChatEvent::Start {
        id: Some(resp.id.clone()).filter(|s| !s.is_empty()),
        model: Some(resp.model.clone()).filter(|s| !s.is_empty()),
    });
    events.push(ChatEvent::Usage(Usage {
        input_tokens: Some(resp.usage.input_tokens),
        output_tokens: Some(resp.usage.output_tokens),
        cache_read_tokens: resp.usage.cache_read_input_tokens,
        cache_write_tokens: resp.usage.cache_creation_input_tokens,
    }));
    let mut tool_calls = 0u32;
    for block in &resp.content {
        match block {
            w::ContentBlock::Text(t) => {
                if !t.text.is_empty() {
                    events.push(ChatEvent::TextDelta(t.text.clone()));
                }
            }
            w::ContentBlock::Thinking(t) => {
                if !t.thinking.is_empty() {
                    events.push(ChatEvent::ThinkingDelta(t.thinking.clone()));
                }
                if let Some(signature) = t.signature.as_ref().filter(|s| !s.is_empty()) {
                    events.push(ChatEvent::ThinkingSignature(signature.clone()));
                }
            }
            w::ContentBlock::RedactedThinking(r) => {
                events.push(ChatEvent::RedactedThinking(r.data.clone()));
            }
            w::ContentBlock::ToolUse(t) => {
                let index = tool_calls;
                tool_calls += 1;
                events.push(ChatEvent::ToolCallStart {
                    index,
                    id: t.id.clone(),
                    name: t.name.clone(),
                });
                events.push(ChatEvent::ToolCallDelta {
                    index,
                    arguments: t.input.to_string(),
                });
                events.push(ChatEvent::ToolCallEnd { index });
            }
            w::ContentBlock::Image(_)
            | w::ContentBlock::ToolResult(_)
            | w::ContentBlock::Other(_) => {}
        }
    }
    if let Some(reason) = &resp.stop_reason {
        events.push(ChatEvent::Stop {
            reason: stop::from_anthropic(reason),
            stop_sequence: resp.stop_sequence.clone(),
        });
    }
    events
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
