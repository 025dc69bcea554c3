//! The side view of a natively relayed stream: it reads each provider event
//! only as far as usage accounting and error detection need, and says whether
//! the stream ended properly. The bytes themselves are forwarded untouched.
//!
//! - Messages format: `message_start` and `message_delta` carry usage; a stop
//!   reason or `message_stop` completes the answer; `error` is an error; every
//!   other event (deltas, `ping`, unknown ones) is not parsed at all.
//! - Chat-completions format: each chunk is read for `choices[].finish_reason`,
//!   whether its delta is empty (values borrowed raw, not decoded), `usage`
//!   and `error` only; everything else is skipped by serde. `[DONE]`
//!   completes it. The usage chunk (`choices: []` with `usage`) is marked for
//!   dropping when the client did not ask for usage.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use translate::{StreamError, Usage};
use wire::sse::SseEvent;

/// What one event means to the relay.
#[derive(Debug, Default, PartialEq)]
pub struct Seen {
    /// Leave this event out of the client's stream.
    pub drop: bool,
    /// The provider reported an error (the event itself is still forwarded).
    pub error: Option<StreamError>,
    /// The event carries content or ends the answer (not `message_start`,
    /// `content_block_start` or `ping`).
    pub substantive: bool,
}

/// Side view of one stream.
#[derive(Debug)]
pub enum Watch {
    Anthropic(AnthropicWatch),
    OpenAi(OpenAiWatch),
}

#[derive(Debug, Default)]
pub struct AnthropicWatch {
    usage: Usage,
    stopped: bool,
}

#[derive(Debug, Default)]
pub struct OpenAiWatch {
    usage: Usage,
    strip_usage: bool,
    finished: bool,
    done: bool,
}

/// How a stream ended, as far as the client must be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Properly ended.
    Complete,
    /// The answer finished but `[DONE]` never came: the relay adds it.
    MissingDone,
    /// Cut off: the relay adds the format's error event.
    Cut,
}

impl Watch {
    pub fn anthropic() -> Watch {
        Watch::Anthropic(AnthropicWatch::default())
    }

    /// `strip_usage`: the client asked for no usage chunk.
    pub fn openai(strip_usage: bool) -> Watch {
        Watch::OpenAi(OpenAiWatch {
            strip_usage,
            ..OpenAiWatch::default()
        })
    }

    pub fn observe(&mut self, ev: &SseEvent) -> Seen {
        match self {
            Watch::Anthropic(w) => w.observe(ev),
            Watch::OpenAi(w) => w.observe(ev),
        }
    }

    pub fn ending(&self) -> Ending {
        match self {
            Watch::Anthropic(w) if w.stopped => Ending::Complete,
            Watch::OpenAi(w) if w.done => Ending::Complete,
            Watch::OpenAi(w) if w.finished => Ending::MissingDone,
            _ => Ending::Cut,
        }
    }

    pub fn usage(&self) -> Usage {
        match self {
            Watch::Anthropic(w) => w.usage,
            Watch::OpenAi(w) => w.usage,
        }
    }
}

#[derive(Deserialize)]
struct StartEvent {
    message: StartMessage,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<wire::anthropic::StreamUsage>,
}

#[derive(Deserialize)]
struct DeltaEvent {
    #[serde(default)]
    delta: Option<DeltaBody>,
    #[serde(default)]
    usage: Option<wire::anthropic::StreamUsage>,
}

#[derive(Deserialize)]
struct DeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    error: wire::anthropic::ErrorDetail,
}

impl AnthropicWatch {
    fn observe(&mut self, ev: &SseEvent) -> Seen {
        let mut seen = Seen::default();
        match ev.event.as_deref() {
            Some("message_start") => {
                if let Ok(start) = serde_json::from_str::<StartEvent>(&ev.data) {
                    if let Some(u) = start.message.usage {
                        self.usage.merge(&usage_of(&u));
                    }
                }
            }
            // Openings only: the first delta tells whether the answer really started.
            Some("ping" | "content_block_start") => {}
            Some("message_delta") => {
                seen.substantive = true;
                if let Ok(delta) = serde_json::from_str::<DeltaEvent>(&ev.data) {
                    if let Some(u) = delta.usage {
                        self.usage.merge(&usage_of(&u));
                    }
                    if delta.delta.and_then(|d| d.stop_reason).is_some() {
                        self.stopped = true;
                    }
                }
            }
            Some("message_stop") => {
                seen.substantive = true;
                self.stopped = true;
            }
            Some("error") => {
                seen.substantive = true;
                let err = match serde_json::from_str::<ErrorEvent>(&ev.data) {
                    Ok(e) => translate::anthropic::provider_error(&e.error),
                    Err(_) => StreamError {
                        status: 502,
                        kind: translate::StreamErrorKind::UpstreamApi,
                        message: ev.data.clone(),
                    },
                };
                seen.error = Some(err);
            }
            _ => seen.substantive = true,
        }
        seen
    }
}

fn usage_of(u: &wire::anthropic::StreamUsage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_input_tokens,
        cache_write_tokens: u.cache_creation_input_tokens,
    }
}

/// The parts of a chunk the relay looks at; delta values are borrowed raw
/// (only whether they are empty matters).
#[derive(Deserialize)]
struct LightChunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<LightChoice<'a>>>,
    #[serde(default)]
    usage: Option<wire::openai::CompletionUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct LightChoice<'a> {
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default, borrow)]
    delta: Option<LightDelta<'a>>,
}

#[derive(Deserialize)]
struct LightDelta<'a> {
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    reasoning_content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    reasoning: Option<&'a RawValue>,
    #[serde(default, borrow)]
    refusal: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tool_calls: Option<&'a RawValue>,
}

