//! [`ChatEvent`]s to the messages stream a client reads (spec 4.1).
//!
//! Order on the wire: `message_start`; per content block `content_block_start`,
//! its deltas, `content_block_stop` (indices count from 0); `message_delta`
//! with the stop reason and usage; `message_stop`. An error ends the stream
//! with `event: error` and nothing after it.
//!
//! Anthropic blocks never interleave, but a provider may stream the arguments
//! of parallel tool calls interleaved (OpenAI does). The tool call that opened
//! first owns the current block; fragments of later calls are buffered and
//! written, each as one `input_json_delta`, when their turn comes.
//!
//! Each event is written straight into the output buffer (hand-written JSON
//! with [`super::json`]): no `Value`, no `format!`, one reserve per event. The
//! bytes are those of `wire::sse::write_event` (the JSON never holds a raw
//! line break), without building the data first.

use std::collections::VecDeque;

use bytes::{BufMut, BytesMut};

use crate::model::{ChatEvent, StopReason, StreamError, Usage};
use crate::stop;
use crate::ResponseMeta;
use wire::json::{write_str, write_uint};

/// Streams one answer in the messages format.
#[derive(Debug)]
pub struct StreamEncoder {
    meta: ResponseMeta,
    usage: Usage,
    /// Usage as `message_start` reported it, so `message_delta` can report
    /// what changed since.
    start_usage: Usage,
    started: bool,
    /// Set by `finish` or an error: later calls write nothing.
    done: bool,
    next_index: u32,
    open: Open,
    /// Tool calls waiting for the current tool block to close.
    queue: VecDeque<QueuedTool>,
    tool_calls: bool,
    stop: Option<(StopReason, Option<String>)>,
}

/// The block currently open on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    Text,
    Thinking,
    /// A `tool_use` block for the tool call with this `index`.
    Tool(u32),
}

#[derive(Debug)]
struct QueuedTool {
    call: u32,
    id: String,
    name: String,
    arguments: String,
    ended: bool,
}

impl StreamEncoder {
    /// `usage_hint` is what is known before the provider answers (typically an
    /// input-token estimate); the provider's own usage events overlay it.
    pub fn new(meta: ResponseMeta, usage_hint: Usage) -> Self {
        StreamEncoder {
            meta,
            usage: usage_hint,
            start_usage: Usage::default(),
            started: false,
            done: false,
            next_index: 0,
            open: Open::None,
            queue: VecDeque::new(),
            tool_calls: false,
            stop: None,
        }
    }

    /// Writes `message_start` unless it was written already (call it as soon
    /// as the response is committed, for a low time to first byte).
    pub fn begin(&mut self, out: &mut BytesMut) {
        if self.started || self.done {
            return;
        }
        self.started = true;
        self.start_usage = self.usage;
        out.reserve(self.meta.id.len() + self.meta.model.len() + 256);
        out.put_slice(
            b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":",
        );
        write_str(out, &self.meta.id);
        out.put_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":");
        write_str(out, &self.meta.model);
        out.put_slice(b",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":");
        write_uint(out, self.usage.input_tokens.unwrap_or(0));
        write_cache_usage(out, &self.usage);
        out.put_slice(b",\"output_tokens\":");
        write_uint(out, self.usage.output_tokens.unwrap_or(0));
        out.put_slice(b"}}}\n\n");
    }

