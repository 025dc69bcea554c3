//! What a chat answer looks like: the [`Scenario`] type, its text form (the
//! `sim:` directive grammar, parsed by [`Scenario::from_str`] and printed by
//! `Display`) and its defaults.
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

pub use crate::directive::ScenarioParseError;
use crate::directive::{boolean, duration, err, num, positive, Out};
use std::str::FromStr;
use std::time::Duration;

/// The body of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioKind {
    /// A short text answer that mentions the model id.
    Default { chunk: usize },
    /// Generated text of `len` characters, `chunk` characters per event.
    Text {
        len: usize,
        chunk: usize,
        unicode: bool,
    },
    /// The current user message content, verbatim.
    Echo { chunk: usize },
    /// `n` tool calls (parallel when n > 1), each input split into `fragments`.
    Tools {
        n: usize,
        fragments: usize,
        preamble: bool,
        name: Option<String>,
        duplicate: bool,
    },
    /// `<thinking>` text, then an answer, all in `assistantResponseEvent`s.
    Thinking {
        thinking_len: usize,
        len: usize,
        chunk: usize,
    },
    /// `reasoningContentEvent`s, then an answer.
    Reasoning {
        thinking_len: usize,
        len: usize,
        chunk: usize,
    },
    /// An HTTP error instead of a stream.
    Status {
        code: u16,
        retry_after: Option<u32>,
        reason: Option<String>,
        revoke: bool,
    },
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

const CHUNK: usize = 20;
const TEXT_LEN: usize = 200;
const THINKING_LEN: usize = 120;
const ANSWER_LEN: usize = 80;
const FRAGMENTS: usize = 3;
const STATUS_CODE: u16 = 500;
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

    /// The built-in answer that mentions the model id.
    pub fn default_answer() -> Self {
        Scenario::new(ScenarioKind::Default { chunk: CHUNK })
    }

    /// Generated text of `len` characters in events of `chunk` characters.
    pub fn text(len: usize, chunk: usize) -> Self {
        Scenario::new(ScenarioKind::Text {
            len,
            chunk,
            unicode: false,
        })
    }

    /// Echo the current user message.
    pub fn echo() -> Self {
        Scenario::new(ScenarioKind::Echo { chunk: CHUNK })
    }

    /// `n` tool calls with inputs in `fragments` pieces, after a short preamble.
    pub fn tools(n: usize, fragments: usize) -> Self {
        Scenario::new(ScenarioKind::Tools {
            n,
            fragments,
            preamble: true,
            name: None,
            duplicate: false,
        })
    }

    /// `<thinking>` text then an answer.
    pub fn thinking() -> Self {
        Scenario::new(ScenarioKind::Thinking {
            thinking_len: THINKING_LEN,
            len: ANSWER_LEN,
            chunk: CHUNK,
        })
    }

    /// Native `reasoningContentEvent`s then an answer.
    pub fn reasoning() -> Self {
        Scenario::new(ScenarioKind::Reasoning {
            thinking_len: THINKING_LEN,
            len: ANSWER_LEN,
            chunk: CHUNK,
        })
    }

    /// An HTTP error with the service's usual body for `code`.
    pub fn status(code: u16) -> Self {
        Scenario::new(ScenarioKind::Status {
            code,
            retry_after: None,
            reason: None,
            revoke: false,
        })
    }

    /// Active for the first `n` requests with this scenario's key only.
    pub fn with_times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Count `times` under this key.
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Inject a fault.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Wait this long before the first event.
    pub fn with_first_delay(mut self, d: Duration) -> Self {
        self.first_delay = d;
        self
    }

    /// Wait this long between events.
    pub fn with_interval(mut self, d: Duration) -> Self {
        self.interval = d;
        self
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

    /// The key `times` counts under.
    pub fn counter_key(&self) -> String {
        match &self.key {
            Some(k) => k.clone(),
            None => self.to_string(),
        }
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::default_answer()
    }
}

fn kind_named(name: &str) -> Result<ScenarioKind, ScenarioParseError> {
    Ok(match name {
        "default" => Scenario::default_answer().kind,
        "text" => Scenario::text(TEXT_LEN, CHUNK).kind,
        "echo" => Scenario::echo().kind,
        "tools" => Scenario::tools(1, FRAGMENTS).kind,
        "thinking" => Scenario::thinking().kind,
        "reasoning" => Scenario::reasoning().kind,
        "status" => Scenario::status(STATUS_CODE).kind,
        other => return err(format!("unknown scenario '{other}'")),
    })
}

