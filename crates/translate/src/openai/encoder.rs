//! Canonical events -> `chat.completion.chunk` SSE lines (spec 4.1).
//!
//! Order written: a role chunk (`{"role":"assistant","content":""}`) before
//! anything else; content, `reasoning_content` and tool-call deltas as they
//! come; one finish chunk (empty delta, `finish_reason`); the usage chunk
//! (`choices: []`) when the client wants usage; `data: [DONE]`. Every chunk
//! before the finish chunk has `"finish_reason":null`.
//!
//! Usage events are only merged, and written once in the usage chunk. An
//! error event ends the stream: nothing follows it (no finish chunk, no
//! `[DONE]`), so a client can never mistake a broken answer for a whole one.
//! Thinking signatures and redacted thinking have no OpenAI form and are
//! skipped.
//!
//! Chunks are written straight into the output buffer from a prefix computed
//! once (id, object, created, model), with no `Value`, no `format!` and no
//! allocation per event beyond the buffer's growth.

use bytes::{BufMut, BytesMut};
use wire::sse::DONE;

use super::prompt_tokens;
use crate::model::{ChatEvent, StopReason, StreamError, Usage};
use crate::stop;
use crate::ResponseMeta;
use wire::json::{write_str, write_uint};

/// Tail of every chunk that is not the finish chunk.
const OPEN_CHOICE: &[u8] = b",\"choices\":[{\"index\":0,\"delta\":";
const CLOSE_CHOICE_NULL: &[u8] = b",\"finish_reason\":null}]}\n\n";

/// Writes one client stream. See the module doc for the exact order.
#[derive(Debug)]
pub struct StreamEncoder {
    /// `data: {"id":...,"object":"chat.completion.chunk","created":...,"model":...`
    head: Vec<u8>,
    include_usage: bool,
    started: bool,
    stopped: bool,
    /// Set after `finish` or an error: every later call writes nothing.
    ended: bool,
    saw_tool_calls: bool,
    usage: Usage,
}

impl StreamEncoder {
    /// An encoder for the response `meta`; `include_usage` is the client's
    /// `stream_options.include_usage` (default true).
    pub fn new(meta: ResponseMeta, include_usage: bool) -> Self {
        let mut head = BytesMut::with_capacity(96 + meta.id.len() + meta.model.len());
        head.put_slice(b"data: {\"id\":");
        write_str(&mut head, &meta.id);
        head.put_slice(b",\"object\":\"chat.completion.chunk\",\"created\":");
        write_uint(&mut head, meta.created);
        head.put_slice(b",\"model\":");
        write_str(&mut head, &meta.model);
        StreamEncoder {
            head: head.to_vec(),
            include_usage,
            started: false,
            stopped: false,
            ended: false,
            saw_tool_calls: false,
            usage: Usage::default(),
        }
    }

    /// Write what `event` adds to the stream (possibly nothing).
    pub fn push(&mut self, event: &ChatEvent, out: &mut BytesMut) {
        if self.ended {
            return;
        }
        match event {
            ChatEvent::Start { .. } => self.ensure_started(out),
            ChatEvent::TextDelta(text) => {
                if !text.is_empty() && !self.stopped {
                    self.ensure_started(out);
                    self.open(out, text.len() + 16);
                    out.put_slice(b"{\"content\":");
                    write_str(out, text);
                    out.put_u8(b'}');
                    out.put_slice(CLOSE_CHOICE_NULL);
                }
            }
            ChatEvent::ThinkingDelta(text) => {
                if !text.is_empty() && !self.stopped {
                    self.ensure_started(out);
                    self.open(out, text.len() + 32);
                    out.put_slice(b"{\"reasoning_content\":");
                    write_str(out, text);
                    out.put_u8(b'}');
                    out.put_slice(CLOSE_CHOICE_NULL);
                }
            }
            ChatEvent::ThinkingSignature(_) | ChatEvent::RedactedThinking(_) => {}
            ChatEvent::ToolCallStart { index, id, name } => {
                if !self.stopped {
                    self.ensure_started(out);
                    self.saw_tool_calls = true;
                    self.open(out, id.len() + name.len() + 96);
                    out.put_slice(b"{\"tool_calls\":[{\"index\":");
                    write_uint(out, *index);
                    out.put_slice(b",\"id\":");
                    write_str(out, id);
                    out.put_slice(b",\"type\":\"function\",\"function\":{\"name\":");
                    write_str(out, name);
                    out.put_slice(b",\"arguments\":\"\"}}]}");
                    out.put_slice(CLOSE_CHOICE_NULL);
                }
            }
            ChatEvent::ToolCallDelta { index, arguments } => {
                if !arguments.is_empty() && !self.stopped {
                    self.ensure_started(out);
                    self.open(out, arguments.len() + 64);
                    out.put_slice(b"{\"tool_calls\":[{\"index\":");
                    write_uint(out, *index);
                    out.put_slice(b",\"function\":{\"arguments\":");
                    write_str(out, arguments);
                    out.put_slice(b"}}]}");
                    out.put_slice(CLOSE_CHOICE_NULL);
                }
            }
            ChatEvent::ToolCallEnd { .. } => {}
            ChatEvent::Usage(usage) => self.usage.merge(usage),
            ChatEvent::Stop { reason, .. } => {
                if !self.stopped {
                    self.ensure_started(out);
                    self.write_finish(reason, out);
                }
            }
            ChatEvent::Error(err) => {
                error_event(err, out);
                self.ended = true;
            }
        }
    }