    /// Writes what `event` adds to the stream (possibly nothing).
    pub fn push(&mut self, event: &ChatEvent, out: &mut BytesMut) {
        if self.done {
            return;
        }
        match event {
            // The client sees the gateway's id and model (`meta`), not the provider's.
            ChatEvent::Start { .. } => {}
            ChatEvent::Usage(usage) => self.usage.merge(usage),
            ChatEvent::Stop {
                reason,
                stop_sequence,
            } => self.stop = Some((reason.clone(), stop_sequence.clone())),
            ChatEvent::Error(err) => {
                error_event(err, out);
                self.done = true;
            }
            ChatEvent::TextDelta(text) => {
                if !text.is_empty() {
                    self.ensure_open(Open::Text, out);
                    self.delta(b"text_delta\",\"text\":", text, out);
                }
            }
            ChatEvent::ThinkingDelta(thinking) => {
                if !thinking.is_empty() {
                    self.ensure_open(Open::Thinking, out);
                    self.delta(b"thinking_delta\",\"thinking\":", thinking, out);
                }
            }
            ChatEvent::ThinkingSignature(signature) => {
                self.ensure_open(Open::Thinking, out);
                self.delta(b"signature_delta\",\"signature\":", signature, out);
                self.close(out);
            }
            ChatEvent::RedactedThinking(data) => {
                self.ensure_open(Open::None, out);
                let index = self.start_block(out);
                out.reserve(data.len() + 64);
                out.put_slice(b"{\"type\":\"redacted_thinking\",\"data\":");
                write_str(out, data);
                out.put_slice(b"}}\n\n");
                stop_block(index, out);
            }
            ChatEvent::ToolCallStart { index, id, name } => {
                self.begin(out);
                self.tool_calls = true;
                if matches!(self.open, Open::Tool(_)) || !self.queue.is_empty() {
                    self.queue.push_back(QueuedTool {
                        call: *index,
                        id: id.clone(),
                        name: name.clone(),
                        arguments: String::new(),
                        ended: false,
                    });
                } else {
                    self.close(out);
                    self.start_tool(*index, id, name, out);
                }
            }
            ChatEvent::ToolCallDelta { index, arguments } => {
                if arguments.is_empty() {
                    return;
                }
                if self.open == Open::Tool(*index) {
                    self.delta(b"input_json_delta\",\"partial_json\":", arguments, out);
                } else if let Some(queued) = self.queued(*index) {
                    queued.arguments.push_str(arguments);
                }
                // A fragment of a call whose block is already closed has no
                // place left on the wire; it is dropped.
            }
            ChatEvent::ToolCallEnd { index } => {
                if self.open == Open::Tool(*index) {
                    self.close(out);
                    self.drain_queue(out);
                } else if let Some(queued) = self.queued(*index) {
                    queued.ended = true;
                }
            }
        }
    }

