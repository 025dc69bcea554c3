//! The `primary` event stream to [`ChatEvent`]s.
//!
//! The parser takes decoded event-stream messages (frames are whole and
//! checksum-verified by `wire::eventstream`) and never fails: a malformed
//! payload, an `exception` or `error` frame, or an `invalidStateEvent` becomes
//! one [`ChatEvent::Error`] that ends the stream.
//!
//! - Payloads are read as borrowed views ([`EventView`]), so a delta is
//!   copied once, into its event (an escaped one is decoded once and moved).
//! - Text goes through the `<thinking>` splitter when `extract_thinking` is
//!   on. Native `reasoningContentEvent`s become thinking events directly, and
//!   from the first one on the splitter is bypassed (after flushing it).
//! - Tool calls are streamed as they arrive: `ToolCallStart` on the first
//!   fragment of a `toolUseId`, a `ToolCallDelta` per input fragment, and
//!   `ToolCallEnd` on `stop: true`, when another call starts (the upstream
//!   sends calls one after another) or at the end. A call that received no
//!   input gets `{}`. The name is the one on the call's first fragment.
//!   Fragments for a call that already ended (the upstream sometimes repeats
//!   a call) are ignored: its end was already streamed, so a fuller repeat
//!   cannot be merged in.
//! - `finish` emits one `Usage` and the `Stop`. Exact `tokenUsage` wins;
//!   otherwise output tokens are estimated over the emitted text, thinking and
//!   tool arguments, and input tokens from `contextUsagePercentage` x the
//!   context window minus the output (the percentage covers the whole turn).
//!   Without either, input tokens are left unknown for the caller to estimate.
//! - The stop reason is `MaxTokens` when the answer was truncated (see
//!   [`crate::truncation`]), else `ToolUse` when there were tool calls, else
//!   `EndTurn`.

use std::borrow::Cow;

use wire::eventstream::Message;
use wire::primary::{
    EventView, ExceptionPayload, ReasoningContentView, TokenUsage, ToolInput, ToolUseView,
};

use crate::model::{ChatEvent, StopReason, StreamError, StreamErrorKind, Usage};
use crate::thinking::ThinkingSplitter;
use crate::tokens;
use crate::truncation::{self, Truncation};

/// The error kind of every upstream failure in a stream.
pub const ERROR_KIND: StreamErrorKind = StreamErrorKind::UpstreamApi;

/// First capacity of the output kept for the token estimate (most answers
/// fit in it).
const OUTPUT_START: usize = 1024;

/// How to read one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParserOptions {
    /// Split a leading `<thinking>` block out of the text (on when fake
    /// reasoning was requested).
    pub extract_thinking: bool,
    /// The model's context window in tokens, to turn `contextUsagePercentage`
    /// into an input-token estimate.
    pub context_window: Option<u32>,
    /// The model is of the Claude family: an output estimate is scaled as
    /// the prompt's is ([`tokens::CLAUDE_CORRECTION`]).
    pub claude_tokens: bool,
}

/// What a finished stream looked like, for the caller's bookkeeping
/// (truncation recovery, usage records, retries).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamSummary {
    /// Set when the answer was cut off.
    pub truncation: Option<Truncation>,
    /// A `meteringEvent`, `contextUsageEvent` or `metadataEvent` arrived.
    pub completion_signal: bool,
    /// The usage emitted (unknown fields `None`).
    pub usage: Usage,
    /// `usage` came from the upstream's exact `tokenUsage`.
    pub usage_exact: bool,
    /// The stop reason emitted; `None` when the stream ended in an error.
    pub stop_reason: Option<StopReason>,
    /// Number of tool calls.
    pub tool_calls: u32,
    /// Text or thinking was produced.
    pub has_text_output: bool,
    /// Sum of the `meteringEvent` credits.
    pub credits: Option<f64>,
    /// The last `contextUsagePercentage`.
    pub context_usage_percentage: Option<f64>,
    /// The error that ended the stream.
    pub error: Option<StreamError>,
}

#[derive(Debug)]
struct ToolCall {
    id: String,
    name: String,
    arguments: String,
    ended: bool,
}

