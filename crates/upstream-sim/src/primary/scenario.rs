//! What a chat answer looks like: the [`Scenario`] type, its text form (the
//! `sim:` directive grammar, parsed by [`Scenario::from_str`] and printed by
//! `Display`) and its defaults. The grammar, the keys every scenario has and
//! the answer kinds both chat scenario types share live in
//! [`crate::directive`]; this module adds the primary's own keys and faults.
//!
//! # Grammar
//!
//! ```text
//! directive := "sim:" WS spec
//! spec      := [NAME | "scenario=" NAME] (WS KEY "=" VALUE)*
//! NAME      := default | text | echo | tools | thinking | reasoning | status
//! ```
//!
//! Values are single words (no spaces). Numbers are decimal; booleans accept
//! `1/0/true/false/yes/no`; durations are milliseconds (`500`, `500ms`) or
//! seconds (`2s`). An unknown name or key, a key that does not apply to the
//! name, or a bad value is an error.
//!
//! Keys of each kind (defaults in brackets):
//!
//! | name | keys |
//! |---|---|
//! | `default` | `chunk` [20]: the short answer that mentions the model id |
//! | `text` | `len` [200] characters, `chunk` [20] characters per event, `unicode` [false]: mix in multi-byte characters |
//! | `echo` | `chunk` [20]: answers with the current user message content, verbatim |
//! | `tools` | `n` [1] tool calls, `fragments` [3] input fragments each, `preamble` [true] text before, `name` [tools of the request, else `sim_tool_<i>`], `duplicate` [false] repeat each call's id once with empty input (a real quirk) |
//! | `thinking` | `thinking_len` [120], `len` [80], `chunk` [20]: `<thinking>…</thinking>` text then the answer |
//! | `reasoning` | `thinking_len` [120], `len` [80], `chunk` [20]: `reasoningContentEvent`s then the answer |
//! | `status` | `code` [500], `retry_after` seconds [none], `reason` [per code], `revoke` [false]: also revoke every access token |
//!
//! Keys of every kind:
//!
//! | key | meaning |
//! |---|---|
//! | `header_delay` | wait before the HTTP status line |
//! | `delay` | wait before the first event (headers already sent) |
//! | `interval` | wait between events (each event is then its own write) |
//! | `truncate` | cut the stream: no metering/context events, the last tool call's input cut in half and never stopped |
//! | `metering`, `context` [true] / `metadata` [false] | send `meteringEvent`, `contextUsageEvent`, `metadataEvent` (tokenUsage) |
//! | `disconnect_after=K` | abort the connection after K events |
//! | `corrupt_at=K` | event K (from 0) has a bad message CRC; later events are still sent |
//! | `exception_after=K`, `exception=TYPE` [internalServerException] | an exception frame after K events, then the end |
//! | `error_after=K`, `error_code=CODE` [InternalError] | an error frame after K events, then the end |
//! | `times=N` | active for the first N requests with this scenario key only |
//! | `key=S` | the key `times` counts under [the directive's canonical text] |

use std::fmt;
use std::time::Duration;

pub use crate::directive::ScenarioParseError;
use crate::directive::{chat_kinds, one_fault, scenario_common, Directive, FaultKeys, Key, Out};

chat_kinds! {
    /// The body of an answer (the `tools` flag and the `status` keys are the
    /// primary's own; `reasoning` sends `reasoningContentEvent`s where
    /// `thinking` sends `<thinking>` text).
    pub enum ScenarioKind for Scenario {
        tools: {
            /// Repeat each call's id once with empty input (a real quirk).
            duplicate
        },
        status: {
            /// The body's `reason`; default per code.
            reason: Option<String> = None, word,
            /// Also revoke every access token.
            revoke: bool = false, off,
        },
        more: {
            /// `reasoningContentEvent`s, then an answer.
            Reasoning "reasoning" fn reasoning,
        },
        aliases: {},
    }
}

