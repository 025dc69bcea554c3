//! A provider's messages stream to [`ChatEvent`]s.
//!
//! Mapping: `message_start` -> `Start` + `Usage` (input and cache counts);
//! text / thinking / redacted-thinking / tool-use blocks and their deltas ->
//! the matching events, tool calls numbered among tool-use blocks (not by
//! block index); `content_block_stop` of a tool block -> `ToolCallEnd`;
//! `message_delta` -> `Usage` + `Stop`; `error` -> `Error`. `ping`, unknown
//! events and blocks the model has no place for (server tools, citations)
//! are skipped.
//!
//! Content that a provider puts in `content_block_start` itself (non-empty
//! text, a `tool_use` input object, a thinking signature) is emitted too, so
//! a provider that sends whole blocks loses nothing.

use wire::anthropic as w;
use wire::sse::SseEvent;

use super::usage_from_stream;
use crate::error::TranslateError;
use crate::model::{ChatEvent, StreamError, StreamErrorKind, Usage};
use crate::stop;

/// Parses one provider stream; feed it every SSE event, then call `finish`.
#[derive(Debug, Default)]
pub struct StreamParser {
    /// Open blocks by their wire index (normally at most one).
    blocks: Vec<(u32, Block)>,
    tool_calls: u32,
    started: bool,
    /// A stop reason arrived: the answer is complete even if the connection
    /// drops before `message_stop`.
    stopped: bool,
    /// `message_stop` or `error` seen: later events are ignored.
    ended: bool,
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        signed: bool,
        /// A signature given in `content_block_start`, used when no
        /// `signature_delta` follows.
        start_signature: Option<String>,
    },
    Tool {
        call: u32,
        streamed: bool,
        /// The `input` of `content_block_start` when it was not `{}`.
        start_input: Option<String>,
    },
    /// A block with no canonical form; its deltas are skipped.
    Ignored,
}