/// Apply one kind-specific key; `Ok(false)` when the key is not one of the kind's.
fn set_kind_key(kind: &mut ScenarioKind, key: &str, v: &str) -> Result<bool, ScenarioParseError> {
    match (kind, key) {
        (ScenarioKind::Default { chunk }, "chunk") | (ScenarioKind::Echo { chunk }, "chunk") => {
            *chunk = positive(key, v)?
        }
        (ScenarioKind::Text { len, .. }, "len") => *len = num(key, v)?,
        (ScenarioKind::Text { chunk, .. }, "chunk") => *chunk = positive(key, v)?,
        (ScenarioKind::Text { unicode, .. }, "unicode") => *unicode = boolean(key, v)?,
        (ScenarioKind::Tools { n, .. }, "n") => *n = positive(key, v)?,
        (ScenarioKind::Tools { fragments, .. }, "fragments") => *fragments = positive(key, v)?,
        (ScenarioKind::Tools { preamble, .. }, "preamble") => *preamble = boolean(key, v)?,
        (ScenarioKind::Tools { name, .. }, "name") => *name = Some(v.to_owned()),
        (ScenarioKind::Tools { duplicate, .. }, "duplicate") => *duplicate = boolean(key, v)?,
        (
            ScenarioKind::Thinking { thinking_len, .. }
            | ScenarioKind::Reasoning { thinking_len, .. },
            "thinking_len",
        ) => *thinking_len = num(key, v)?,
        (ScenarioKind::Thinking { len, .. } | ScenarioKind::Reasoning { len, .. }, "len") => {
            *len = num(key, v)?
        }
        (ScenarioKind::Thinking { chunk, .. } | ScenarioKind::Reasoning { chunk, .. }, "chunk") => {
            *chunk = positive(key, v)?
        }
        (ScenarioKind::Status { code, .. }, "code") => {
            let c: u16 = num(key, v)?;
            if !(400..=599).contains(&c) {
                return err(format!("code={v}: must be 400..599"));
            }
            *code = c;
        }
        (ScenarioKind::Status { retry_after, .. }, "retry_after") => {
            *retry_after = Some(num(key, v)?)
        }
        (ScenarioKind::Status { reason, .. }, "reason") => *reason = Some(v.to_owned()),
        (ScenarioKind::Status { revoke, .. }, "revoke") => *revoke = boolean(key, v)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Fault keys are gathered first, since `exception=` may come before `exception_after=`.
#[derive(Default)]
struct FaultKeys {
    disconnect_after: Option<usize>,
    corrupt_at: Option<usize>,
    exception_after: Option<usize>,
    exception: Option<String>,
    error_after: Option<usize>,
    error_code: Option<String>,
}

impl FaultKeys {
    fn into_fault(self) -> Result<Option<Fault>, ScenarioParseError> {
        let mut faults = Vec::new();
        if let Some(after) = self.disconnect_after {
            faults.push(Fault::Disconnect { after });
        }
        if let Some(at) = self.corrupt_at {
            faults.push(Fault::CorruptCrc { at });
        }
        match (self.exception_after, self.exception) {
            (Some(after), t) => faults.push(Fault::Exception {
                after,
                exception_type: t.unwrap_or_else(|| DEFAULT_EXCEPTION.to_owned()),
            }),
            (None, Some(_)) => return err("exception= needs exception_after="),
            (None, None) => {}
        }
        match (self.error_after, self.error_code) {
            (Some(after), c) => faults.push(Fault::Error {
                after,
                code: c.unwrap_or_else(|| DEFAULT_ERROR_CODE.to_owned()),
            }),
            (None, Some(_)) => return err("error_code= needs error_after="),
            (None, None) => {}
        }
        if faults.len() > 1 {
            return err("at most one fault per scenario");
        }
        Ok(faults.pop())
    }
}

impl FromStr for Scenario {
    type Err = ScenarioParseError;

    /// Parse the text after `sim:` (see the module docs).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let mut tokens = spec.split_ascii_whitespace().peekable();
        let name = match tokens.peek() {
            Some(t) if !t.contains('=') => tokens.next().unwrap_or("default"),
            _ => {
                let named = spec
                    .split_ascii_whitespace()
                    .find_map(|t| t.strip_prefix("scenario="));
                named.unwrap_or("default")
            }
        };
        let mut s = Scenario::new(kind_named(name)?);
        let mut faults = FaultKeys::default();
        for token in tokens {
            let Some((key, v)) = token.split_once('=') else {
                return err(format!("'{token}' is not key=value"));
            };
            if v.is_empty() {
                return err(format!("{key}= has no value"));
            }
            match key {
                "scenario" if v == name => {}
                "scenario" => return err(format!("two scenario names: {name} and {v}")),
                "header_delay" => s.header_delay = duration(key, v)?,
                "delay" => s.first_delay = duration(key, v)?,
                "interval" => s.interval = duration(key, v)?,
                "truncate" => s.truncate = boolean(key, v)?,
                "metering" => s.metering = boolean(key, v)?,
                "context" => s.context_usage = boolean(key, v)?,
                "metadata" => s.metadata = boolean(key, v)?,
                "times" => s.times = Some(num(key, v)?),
                "key" => s.key = Some(v.to_owned()),
                "disconnect_after" => faults.disconnect_after = Some(num(key, v)?),
                "corrupt_at" => faults.corrupt_at = Some(num(key, v)?),
                "exception_after" => faults.exception_after = Some(num(key, v)?),
                "exception" => faults.exception = Some(v.to_owned()),
                "error_after" => faults.error_after = Some(num(key, v)?),
                "error_code" => faults.error_code = Some(v.to_owned()),
                _ => {
                    if !set_kind_key(&mut s.kind, key, v)? {
                        return err(format!("unknown key '{key}' for scenario {name}"));
                    }
                }
            }
        }
        s.fault = faults.into_fault()?;
        Ok(s)
    }
}

impl fmt::Display for Scenario {
    /// The canonical directive text (without `sim:`): only non-default values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut o = Out { f };
        match &self.kind {
            ScenarioKind::Default { chunk } => {
                write!(o.f, "default")?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            ScenarioKind::Text {
                len,
                chunk,
                unicode,
            } => {
                write!(o.f, "text")?;
                o.kv("len", *len, TEXT_LEN)?;
                o.kv("chunk", *chunk, CHUNK)?;
                o.kv("unicode", *unicode, false)?;
            }
            ScenarioKind::Echo { chunk } => {
                write!(o.f, "echo")?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            ScenarioKind::Tools {
                n,
                fragments,
                preamble,
                name,
                duplicate,
            } => {
                write!(o.f, "tools")?;
                o.kv("n", *n, 1)?;
                o.kv("fragments", *fragments, FRAGMENTS)?;
                o.kv("preamble", *preamble, true)?;
                if let Some(name) = name {
                    write!(o.f, " name={name}")?;
                }
                o.kv("duplicate", *duplicate, false)?;
            }
            ScenarioKind::Thinking {
                thinking_len,
                len,
                chunk,
            }
            | ScenarioKind::Reasoning {
                thinking_len,
                len,
                chunk,
            } => {
                let name = if matches!(self.kind, ScenarioKind::Thinking { .. }) {
                    "thinking"
                } else {
                    "reasoning"
                };
                write!(o.f, "{name}")?;
                o.kv("thinking_len", *thinking_len, THINKING_LEN)?;
                o.kv("len", *len, ANSWER_LEN)?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            ScenarioKind::Status {
                code,
                retry_after,
                reason,
                revoke,
            } => {
                write!(o.f, "status code={code}")?;
                if let Some(r) = retry_after {
                    write!(o.f, " retry_after={r}")?;
                }
                if let Some(r) = reason {
                    write!(o.f, " reason={r}")?;
                }
                o.kv("revoke", *revoke, false)?;
            }
        }
        o.ms("header_delay", self.header_delay)?;
        o.ms("delay", self.first_delay)?;
        o.ms("interval", self.interval)?;
        o.kv("truncate", self.truncate, false)?;
        o.kv("metering", self.metering, true)?;
        o.kv("context", self.context_usage, true)?;
        o.kv("metadata", self.metadata, false)?;
        match &self.fault {
            None => {}
            Some(Fault::Disconnect { after }) => write!(o.f, " disconnect_after={after}")?,
            Some(Fault::CorruptCrc { at }) => write!(o.f, " corrupt_at={at}")?,
            Some(Fault::Exception {
                after,
                exception_type,
            }) => {
                write!(o.f, " exception_after={after}")?;
                o.kv("exception", exception_type.as_str(), DEFAULT_EXCEPTION)?;
            }
            Some(Fault::Error { after, code }) => {
                write!(o.f, " error_after={after}")?;
                o.kv("error_code", code.as_str(), DEFAULT_ERROR_CODE)?;
            }
        }
        if let Some(t) = self.times {
            write!(o.f, " times={t}")?;
        }
        if let Some(k) = &self.key {
            write!(o.f, " key={k}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