/// Event-stream messages of one `primary` answer to [`ChatEvent`]s.
#[derive(Debug)]
pub struct StreamParser {
    opts: ParserOptions,
    splitter: Option<ThinkingSplitter>,
    tools: Vec<ToolCall>,
    /// Index into `tools` of the call still receiving fragments.
    open: Option<usize>,
    exact: Option<Usage>,
    context_pct: Option<f64>,
    credits: Option<f64>,
    completion_signal: bool,
    has_text_output: bool,
    /// Everything emitted that counts as output, for the token estimate
    /// (counted once at the end, and only if no exact figure arrived).
    output: String,
    error: Option<StreamError>,
    finished: bool,
}

impl StreamParser {
    pub fn new(opts: ParserOptions) -> Self {
        Self {
            opts,
            splitter: opts.extract_thinking.then(ThinkingSplitter::new),
            tools: Vec::new(),
            open: None,
            exact: None,
            context_pct: None,
            credits: None,
            completion_signal: false,
            has_text_output: false,
            output: String::new(),
            error: None,
            finished: false,
        }
    }

    /// Feed one message. After an error or `finish`, messages are ignored.
    pub fn push(&mut self, msg: &Message<'_>, out: &mut Vec<ChatEvent>) {
        if self.error.is_some() || self.finished {
            return;
        }
        let start = out.len();
        match *msg {
            Message::Event {
                event_type,
                payload,
            } => match EventView::parse(event_type, payload) {
                Ok(event) => self.on_event(event, out),
                Err(e) => self.fail(502, format!("malformed {event_type} payload: {e}"), out),
            },
            Message::Exception {
                exception_type,
                payload,
            } => {
                let (body, detail) = match serde_json::from_slice::<ExceptionPayload>(payload) {
                    Ok(body) => {
                        let detail = body.message.clone();
                        (body, detail)
                    }
                    // Not the documented JSON: keep what it says, briefly.
                    Err(_) => (ExceptionPayload::default(), raw_detail(payload)),
                };
                let detail = detail.unwrap_or_else(|| "no message".to_owned());
                let mut message = format!("{exception_type}: {detail}");
                if let Some(reason) = &body.reason {
                    message.push_str(" (reason: ");
                    message.push_str(reason);
                    message.push(')');
                }
                self.fail(exception_status(exception_type), message, out);
            }
            Message::Error { code, message } => {
                self.fail(exception_status(code), format!("{code}: {message}"), out);
            }
        }
        self.record(&out[start..]);
    }