/// A fault injected into a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Abort the connection after `after` events.
    Disconnect { after: usize },
    /// Event `at` (0-based) carries a bad message CRC.
    CorruptCrc { at: usize },
    /// An exception frame after `after` events, then the end of the stream.
    Exception {
        after: usize,
        exception_type: String,
    },
    /// An error frame after `after` events, then the end of the stream.
    Error { after: usize, code: String },
}

/// One complete description of an answer. Build with the constructors and the
/// `with_*` methods, or parse the directive text with `str::parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    pub kind: ScenarioKind,
    pub header_delay: Duration,
    pub first_delay: Duration,
    pub interval: Duration,
    pub truncate: bool,
    pub metering: bool,
    pub context_usage: bool,
    pub metadata: bool,
    pub fault: Option<Fault>,
    /// Active for the first `times` requests with this scenario's key.
    pub times: Option<u32>,
    /// The key `times` counts under; default: the canonical text.
    pub key: Option<String>,
}

/// Default `:exception-type` of the exception fault.
pub const DEFAULT_EXCEPTION: &str = "internalServerException";
/// Default `:error-code` of the error fault.
pub const DEFAULT_ERROR_CODE: &str = "InternalError";

impl Scenario {
    /// A scenario of this kind with every option at its default.
    pub fn new(kind: ScenarioKind) -> Self {
        Scenario {
            kind,
            header_delay: Duration::ZERO,
            first_delay: Duration::ZERO,
            interval: Duration::ZERO,
            truncate: false,
            metering: true,
            context_usage: true,
            metadata: false,
            fault: None,
            times: None,
            key: None,
        }
    }

    /// Truncate the stream (see the module docs).
    pub fn truncated(mut self) -> Self {
        self.truncate = true;
        self
    }

    /// Also send a `metadataEvent` with `tokenUsage`.
    pub fn with_metadata(mut self) -> Self {
        self.metadata = true;
        self
    }
}

scenario_common!(Scenario, Fault);

impl Directive for Scenario {
    const FAULT_KEYS: &'static [&'static str] = &[
        "disconnect_after",
        "corrupt_at",
        "exception_after",
        "exception",
        "error_after",
        "error_code",
    ];

    fn own_keys(&mut self) -> Vec<Key<'_>> {
        vec![
            Key::flag("truncate", &mut self.truncate, false),
            Key::flag("metering", &mut self.metering, true),
            Key::flag("context", &mut self.context_usage, true),
            Key::flag("metadata", &mut self.metadata, false),
        ]
    }

    fn set_fault(&mut self, faults: &FaultKeys<'_>) -> Result<(), ScenarioParseError> {
        faults.orphan("exception", "exception_after")?;
        faults.orphan("error_code", "error_after")?;
        let mut found = Vec::new();
        if let Some(after) = faults.count("disconnect_after")? {
            found.push(Fault::Disconnect { after });
        }
        if let Some(at) = faults.count("corrupt_at")? {
            found.push(Fault::CorruptCrc { at });
        }
        if let Some(after) = faults.count("exception_after")? {
            let t = faults.word("exception").unwrap_or(DEFAULT_EXCEPTION);
            found.push(Fault::Exception {
                after,
                exception_type: t.to_owned(),
            });
        }
        if let Some(after) = faults.count("error_after")? {
            let code = faults.word("error_code").unwrap_or(DEFAULT_ERROR_CODE);
            found.push(Fault::Error {
                after,
                code: code.to_owned(),
            });
        }
        self.fault = one_fault(found)?;
        Ok(())
    }

    fn write_fault(&self, o: &mut Out<'_, '_>) -> fmt::Result {
        match &self.fault {
            None => Ok(()),
            Some(Fault::Disconnect { after }) => o.some("disconnect_after", Some(after)),
            Some(Fault::CorruptCrc { at }) => o.some("corrupt_at", Some(at)),
            Some(Fault::Exception {
                after,
                exception_type,
            }) => {
                o.some("exception_after", Some(after))?;
                o.kv("exception", exception_type.as_str(), DEFAULT_EXCEPTION)
            }
            Some(Fault::Error { after, code }) => {
                o.some("error_after", Some(after))?;
                o.kv("error_code", code.as_str(), DEFAULT_ERROR_CODE)
            }
        }
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
