//! A provider's chat-completions stream (SSE events) -> canonical events.
//!
//! What it accepts, beyond OpenAI's own streams: `reasoning` as well as
//! `reasoning_content`; tool-call fragments without `index` (they continue
//! the last call, or start one when they carry an `id`); every call sent at
//! index 0 with distinct ids (a new id at a busy index starts a new call); a
//! name that arrives after the first fragment (arguments wait for it); usage
//! on any chunk; `{"error": ...}` payloads and `event: error`.
//!
//! Ordering it guarantees: `Start` once, from the first chunk; each tool call
//! is closed (`ToolCallEnd`) when `finish_reason` arrives or the stream ends;
//! `Stop` is held back until `[DONE]` or [`StreamParser::finish`], because
//! OpenAI sends the usage chunk after `finish_reason` and consumers that write
//! usage together with the stop (the messages format) must see it first.
//! A stream that ends with neither `finish_reason` nor `[DONE]` was cut off:
//! `finish` reports that as an error, never as a clean end.

use std::borrow::Cow;

use serde_json::Value;
use wire::openai::{ChunkChoice, ToolCallChunk};
use wire::sse::SseEvent;

use super::response::finish_to_stop;
use super::usage_from_wire;
use crate::error::TranslateError;
use crate::model::{ChatEvent, StreamError};

#[derive(Debug)]
struct ToolSlot {
    /// The provider's `index`, when it gave one.
    provider_index: Option<u32>,
    id: String,
    /// Canonical index, assigned when `ToolCallStart` is emitted.
    index: Option<u32>,
    /// Arguments received before the name (emitted with the start).
    pending: String,
    open: bool,
}

/// Incremental parser of one provider stream.
#[derive(Debug, Default)]
pub struct StreamParser {
    started: bool,
    /// `[DONE]` seen or an error emitted: nothing more is read.
    done: bool,
    finish_reason: Option<String>,
    refused: bool,
    tools: Vec<ToolSlot>,
    next_index: u32,
}