impl StreamParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Converts one SSE event. An event whose data is not valid JSON of a
    /// known shape is a protocol error.
    pub fn push(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<ChatEvent>,
    ) -> Result<(), TranslateError> {
        if self.ended || event.data.trim().is_empty() {
            return Ok(());
        }
        let parsed = super::event::read(&event.data).map_err(|e| {
            TranslateError::Upstream(format!(
                "invalid `{}` event: {e}",
                event.event.as_deref().unwrap_or("message")
            ))
        })?;
        match parsed {
            w::StreamEvent::MessageStart { message } => {
                if !self.started {
                    self.started = true;
                    out.push(ChatEvent::Start {
                        id: message.id,
                        model: message.model,
                    });
                }
                if let Some(u) = message.usage {
                    // Output counts here are provisional; message_delta has the real one.
                    push_usage(
                        out,
                        Usage {
                            output_tokens: None,
                            ..usage_from_stream(&u)
                        },
                    );
                }
            }
            w::StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block, out),
            w::StreamEvent::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
            w::StreamEvent::ContentBlockStop { index } => self.stop_block(index, out),
            w::StreamEvent::MessageDelta { delta, usage } => {
                push_usage(out, usage_from_stream(&usage));
                if let Some(reason) = delta.stop_reason {
                    self.stopped = true;
                    out.push(ChatEvent::Stop {
                        reason: stop::from_anthropic(&reason),
                        stop_sequence: delta.stop_sequence,
                    });
                }
            }
            w::StreamEvent::MessageStop => self.ended = true,
            w::StreamEvent::Error { error } => {
                self.ended = true;
                out.push(ChatEvent::Error(provider_error(&error)));
            }
            w::StreamEvent::Ping | w::StreamEvent::Unknown => {}
        }
        Ok(())
    }

    /// End of input. A stream cut before its stop reason (no `message_delta`
    /// with one, no `message_stop`, no `error`) ends with an `Error`: it is a
    /// broken answer, never a clean end.
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        if self.ended || self.stopped {
            self.ended = true;
            return;
        }
        self.ended = true;
        out.push(ChatEvent::Error(StreamError::upstream(
            502,
            "the provider's stream ended before the message was complete",
        )));
    }

    fn start_block(&mut self, index: u32, block: w::ContentBlock, out: &mut Vec<ChatEvent>) {
        let state = match block {
            w::ContentBlock::Text(t) => {
                if !t.text.is_empty() {
                    out.push(ChatEvent::TextDelta(t.text));
                }
                Block::Text
            }
            w::ContentBlock::Thinking(t) => {
                if !t.thinking.is_empty() {
                    out.push(ChatEvent::ThinkingDelta(t.thinking));
                }
                Block::Thinking {
                    signed: false,
                    start_signature: t.signature.filter(|s| !s.is_empty()),
                }
            }
            w::ContentBlock::RedactedThinking(r) => {
                out.push(ChatEvent::RedactedThinking(r.data));
                Block::Ignored
            }
            w::ContentBlock::ToolUse(t) => {
                let call = self.tool_calls;
                self.tool_calls += 1;
                out.push(ChatEvent::ToolCallStart {
                    index: call,
                    id: t.id,
                    name: t.name,
                });
                let start_input = match &t.input {
                    serde_json::Value::Object(map) if map.is_empty() => None,
                    serde_json::Value::Null => None,
                    input => Some(input.to_string()),
                };
                Block::Tool {
                    call,
                    streamed: false,
                    start_input,
                }
            }
            w::ContentBlock::Image(_)
            | w::ContentBlock::ToolResult(_)
            | w::ContentBlock::Other(_) => Block::Ignored,
        };
        match self.blocks.iter_mut().find(|(i, _)| *i == index) {
            Some(slot) => slot.1 = state,
            None => self.blocks.push((index, state)),
        }
    }

    fn delta(
        &mut self,
        index: u32,
        delta: w::BlockDelta,
        out: &mut Vec<ChatEvent>,
    ) -> Result<(), TranslateError> {
        let block = self
            .blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b);
        if matches!(block, Some(Block::Ignored)) {
            return Ok(());
        }
        match delta {
            // Text and thinking need no block state: accepted even for a
            // block the provider never opened.
            w::BlockDelta::TextDelta { text } => {
                if !text.is_empty() {
                    out.push(ChatEvent::TextDelta(text));
                }
            }
            w::BlockDelta::ThinkingDelta { thinking } => {
                if !thinking.is_empty() {
                    out.push(ChatEvent::ThinkingDelta(thinking));
                }
            }
            w::BlockDelta::SignatureDelta { signature } => {
                if let Some(Block::Thinking { signed, .. }) = block {
                    *signed = true;
                }
                out.push(ChatEvent::ThinkingSignature(signature));
            }
            w::BlockDelta::InputJsonDelta { partial_json } => match block {
                Some(Block::Tool { call, streamed, .. }) => {
                    *streamed = true;
                    if !partial_json.is_empty() {
                        out.push(ChatEvent::ToolCallDelta {
                            index: *call,
                            arguments: partial_json,
                        });
                    }
                }
                _ => {
                    return Err(TranslateError::Upstream(format!(
                        "input_json_delta for block {index}, which is not an open tool_use block"
                    )))
                }
            },
            w::BlockDelta::CitationsDelta { .. } | w::BlockDelta::Unknown => {}
        }
        Ok(())
    }

    fn stop_block(&mut self, index: u32, out: &mut Vec<ChatEvent>) {
        let Some(at) = self.blocks.iter().position(|(i, _)| *i == index) else {
            return;
        };
        let (_, block) = self.blocks.swap_remove(at);
        match block {
            Block::Tool {
                call,
                streamed,
                start_input,
            } => {
                if let (false, Some(arguments)) = (streamed, start_input) {
                    out.push(ChatEvent::ToolCallDelta {
                        index: call,
                        arguments,
                    });
                }
                out.push(ChatEvent::ToolCallEnd { index: call });
            }
            Block::Thinking {
                signed: false,
                start_signature: Some(signature),
            } => out.push(ChatEvent::ThinkingSignature(signature)),
            Block::Text | Block::Thinking { .. } | Block::Ignored => {}
        }
    }
}

fn push_usage(out: &mut Vec<ChatEvent>, usage: Usage) {
    if usage != Usage::default() {
        out.push(ChatEvent::Usage(usage));
    }
}

/// A provider's error object in the gateway's vocabulary: `overloaded_error`
/// stays itself (529); every other type is an `upstream_api_error` with the
/// HTTP status Anthropic documents for it (500 when unknown).
pub fn provider_error(error: &w::ErrorDetail) -> StreamError {
    let status = match error.kind.as_str() {
        "overloaded_error" => {
            return StreamError {
                status: 529,
                kind: StreamErrorKind::Overloaded,
                message: error.message.clone(),
            }
        }
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        _ => 500,
    };
    StreamError::upstream(status, error.message.clone())
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
