//! The chat-completions format's half of the native-stream watch
//! ([`crate::watch`]): each chunk is read for `choices[].finish_reason`,
//! whether its delta is empty (values borrowed raw, not decoded), `usage`
//! and `error` only; everything else is skipped by serde. Errors are
//! classified by [`super::provider_error`], as the stream parser does.
//! `[DONE]` completes the stream. The usage chunk (`choices: []` with
//! `usage`) is marked for dropping when the client did not ask for usage.
//!
//! Once the answer has started, most chunks are plain content: a byte scan
//! ([`plain_content`]) recognises those without parsing them, and only the
//! rest (a finish reason, usage, an error, anything unusual) is parsed.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use wire::sse::SseEvent;

use super::parser::error_object;
use super::{provider_error, usage_from_wire};
use crate::model::Usage;
use crate::watch::{Ending, Seen};

/// Side view of one chat-completions stream.
#[derive(Debug, Default, Clone)]
pub struct StreamWatch {
    usage: Usage,
    strip_usage: bool,
    finished: bool,
    done: bool,
    /// A substantive chunk was seen: later chunks only matter for their
    /// finish reason, usage and errors.
    started: bool,
}

/// The parts of a chunk the watch looks at; delta values are borrowed raw
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

impl StreamWatch {
    /// `strip_usage`: the client asked for no usage chunk.
    pub fn new(strip_usage: bool) -> Self {
        StreamWatch {
            strip_usage,
            ..StreamWatch::default()
        }
    }

    /// Reads one event of the stream.
    pub fn observe(&mut self, ev: &SseEvent) -> Seen {
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
            seen.error = Some(provider_error(&error_object(data)));
            return seen;
        }
        if self.started && plain_content(data) {
            return seen;
        }
        let Ok(chunk) = serde_json::from_str::<LightChunk>(data) else {
            // Not ours to judge: forwarded as it is.
            return seen;
        };
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            seen.error = Some(provider_error(&err));
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
            self.usage.merge(&usage_from_wire(u));
            seen.drop = self.strip_usage && choices.is_empty();
        }
        self.started |= seen.substantive;
        seen
    }

    /// Complete after `[DONE]`; finished without it after a `finish_reason`;
    /// else cut.
    pub fn ending(&self) -> Ending {
        if self.done {
            Ending::Complete
        } else if self.finished {
            Ending::MissingDone
        } else {
            Ending::Cut
        }
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }
}

/// Whether a chunk surely holds nothing the watch reads: every `"usage"`,
/// `"error"` and `"finish_reason"` in it is followed by `: null` (a stream
/// that asked for usage has `"usage":null` in every chunk). A string inside
/// a JSON value cannot hold these quoted words unescaped, so a chunk that
/// passes has no such member with a value; a false alarm (a value that is
/// exactly `"usage"`, say) only costs the full parse. A key spelled with
/// `\u` escapes would slip by; no provider writes keys so.
fn plain_content(data: &str) -> bool {
    use std::sync::LazyLock;

    use memchr::memmem::Finder;
    static KEYS: LazyLock<[Finder<'static>; 3]> = LazyLock::new(|| {
        [
            Finder::new(b"\"usage\""),
            Finder::new(b"\"error\""),
            Finder::new(b"\"finish_reason\""),
        ]
    });

    KEYS.iter().all(|key| {
        // `find` in a loop: `find_iter` would copy the searcher each time.
        let mut rest = data.as_bytes();
        while let Some(at) = key.find(rest) {
            rest = rest.get(at + key.needle().len()..).unwrap_or_default();
            let null_value = rest
                .trim_ascii_start()
                .strip_prefix(b":")
                .is_some_and(|value| value.trim_ascii_start().starts_with(b"null"));
            if !null_value {
                return false;
            }
        }
        true
    })
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