impl StreamParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Read one SSE event, appending what it says to `out`.
    pub fn push(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<ChatEvent>,
    ) -> Result<(), TranslateError> {
        if self.done {
            return Ok(());
        }
        let data = event.data.trim();
        if event.event.as_deref() == Some("error") {
            self.fail(provider_error(&error_object(data)), out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.close_tools(out);
            self.stop(out);
            self.done = true;
            return Ok(());
        }
        let payload = super::chunk::read(data)
            .map_err(|e| TranslateError::Upstream(format!("invalid stream chunk: {e}")))?;
        if let Some(err) = payload.error.filter(|e| !e.is_null()) {
            self.fail(provider_error(&err), out);
            return Ok(());
        }
        if !self.started {
            self.started = true;
            out.push(ChatEvent::Start {
                id: payload.id.filter(|s| !s.is_empty()).map(Cow::into_owned),
                model: payload.model.filter(|s| !s.is_empty()).map(Cow::into_owned),
            });
        }
        for choice in payload.choices.unwrap_or_default() {
            if choice.index == 0 {
                self.choice(choice, out);
            }
        }
        if let Some(usage) = &payload.usage {
            out.push(ChatEvent::Usage(usage_from_wire(usage)));
        }
        Ok(())
    }

    /// The provider's stream has ended (connection closed).
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        if self.done {
            return;
        }
        if self.finish_reason.is_none() {
            self.fail(
                StreamError::upstream(502, "provider stream ended before its finish_reason"),
                out,
            );
            return;
        }
        self.close_tools(out);
        self.stop(out);
        self.done = true;
    }

    fn choice(&mut self, choice: ChunkChoice, out: &mut Vec<ChatEvent>) {
        if self.finish_reason.is_some() {
            // Content after the finish of the choice: nothing valid can follow.
            return;
        }
        let delta = choice.delta;
        if let Some(thinking) = delta.reasoning_content.or(delta.reasoning) {
            if !thinking.is_empty() {
                out.push(ChatEvent::ThinkingDelta(thinking));
            }
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            out.push(ChatEvent::TextDelta(text));
        }
        if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
            self.refused = true;
            out.push(ChatEvent::TextDelta(text));
        }
        for fragment in delta.tool_calls {
            self.tool_fragment(fragment, out);
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            self.close_tools(out);
            self.finish_reason = Some(reason);
        }
    }

    fn tool_fragment(&mut self, fragment: ToolCallChunk, out: &mut Vec<ChatEvent>) {
        let (name, arguments) = match fragment.function {
            Some(f) => (
                f.name.filter(|n| !n.is_empty()),
                f.arguments.unwrap_or_default(),
            ),
            None => (None, String::new()),
        };
        let id = fragment.id.filter(|id| !id.is_empty());
        let mut pos = match fragment.index {
            Some(idx) => self
                .tools
                .iter()
                .rposition(|s| s.open && s.provider_index == Some(idx)),
            None if id.is_some() => None,
            None => self.tools.iter().rposition(|s| s.open),
        };
        // A different id at a busy index is a new call (servers that send
        // every call at index 0).
        if let (Some(p), Some(new_id)) = (pos, id.as_deref()) {
            if self.tools.get(p).is_some_and(|s| s.id != new_id) {
                self.close_slot(p, out);
                pos = None;
            }
        }
        let p = match pos {
            Some(p) => p,
            None => {
                let id = id.unwrap_or_else(|| format!("call_{}", self.tools.len()));
                self.tools.push(ToolSlot {
                    provider_index: fragment.index,
                    id,
                    index: None,
                    pending: String::new(),
                    open: true,
                });
                self.tools.len() - 1
            }
        };
        if let Some(name) = name {
            self.start_slot(p, name, out);
        }
        if arguments.is_empty() {
            return;
        }
        let Some(slot) = self.tools.get_mut(p) else {
            return;
        };
        match slot.index {
            Some(index) => out.push(ChatEvent::ToolCallDelta { index, arguments }),
            None => slot.pending.push_str(&arguments),
        }
    }

    /// Emits `ToolCallStart` (and held-back arguments) unless already started.
    fn start_slot(&mut self, p: usize, name: String, out: &mut Vec<ChatEvent>) {
        let next = self.next_index;
        let Some(slot) = self.tools.get_mut(p) else {
            return;
        };
        if slot.index.is_some() {
            return;
        }
        slot.index = Some(next);
        self.next_index += 1;
        out.push(ChatEvent::ToolCallStart {
            index: next,
            id: slot.id.clone(),
            name,
        });
        if !slot.pending.is_empty() {
            out.push(ChatEvent::ToolCallDelta {
                index: next,
                arguments: std::mem::take(&mut slot.pending),
            });
        }
    }

    fn close_slot(&mut self, p: usize, out: &mut Vec<ChatEvent>) {
        let open = self.tools.get(p).is_some_and(|s| s.open);
        if !open {
            return;
        }
        // A call whose name never came is still reported (with an empty name)
        // rather than dropped.
        self.start_slot(p, String::new(), out);
        if let Some(slot) = self.tools.get_mut(p) {
            slot.open = false;
            if let Some(index) = slot.index {
                out.push(ChatEvent::ToolCallEnd { index });
            }
        }
    }

    fn close_tools(&mut self, out: &mut Vec<ChatEvent>) {
        for p in 0..self.tools.len() {
            self.close_slot(p, out);
        }
    }

    fn stop(&mut self, out: &mut Vec<ChatEvent>) {
        let reason = finish_to_stop(
            self.finish_reason.as_deref(),
            !self.tools.is_empty(),
            self.refused,
        );
        out.push(ChatEvent::Stop {
            reason,
            stop_sequence: None,
        });
    }

    fn fail(&mut self, err: StreamError, out: &mut Vec<ChatEvent>) {
        self.done = true;
        out.push(ChatEvent::Error(err));
    }
}

/// The error object of an `event: error` payload: `{"error": {...}}` or the
/// object itself; a payload that is not JSON is its own message.
pub(crate) fn error_object(data: &str) -> Value {
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(mut map)) if map.contains_key("error") => {
            map.remove("error").unwrap_or(Value::Null)
        }
        Ok(other) => other,
        Err(_) => Value::String(data.to_owned()),
    }
}

/// A provider's error object (or string) in the gateway's vocabulary: the
/// status from a numeric `code` (400-599), else from the words of `type` /
/// `code` (rate limits and quota 429, overloaded 529), else 500; always an
/// `upstream_api_error`. The one classifier of the format: the stream parser
/// and the native-stream watch both use it.
pub fn provider_error(err: &Value) -> StreamError {
    let message = match err {
        Value::String(s) => s.clone(),
        Value::Object(map) => match map.get("message") {
            Some(Value::String(s)) => s.clone(),
            _ => err.to_string(),
        },
        other => other.to_string(),
    };
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default();
    let code = err.get("code");
    let numeric = code
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c));
    let code_text = code.and_then(Value::as_str).unwrap_or_default();
    let status = numeric.unwrap_or_else(|| {
        if kind.contains("rate_limit")
            || code_text.contains("rate_limit")
            || code_text == "insufficient_quota"
        {
            429
        } else if kind.contains("overloaded") {
            529
        } else {
            500
        }
    });
    StreamError::upstream(
        status,
        if message.is_empty() {
            "provider reported an error".to_owned()
        } else {
            message
        },
    )
}