impl LightDelta<'_> {
    /// Any content at all (the role-only opening chunk has none).
    fn has_content(&self) -> bool {
        let filled = |v: &Option<&RawValue>| {
            v.is_some_and(|raw| !matches!(raw.get().trim(), "" | "null" | "\"\"" | "[]"))
        };
        filled(&self.content)
            || filled(&self.reasoning_content)
            || filled(&self.reasoning)
            || filled(&self.refusal)
            || filled(&self.tool_calls)
    }
}

impl OpenAiWatch {
    fn observe(&mut self, ev: &SseEvent) -> Seen {
        let mut seen = Seen {
            substantive: true,
            ..Seen::default()
        };
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return seen;
        }
        if data.is_empty() {
            seen.substantive = false;
            return seen;
        }
        if ev.event.as_deref() == Some("error") {
            let value = serde_json::from_str::<Value>(data)
                .unwrap_or_else(|_| Value::String(data.to_owned()));
            let inner = value.get("error").cloned().unwrap_or(value);
            seen.error = Some(openai_error(&inner));
            return seen;
        }
        let Ok(chunk) = serde_json::from_str::<LightChunk>(data) else {
            // Not ours to judge: forwarded as it is.
            return seen;
        };
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            seen.error = Some(openai_error(&err));
            return seen;
        }
        let choices = chunk.choices.unwrap_or_default();
        let finish = choices
            .iter()
            .any(|c| c.finish_reason.as_deref().is_some_and(|r| !r.is_empty()));
        if finish {
            self.finished = true;
        }
        // A chunk with only the role (or only usage) has not started the answer.
        seen.substantive = finish
            || choices
                .iter()
                .any(|c| c.delta.as_ref().is_some_and(LightDelta::has_content));
        if let Some(u) = &chunk.usage {
            let cached = u.prompt_tokens_details.and_then(|d| d.cached_tokens);
            self.usage.merge(&Usage {
                input_tokens: Some(u.prompt_tokens.saturating_sub(cached.unwrap_or(0))),
                output_tokens: Some(u.completion_tokens),
                cache_read_tokens: cached,
                cache_write_tokens: None,
            });
            seen.drop = self.strip_usage && choices.is_empty();
        }
        seen
    }
}

/// A chat-completions error object as a stream error: the status from a
/// numeric `code`, else from the words of `type` / `code`, else 500.
pub fn openai_error(err: &Value) -> StreamError {
    let message = match err {
        Value::String(s) => s.clone(),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| other.to_string()),
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
    let status = numeric.unwrap_or(
        if kind.contains("rate_limit")
            || code_text.contains("rate_limit")
            || code_text == "insufficient_quota"
        {
            429
        } else if kind.contains("overloaded") {
            529
        } else {
            500
        },
    );
    StreamError {
        status,
        kind: translate::StreamErrorKind::UpstreamApi,
        message: if message.is_empty() {
            "provider reported an error".to_owned()
        } else {
            message
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            ..SseEvent::default()
        }
    }

    #[test]
    fn messages_format_usage_stop_and_errors() {
        let mut w = Watch::anthropic();
        let s = w.observe(&ev(
            Some("message_start"),
            r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,"cache_read_input_tokens":3,"output_tokens":1}}}"#,
        ));
        assert!(!s.substantive);
        assert!(
            !w.observe(&ev(Some("ping"), r#"{"type":"ping"}"#))
                .substantive
        );
        assert_eq!(w.ending(), Ending::Cut);
        assert!(
            w.observe(&ev(Some("vendor_extra"), r#"{"type":"vendor_extra"}"#))
                .substantive
        );
        w.observe(&ev(
            Some("message_delta"),
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
        ));
        assert_eq!(w.ending(), Ending::Complete);
        assert_eq!(
            w.usage(),
            Usage {
                input_tokens: Some(12),
                output_tokens: Some(7),
                cache_read_tokens: Some(3),
                cache_write_tokens: None
            }
        );
        let s = w.observe(&ev(
            Some("error"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ));
        let err = s.error.unwrap();
        assert_eq!((err.status, err.message.as_str()), (529, "Overloaded"));
    }

    #[test]
    fn chat_completions_usage_chunk_is_dropped_only_when_unwanted() {
        let usage_chunk = r#"{"id":"c","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":6}}}"#;
        let mut keep = Watch::openai(false);
        let mut strip = Watch::openai(true);
        let role = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
        assert!(
            !keep.observe(&ev(None, role)).substantive,
            "a role-only chunk starts nothing"
        );
        for w in [&mut keep, &mut strip] {
            w.observe(&ev(
                None,
                r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#,
            ));
            assert_eq!(w.ending(), Ending::Cut);
            w.observe(&ev(
                None,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            ));
            assert_eq!(w.ending(), Ending::MissingDone);
        }
        assert!(!keep.observe(&ev(None, usage_chunk)).drop);
        assert!(strip.observe(&ev(None, usage_chunk)).drop);
        strip.observe(&ev(None, "[DONE]"));
        assert_eq!(strip.ending(), Ending::Complete);
        assert_eq!(strip.usage().input_tokens, Some(4));
        assert_eq!(strip.usage().cache_read_tokens, Some(6));
    }

    #[test]
    fn chat_completions_errors_keep_their_status() {
        let mut w = Watch::openai(false);
        let s = w.observe(&ev(
            None,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        ));
        assert_eq!(s.error.unwrap().status, 429);
        let s = w.observe(&ev(Some("error"), r#"{"message":"boom","code":503}"#));
        assert_eq!(s.error.unwrap().status, 503);
    }
}