    /// Closes the open block and writes `message_delta` and `message_stop`.
    pub fn finish(&mut self, out: &mut BytesMut) {
        if self.done {
            return;
        }
        self.begin(out);
        self.ensure_open(Open::None, out);
        self.done = true;
        let (reason, stop_sequence) = match self.stop.take() {
            Some((StopReason::EndTurn, seq)) if self.tool_calls => (StopReason::ToolUse, seq),
            Some(stop) => stop,
            None if self.tool_calls => (StopReason::ToolUse, None),
            None => (StopReason::EndTurn, None),
        };
        out.reserve(256);
        out.put_slice(b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"");
        out.put_slice(stop::to_anthropic(&reason).as_bytes());
        out.put_slice(b"\",\"stop_sequence\":");
        match &stop_sequence {
            Some(seq) => write_str(out, seq),
            None => out.put_slice(b"null"),
        }
        out.put_slice(b"},\"usage\":{");
        // Input and cache counts are repeated only when they changed after
        // message_start (e.g. a provider that reports usage at the end).
        let u = self.usage;
        let s = self.start_usage;
        if u.input_tokens.is_some() && u.input_tokens != s.input_tokens {
            out.put_slice(b"\"input_tokens\":");
            write_uint(out, u.input_tokens.unwrap_or(0));
            out.put_u8(b',');
        }
        if u.cache_write_tokens.is_some() && u.cache_write_tokens != s.cache_write_tokens {
            out.put_slice(b"\"cache_creation_input_tokens\":");
            write_uint(out, u.cache_write_tokens.unwrap_or(0));
            out.put_u8(b',');
        }
        if u.cache_read_tokens.is_some() && u.cache_read_tokens != s.cache_read_tokens {
            out.put_slice(b"\"cache_read_input_tokens\":");
            write_uint(out, u.cache_read_tokens.unwrap_or(0));
            out.put_u8(b',');
        }
        out.put_slice(b"\"output_tokens\":");
        write_uint(out, u.output_tokens.unwrap_or(0));
        out.put_slice(b"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    }

    /// Makes `want` the open block: writes `message_start` if needed, closes a
    /// different open block (tool calls still buffered are written whole), and
    /// opens a text or thinking block. `Open::None` just closes.
    fn ensure_open(&mut self, want: Open, out: &mut BytesMut) {
        self.begin(out);
        if self.open == want && want != Open::None {
            return;
        }
        self.close(out);
        while let Some(tool) = self.queue.pop_front() {
            self.start_tool(tool.call, &tool.id, &tool.name, out);
            if !tool.arguments.is_empty() {
                self.delta(
                    b"input_json_delta\",\"partial_json\":",
                    &tool.arguments,
                    out,
                );
            }
            self.close(out);
        }
        match want {
            Open::Text => {
                self.start_block(out);
                out.put_slice(b"{\"type\":\"text\",\"text\":\"\"}}\n\n");
                self.open = Open::Text;
            }
            Open::Thinking => {
                self.start_block(out);
                out.put_slice(b"{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n");
                self.open = Open::Thinking;
            }
            Open::None | Open::Tool(_) => {}
        }
    }

    /// After the current tool block closed: opens the queued calls in order,
    /// closing those that already ended, until one is still streaming.
    fn drain_queue(&mut self, out: &mut BytesMut) {
        while let Some(tool) = self.queue.pop_front() {
            self.start_tool(tool.call, &tool.id, &tool.name, out);
            if !tool.arguments.is_empty() {
                self.delta(
                    b"input_json_delta\",\"partial_json\":",
                    &tool.arguments,
                    out,
                );
            }
            if !tool.ended {
                return;
            }
            self.close(out);
        }
    }

    fn queued(&mut self, call: u32) -> Option<&mut QueuedTool> {
        self.queue.iter_mut().find(|t| t.call == call)
    }

    fn start_tool(&mut self, call: u32, id: &str, name: &str, out: &mut BytesMut) {
        self.start_block(out);
        out.reserve(id.len() + name.len() + 64);
        out.put_slice(b"{\"type\":\"tool_use\",\"id\":");
        write_str(out, id);
        out.put_slice(b",\"name\":");
        write_str(out, name);
        out.put_slice(b",\"input\":{}}}\n\n");
        self.open = Open::Tool(call);
    }

    /// Writes the head of `content_block_start` up to `"content_block":` and
    /// takes the next index; the caller writes the block and `}}\n\n`.
    fn start_block(&mut self, out: &mut BytesMut) -> u32 {
        let index = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        out.reserve(128);
        out.put_slice(
            b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":",
        );
        write_uint(out, index);
        out.put_slice(b",\"content_block\":");
        index
    }

    /// The open block's index (blocks are numbered as they open).
    fn open_index(&self) -> u32 {
        self.next_index.saturating_sub(1)
    }

    /// A `content_block_delta` on the open block; `kind_and_field` is
    /// `<delta type>","<field>":` and `value` the field's string. This is the
    /// hot path for text: one reserve, one escape pass.
    fn delta(&mut self, kind_and_field: &[u8], value: &str, out: &mut BytesMut) {
        out.reserve(value.len() + 120);
        out.put_slice(
            b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":",
        );
        write_uint(out, self.open_index());
        out.put_slice(b",\"delta\":{\"type\":\"");
        out.put_slice(kind_and_field);
        write_str(out, value);
        out.put_slice(b"}}\n\n");
    }

    /// Closes the open block, if any.
    fn close(&mut self, out: &mut BytesMut) {
        if self.open != Open::None {
            stop_block(self.open_index(), out);
            self.open = Open::None;
        }
    }
}

fn stop_block(index: u32, out: &mut BytesMut) {
    out.put_slice(b"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":");
    write_uint(out, index);
    out.put_slice(b"}\n\n");
}

/// `,"cache_creation_input_tokens":N,"cache_read_input_tokens":M` for the known ones.
fn write_cache_usage(out: &mut BytesMut, usage: &Usage) {
    if let Some(n) = usage.cache_write_tokens {
        out.put_slice(b",\"cache_creation_input_tokens\":");
        write_uint(out, n);
    }
    if let Some(n) = usage.cache_read_tokens {
        out.put_slice(b",\"cache_read_input_tokens\":");
        write_uint(out, n);
    }
}

/// The in-stream error of the messages format:
/// `event: error` / `data: {"type":"error","error":{"type":..,"message":..}}`.
pub fn error_event(err: &StreamError, out: &mut BytesMut) {
    out.reserve(err.message.len() + 64);
    out.put_slice(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":");
    write_str(out, err.kind.as_str());
    out.put_slice(b",\"message\":");
    write_str(out, &err.message);
    out.put_slice(b"}}\n\n");
}

#[cfg(test)]
#[path = "encoder_tests.rs"]
mod tests;