    /// End the stream: the finish chunk if no `Stop` came, the usage chunk
    /// when wanted, then `[DONE]`. Writes nothing after an error.
    pub fn finish(&mut self, out: &mut BytesMut) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.ensure_started(out);
        if !self.stopped {
            let reason = if self.saw_tool_calls {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            };
            self.write_finish(&reason, out);
        }
        if self.include_usage {
            self.write_usage(out);
        }
        out.put_slice(DONE);
    }

    /// The usage merged so far (for logs and accounting after the stream).
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Write the opening role chunk now (if not yet written), so the client
    /// sees bytes as soon as the provider has answered.
    pub fn begin(&mut self, out: &mut BytesMut) {
        self.ensure_started(out);
    }

    fn ensure_started(&mut self, out: &mut BytesMut) {
        if !self.started {
            self.started = true;
            self.open(out, 40);
            out.put_slice(b"{\"role\":\"assistant\",\"content\":\"\"}");
            out.put_slice(CLOSE_CHOICE_NULL);
        }
    }

    /// Writes the chunk head up to the delta value; `extra` sizes the reserve.
    fn open(&self, out: &mut BytesMut, extra: usize) {
        out.reserve(self.head.len() + OPEN_CHOICE.len() + CLOSE_CHOICE_NULL.len() + extra);
        out.put_slice(&self.head);
        out.put_slice(OPEN_CHOICE);
    }

    fn write_finish(&mut self, reason: &StopReason, out: &mut BytesMut) {
        self.stopped = true;
        // A turn that called tools ends in `tool_calls` whatever the provider
        // called a plain end, so clients run the tools.
        let word = if self.saw_tool_calls && *reason == StopReason::EndTurn {
            "tool_calls"
        } else {
            stop::to_openai(reason)
        };
        self.open(out, 32);
        out.put_slice(b"{},\"finish_reason\":\"");
        out.put_slice(word.as_bytes());
        out.put_slice(b"\"}]}\n\n");
    }

    fn write_usage(&self, out: &mut BytesMut) {
        let prompt = prompt_tokens(&self.usage);
        let completion = self.usage.output_tokens.unwrap_or(0);
        out.reserve(self.head.len() + 160);
        out.put_slice(&self.head);
        out.put_slice(b",\"choices\":[],\"usage\":{\"prompt_tokens\":");
        write_uint(out, prompt);
        out.put_slice(b",\"completion_tokens\":");
        write_uint(out, completion);
        out.put_slice(b",\"total_tokens\":");
        write_uint(out, u64::from(prompt) + u64::from(completion));
        if let Some(cached) = self.usage.cache_read_tokens {
            out.put_slice(b",\"prompt_tokens_details\":{\"cached_tokens\":");
            write_uint(out, cached);
            out.put_u8(b'}');
        }
        out.put_slice(b"}}\n\n");
    }
}

/// Writes the in-stream error of this format:
/// `data: {"error":{"message":...,"type":...}}`.
pub fn error_event(err: &StreamError, out: &mut BytesMut) {
    out.reserve(err.message.len() + 48);
    out.put_slice(b"data: {\"error\":{\"message\":");
    write_str(out, &err.message);
    out.put_slice(b",\"type\":");
    write_str(out, err.kind.as_str());
    out.put_slice(b"}}\n\n");
}