    /// End of stream: flush held text, end open tool calls, emit `Usage` and
    /// `Stop` (nothing after an error), and report. A second call emits nothing.
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) -> StreamSummary {
        let mut summary = StreamSummary {
            completion_signal: self.completion_signal,
            credits: self.credits,
            context_usage_percentage: self.context_pct,
            tool_calls: u32::try_from(self.tools.len()).unwrap_or(u32::MAX),
            error: self.error.clone(),
            ..StreamSummary::default()
        };
        if self.error.is_some() || self.finished {
            summary.has_text_output = self.has_text_output;
            return summary;
        }
        self.finished = true;
        let start = out.len();
        if let Some(mut splitter) = self.splitter.take() {
            splitter.finish(out);
        }
        if let Some(open) = self.open.take() {
            self.end_tool(open, out);
        }
        self.record(&out[start..]);

        let truncation = truncation::detect(
            self.completion_signal,
            self.has_text_output,
            self.tools
                .iter()
                .map(|t| (t.id.as_str(), t.name.as_str(), t.arguments.as_str())),
        );
        let usage = self.usage();
        let reason = if truncation.is_some() {
            StopReason::MaxTokens
        } else if self.tools.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        };
        out.push(ChatEvent::Usage(usage));
        out.push(ChatEvent::Stop {
            reason: reason.clone(),
            stop_sequence: None,
        });
        summary.truncation = truncation;
        summary.usage = usage;
        summary.usage_exact = self.exact.is_some();
        summary.stop_reason = Some(reason);
        summary.has_text_output = self.has_text_output;
        summary
    }

    fn on_event(&mut self, event: EventView<'_>, out: &mut Vec<ChatEvent>) {
        match event {
            EventView::AssistantResponse(e) => self.text(e.content, out),
            EventView::ToolUse(e) => self.tool_fragment(e, out),
            EventView::ReasoningContent(e) => self.reasoning(e, out),
            EventView::Metering(m) => {
                self.completion_signal = true;
                self.credits = Some(self.credits.unwrap_or(0.0) + m.usage);
            }
            EventView::ContextUsage(c) => {
                self.completion_signal = true;
                self.context_pct = Some(c.context_usage_percentage);
            }
            EventView::Metadata(m) => {
                self.completion_signal = true;
                if let Some(u) = m.token_usage {
                    self.exact_usage(u);
                }
            }
            EventView::MessageMetadata(m) => {
                if let Some(u) = m.token_usage {
                    self.completion_signal = true;
                    self.exact_usage(u);
                }
            }
            EventView::InvalidState(s) => {
                let message = format!("invalid state ({}): {}", s.reason, s.message);
                self.fail(500, message, out);
            }
            EventView::Other => {}
        }
    }

    fn text(&mut self, text: Cow<'_, str>, out: &mut Vec<ChatEvent>) {
        if text.is_empty() {
            return;
        }
        match &mut self.splitter {
            Some(splitter) => splitter.push(text, out),
            None => out.push(ChatEvent::TextDelta(text.into_owned())),
        }
    }

    fn reasoning(&mut self, e: ReasoningContentView<'_>, out: &mut Vec<ChatEvent>) {
        // Native reasoning: the tag splitter would only get in the way now.
        if let Some(mut splitter) = self.splitter.take() {
            splitter.finish(out);
        }
        if let Some(text) = e.text.filter(|t| !t.is_empty()) {
            out.push(ChatEvent::ThinkingDelta(text.into_owned()));
        }
        if let Some(sig) = e.signature.filter(|s| !s.is_empty()) {
            out.push(ChatEvent::ThinkingSignature(sig.into_owned()));
        }
        if let Some(data) = e.redacted_content.filter(|d| !d.is_empty()) {
            out.push(ChatEvent::RedactedThinking(data.into_owned()));
        }
    }

    fn tool_fragment(&mut self, e: ToolUseView<'_>, out: &mut Vec<ChatEvent>) {
        let slot = if e.tool_use_id.is_empty() {
            // A fragment without an id continues the open call, if any.
            match self.open {
                Some(open) => open,
                None => return,
            }
        } else {
            match self.tools.iter().position(|t| t.id == e.tool_use_id) {
                Some(i) if self.tools[i].ended => return,
                Some(i) => i,
                None => {
                    // Text the tag splitter still holds came before this call:
                    // release it first. Reasoning ends where tool use begins.
                    if let Some(mut splitter) = self.splitter.take() {
                        splitter.finish(out);
                    }
                    if let Some(open) = self.open.take() {
                        self.end_tool(open, out);
                    }
                    let slot = self.tools.len();
                    out.push(ChatEvent::ToolCallStart {
                        index: index_of(slot),
                        id: e.tool_use_id.to_string(),
                        name: e.name.to_string(),
                    });
                    self.tools.push(ToolCall {
                        id: e.tool_use_id.into_owned(),
                        name: e.name.into_owned(),
                        arguments: String::new(),
                        ended: false,
                    });
                    self.open = Some(slot);
                    slot
                }
            }
        };
        let fragment = match e.input {
            None | Some(ToolInput::Json(serde_json::Value::Null)) => Cow::Borrowed(""),
            Some(ToolInput::Text(s)) => s,
            Some(ToolInput::Json(other)) => Cow::Owned(other.to_string()),
        };
        if !fragment.is_empty() {
            if let Some(call) = self.tools.get_mut(slot) {
                call.arguments.push_str(&fragment);
            }
            out.push(ChatEvent::ToolCallDelta {
                index: index_of(slot),
                arguments: fragment.into_owned(),
            });
        }
        if e.stop == Some(true) {
            self.end_tool(slot, out);
            if self.open == Some(slot) {
                self.open = None;
            }
        }
    }

    fn end_tool(&mut self, slot: usize, out: &mut Vec<ChatEvent>) {
        let Some(call) = self.tools.get_mut(slot) else {
            return;
        };
        if call.ended {
            return;
        }
        call.ended = true;
        if call.arguments.trim().is_empty() {
            call.arguments = "{}".to_owned();
            out.push(ChatEvent::ToolCallDelta {
                index: index_of(slot),
                arguments: call.arguments.clone(),
            });
        }
        out.push(ChatEvent::ToolCallEnd {
            index: index_of(slot),
        });
    }

    fn exact_usage(&mut self, u: TokenUsage) {
        let usage = Usage {
            input_tokens: u.uncached_input_tokens.map(saturate),
            output_tokens: u.output_tokens.map(saturate),
            cache_read_tokens: u.cache_read_input_tokens.map(saturate),
            cache_write_tokens: u.cache_write_input_tokens.map(saturate),
        };
        self.exact.get_or_insert_with(Usage::default).merge(&usage);
    }

    fn usage(&self) -> Usage {
        let exact_output = self.exact.and_then(|u| u.output_tokens);
        let mut usage = Usage {
            // Counting is the costliest step of a stream; skip it when the
            // upstream reported the figure.
            output_tokens: exact_output.or_else(|| {
                Some(tokens::estimate_output(
                    self.opts.claude_tokens,
                    &self.output,
                ))
            }),
            ..Usage::default()
        };
        if let (Some(pct), Some(window)) = (self.context_pct, self.opts.context_window) {
            let total = (pct.clamp(0.0, 100.0) / 100.0 * f64::from(window)).round();
            // `total` lies in 0..=u32::MAX by the clamp, so the cast is exact.
            let total = total as u32;
            // The share is rounded by the upstream (one decimal of a percent)
            // and the output is an estimate: for a short prompt and a long
            // answer the difference can be zero or less. Then the input is
            // left unknown, so the caller's own estimate of the prompt stands
            // (a non-empty prompt is never reported as 0 tokens).
            let output = usage.output_tokens.unwrap_or(0);
            usage.input_tokens = (total > output).then(|| total - output);
        }
        if let Some(exact) = &self.exact {
            usage.merge(exact);
        }
        usage
    }

    fn fail(&mut self, status: u16, message: String, out: &mut Vec<ChatEvent>) {
        // Whatever the splitter holds is real output; show it before the error.
        if let Some(mut splitter) = self.splitter.take() {
            splitter.finish(out);
        }
        let err = StreamError {
            status,
            kind: ERROR_KIND,
            message,
        };
        out.push(ChatEvent::Error(err.clone()));
        self.error = Some(err);
    }

    /// Note emitted output for the token estimate and truncation detection.
    fn record(&mut self, events: &[ChatEvent]) {
        for e in events {
            let text = match e {
                ChatEvent::TextDelta(t) | ChatEvent::ThinkingDelta(t) => {
                    self.has_text_output = true;
                    t
                }
                ChatEvent::RedactedThinking(_) => {
                    self.has_text_output = true;
                    continue;
                }
                ChatEvent::ToolCallDelta { arguments, .. } => arguments,
                _ => continue,
            };
            if self.output.capacity() == 0 {
                // Growing from nothing would reallocate at every doubling.
                self.output.reserve(OUTPUT_START.max(text.len()));
            }
            self.output.push_str(text);
        }
    }
}

/// The HTTP status for an upstream exception or error code (namespace and
/// `:`-suffix ignored): throttling 429, quota exhausted 402, validation 400,
/// access denied 403, not found 404, conflict 409, unavailable 503, else 500.
pub fn exception_status(exception_type: &str) -> u16 {
    let name = exception_type
        .rsplit_once('#')
        .map_or(exception_type, |(_, n)| n);
    let name = name.split(':').next().unwrap_or(name).to_ascii_lowercase();
    let table: [(&str, u16); 7] = [
        ("throttling", 429),
        ("servicequotaexceeded", 402),
        ("validation", 400),
        ("accessdenied", 403),
        ("resourcenotfound", 404),
        ("conflict", 409),
        ("serviceunavailable", 503),
    ];
    table
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map_or(500, |&(_, status)| status)
}

/// A non-JSON exception payload as text, cut to a few hundred characters.
fn raw_detail(payload: &[u8]) -> Option<String> {
    const MAX_CHARS: usize = 300;
    let text = String::from_utf8_lossy(payload);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX_CHARS) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    })
}

fn index_of(slot: usize) -> u32 {
    u32::try_from(slot).unwrap_or(u32::MAX)
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
