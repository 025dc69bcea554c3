//! What a vendor answer looks like: the [`VendorScenario`] type shared by the
//! four SSE vendors (messages, completions, custom, assistant), its text form
//! (the `sim:` directive grammar, parsed by `str::parse` and printed by
//! `Display`) and its defaults.
//!
//! # Grammar
//!
//! The same grammar as the primary simulator's directives (one parser,
//! [`crate::directive`]); this module adds the vendors' own keys and faults:
//!
//! ```text
//! directive := "sim:" WS spec
//! spec      := [NAME | "scenario=" NAME] (WS KEY "=" VALUE)*
//! NAME      := default | text | echo | tools | thinking | reasoning | status
//! ```
//!
//! `reasoning` is another name for `thinking` (so a directive written for the
//! primary simulator means the same here). Values are single words; numbers
//! are decimal; booleans accept `1/0/true/false/yes/no/on/off`; durations are
//! milliseconds (`500`, `500ms`) or seconds (`2s`). An unknown name or key, a
//! key of another kind, or a bad value is an error (answered 400).
//!
//! | name | keys (defaults in brackets) |
//! |---|---|
//! | `default` | `chunk` [20]: a short answer that mentions the model |
//! | `text` | `len` [200] characters, `chunk` [20] characters per delta, `unicode` [false] |
//! | `echo` | `chunk` [20]: the text of the last user message, verbatim |
//! | `tools` | `n` [1] calls, `fragments` [3] argument pieces each, `preamble` [true] text first, `name` [the request's tools in turn, else `sim_tool_<i>`], `interleave` [false] (OpenAI format: fragments of parallel calls alternate) |
//! | `thinking` | `thinking_len` [120], `len` [80], `chunk` [20]: a thinking block with a signature (messages format) or `reasoning_content` deltas (OpenAI format), then text |
//! | `status` | `code` [500], `retry_after` seconds [none], `error_type` [the vendor's type for the code] |
//!
//! Keys of every kind:
//!
//! | key | meaning |
//! |---|---|
//! | `header_delay` | wait before the status line |
//! | `delay` | wait before the first body byte (headers already sent): a slow first byte |
//! | `interval` | wait between stream events (each event is then its own write) |
//! | `extra` [false] | add something unknown: an `event: vendor_extra` event (messages format) or a `vendor_extra` field (OpenAI format) |
//! | `finish` [natural] | `length`: end as cut by the token limit (`max_tokens` / `length`) |
//! | `disconnect_after=K` | cut the connection after K stream events |
//! | `error_after=K`, `error=TYPE` | an in-stream error event after K events, then the end (non-streaming: the HTTP error of that type) |
//! | `times=N` | active for the first N requests with this key (per vendor) |
//! | `key=S` | the key `times` counts under [the canonical text] |

use std::fmt;
use std::time::Duration;

use crate::directive::{
    chat_kinds, err, one_fault, scenario_common, Directive, FaultKeys, Key, Out,
};

/// Why a directive could not be parsed (the same error as the primary's).
pub type VendorScenarioParseError = crate::directive::ScenarioParseError;

chat_kinds! {
    /// The body of a vendor answer (thinking comes with a signature in the
    /// messages format, as `reasoning_content` deltas in the OpenAI format).
    pub enum VendorKind for VendorScenario {
        tools: {
            /// OpenAI format: the fragments of parallel calls alternate.
            interleave
        },
        status: {
            /// The error type of the body; default: the vendor's type for the code.
            error_type: Option<String> = None, word,
        },
        more: {},
        aliases: { "reasoning" => "thinking" },
    }
}

/// A fault injected into an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VendorFault {
    /// Cut the connection after `after` stream events.
    Disconnect { after: usize },
    /// An error event after `after` stream events, then the end of the stream.
    /// `error_type` defaults to the vendor's overload type.
    ErrorEvent {
        after: usize,
        error_type: Option<String>,
    },
}

/// How an answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finish {
    /// `end_turn` / `stop`, or the tool-use reason when the answer calls tools.
    #[default]
    Natural,
    /// Cut by the output limit: `max_tokens` / `length`.
    Length,
}

/// One complete description of a vendor answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorScenario {
    pub kind: VendorKind,
    pub header_delay: Duration,
    pub first_delay: Duration,
    pub interval: Duration,
    pub extra: bool,
    pub finish: Finish,
    pub fault: Option<VendorFault>,
    /// Active for the first `times` requests with this scenario's key.
    pub times: Option<u32>,
    /// The key `times` counts under; default: the canonical text.
    pub key: Option<String>,
}

impl VendorScenario {
    /// A scenario of this kind with every option at its default.
    pub fn new(kind: VendorKind) -> Self {
        VendorScenario {
            kind,
            header_delay: Duration::ZERO,
            first_delay: Duration::ZERO,
            interval: Duration::ZERO,
            extra: false,
            finish: Finish::Natural,
            fault: None,
            times: None,
            key: None,
        }
    }

    /// 429 with `retry-after: secs`.
    pub fn rate_limited(retry_after: u32) -> Self {
        VendorScenario::new(VendorKind::Status {
            code: 429,
            retry_after: Some(retry_after),
            error_type: None,
        })
    }

    /// Add the unknown event / field.
    pub fn with_extra(mut self) -> Self {
        self.extra = true;
        self
    }

    /// End as cut by the output limit.
    pub fn with_finish(mut self, finish: Finish) -> Self {
        self.finish = finish;
        self
    }
}

scenario_common!(VendorScenario, VendorFault);

impl Directive for VendorScenario {
    const FAULT_KEYS: &'static [&'static str] = &["disconnect_after", "error_after", "error"];

    fn own_keys(&mut self) -> Vec<Key<'_>> {
        vec![Key::flag("extra", &mut self.extra, false)]
    }

    /// `finish=natural|length`, printed only when `length`.
    fn set_other(&mut self, key: &str, v: &str) -> Result<bool, VendorScenarioParseError> {
        if key != "finish" {
            return Ok(false);
        }
        self.finish = match v {
            "natural" => Finish::Natural,
            "length" => Finish::Length,
            _ => return err(format!("finish={v}: natural or length")),
        };
        Ok(true)
    }

    fn write_other(&self, o: &mut Out<'_, '_>) -> fmt::Result {
        let length = (self.finish == Finish::Length).then_some("length");
        o.some("finish", length)
    }

    fn set_fault(&mut self, faults: &FaultKeys<'_>) -> Result<(), VendorScenarioParseError> {
        faults.orphan("error", "error_after")?;
        let mut found = Vec::new();
        if let Some(after) = faults.count("disconnect_after")? {
            found.push(VendorFault::Disconnect { after });
        }
        if let Some(after) = faults.count("error_after")? {
            let error_type = faults.word("error").map(str::to_owned);
            found.push(VendorFault::ErrorEvent { after, error_type });
        }
        self.fault = one_fault(found)?;
        Ok(())
    }

    fn write_fault(&self, o: &mut Out<'_, '_>) -> fmt::Result {
        match &self.fault {
            None => Ok(()),
            Some(VendorFault::Disconnect { after }) => o.some("disconnect_after", Some(after)),
            Some(VendorFault::ErrorEvent { after, error_type }) => {
                o.some("error_after", Some(after))?;
                o.some("error", error_type.as_deref())
            }
        }
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
