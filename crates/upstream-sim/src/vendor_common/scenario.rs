//! What a vendor answer looks like: the [`VendorScenario`] type shared by the
//! four SSE vendors (messages, completions, custom, assistant), its text form
//! (the `sim:` directive grammar, parsed by `str::parse` and printed by
//! `Display`) and its defaults.
//!
//! # Grammar
//!
//! The same shape as the primary simulator's directives:
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

use crate::directive::{boolean, duration, err, num, positive, Out};

/// Why a directive could not be parsed (the same error as the primary's).
pub type VendorScenarioParseError = crate::directive::ScenarioParseError;
use std::str::FromStr;
use std::time::Duration;

/// The body of a vendor answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VendorKind {
    /// A short text that mentions the vendor and the model.
    Default { chunk: usize },
    /// Generated text of `len` characters, `chunk` characters per delta.
    Text {
        len: usize,
        chunk: usize,
        unicode: bool,
    },
    /// The last user message's text, verbatim.
    Echo { chunk: usize },
    /// `n` tool calls, each argument text split into `fragments` pieces.
    Tools {
        n: usize,
        fragments: usize,
        preamble: bool,
        name: Option<String>,
        interleave: bool,
    },
    /// Thinking (with a signature in the messages format), then text.
    Thinking {
        thinking_len: usize,
        len: usize,
        chunk: usize,
    },
    /// An HTTP error with the vendor's own body.
    Status {
        code: u16,
        retry_after: Option<u32>,
        error_type: Option<String>,
    },
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

const CHUNK: usize = 20;
const TEXT_LEN: usize = 200;
const THINKING_LEN: usize = 120;
const ANSWER_LEN: usize = 80;
const FRAGMENTS: usize = 3;
const STATUS_CODE: u16 = 500;

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

    /// The built-in short answer.
    pub fn default_answer() -> Self {
        VendorScenario::new(VendorKind::Default { chunk: CHUNK })
    }

    /// Generated text of `len` characters in deltas of `chunk` characters.
    pub fn text(len: usize, chunk: usize) -> Self {
        VendorScenario::new(VendorKind::Text {
            len,
            chunk,
            unicode: false,
        })
    }

    /// The last user message's text.
    pub fn echo() -> Self {
        VendorScenario::new(VendorKind::Echo { chunk: CHUNK })
    }

    /// `n` tool calls with arguments in `fragments` pieces, after a short preamble.
    pub fn tools(n: usize, fragments: usize) -> Self {
        VendorScenario::new(VendorKind::Tools {
            n,
            fragments,
            preamble: true,
            name: None,
            interleave: false,
        })
    }

    /// Thinking, then text.
    pub fn thinking() -> Self {
        VendorScenario::new(VendorKind::Thinking {
            thinking_len: THINKING_LEN,
            len: ANSWER_LEN,
            chunk: CHUNK,
        })
    }

    /// An HTTP error with the vendor's body for `code`.
    pub fn status(code: u16) -> Self {
        VendorScenario::new(VendorKind::Status {
            code,
            retry_after: None,
            error_type: None,
        })
    }

    /// 429 with `retry-after: secs`.
    pub fn rate_limited(retry_after: u32) -> Self {
        VendorScenario::new(VendorKind::Status {
            code: 429,
            retry_after: Some(retry_after),
            error_type: None,
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
    pub fn with_fault(mut self, fault: VendorFault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Wait this long before the status line.
    pub fn with_header_delay(mut self, d: Duration) -> Self {
        self.header_delay = d;
        self
    }

    /// Wait this long before the first body byte.
    pub fn with_first_delay(mut self, d: Duration) -> Self {
        self.first_delay = d;
        self
    }

    /// Wait this long between stream events.
    pub fn with_interval(mut self, d: Duration) -> Self {
        self.interval = d;
        self
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

    /// The key `times` counts under.
    pub fn counter_key(&self) -> String {
        match &self.key {
            Some(k) => k.clone(),
            None => self.to_string(),
        }
    }
}

impl Default for VendorScenario {
    fn default() -> Self {
        VendorScenario::default_answer()
    }
}

fn kind_named(name: &str) -> Result<VendorKind, VendorScenarioParseError> {
    Ok(match name {
        "default" => VendorScenario::default_answer().kind,
        "text" => VendorScenario::text(TEXT_LEN, CHUNK).kind,
        "echo" => VendorScenario::echo().kind,
        "tools" => VendorScenario::tools(1, FRAGMENTS).kind,
        "thinking" | "reasoning" => VendorScenario::thinking().kind,
        "status" => VendorScenario::status(STATUS_CODE).kind,
        other => return err(format!("unknown scenario '{other}'")),
    })
}

/// Apply one kind-specific key; `Ok(false)` when the key is not one of the kind's.
fn set_kind_key(
    kind: &mut VendorKind,
    key: &str,
    v: &str,
) -> Result<bool, VendorScenarioParseError> {
    match (kind, key) {
        (VendorKind::Default { chunk } | VendorKind::Echo { chunk }, "chunk") => {
            *chunk = positive(key, v)?
        }
        (VendorKind::Text { len, .. }, "len") => *len = num(key, v)?,
        (VendorKind::Text { chunk, .. }, "chunk") => *chunk = positive(key, v)?,
        (VendorKind::Text { unicode, .. }, "unicode") => *unicode = boolean(key, v)?,
        (VendorKind::Tools { n, .. }, "n") => *n = positive(key, v)?,
        (VendorKind::Tools { fragments, .. }, "fragments") => *fragments = positive(key, v)?,
        (VendorKind::Tools { preamble, .. }, "preamble") => *preamble = boolean(key, v)?,
        (VendorKind::Tools { name, .. }, "name") => *name = Some(v.to_owned()),
        (VendorKind::Tools { interleave, .. }, "interleave") => *interleave = boolean(key, v)?,
        (VendorKind::Thinking { thinking_len, .. }, "thinking_len") => *thinking_len = num(key, v)?,
        (VendorKind::Thinking { len, .. }, "len") => *len = num(key, v)?,
        (VendorKind::Thinking { chunk, .. }, "chunk") => *chunk = positive(key, v)?,
        (VendorKind::Status { code, .. }, "code") => {
            let c: u16 = num(key, v)?;
            if !(400..=599).contains(&c) {
                return err(format!("code={v}: must be 400..599"));
            }
            *code = c;
        }
        (VendorKind::Status { retry_after, .. }, "retry_after") => {
            *retry_after = Some(num(key, v)?)
        }
        (VendorKind::Status { error_type, .. }, "error_type") => *error_type = Some(v.to_owned()),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Fault keys are gathered first, since `error=` may come before `error_after=`.
#[derive(Default)]
struct FaultKeys {
    disconnect_after: Option<usize>,
    error_after: Option<usize>,
    error: Option<String>,
}

impl FaultKeys {
    fn into_fault(self) -> Result<Option<VendorFault>, VendorScenarioParseError> {
        match (self.disconnect_after, self.error_after, self.error) {
            (Some(_), Some(_), _) => err("at most one fault per scenario"),
            (Some(after), None, None) => Ok(Some(VendorFault::Disconnect { after })),
            (_, None, Some(_)) => err("error= needs error_after="),
            (None, Some(after), error_type) => {
                Ok(Some(VendorFault::ErrorEvent { after, error_type }))
            }
            (None, None, None) => Ok(None),
        }
    }
}

impl FromStr for VendorScenario {
    type Err = VendorScenarioParseError;

    /// Parse the text after `sim:` (see the module docs).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let mut tokens = spec.split_ascii_whitespace().peekable();
        let name = match tokens.peek() {
            Some(t) if !t.contains('=') => tokens.next().unwrap_or("default"),
            _ => spec
                .split_ascii_whitespace()
                .find_map(|t| t.strip_prefix("scenario="))
                .unwrap_or("default"),
        };
        let mut s = VendorScenario::new(kind_named(name)?);
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
                "extra" => s.extra = boolean(key, v)?,
                "finish" => {
                    s.finish = match v {
                        "natural" => Finish::Natural,
                        "length" => Finish::Length,
                        _ => return err(format!("finish={v}: natural or length")),
                    }
                }
                "times" => s.times = Some(num(key, v)?),
                "key" => s.key = Some(v.to_owned()),
                "disconnect_after" => faults.disconnect_after = Some(num(key, v)?),
                "error_after" => faults.error_after = Some(num(key, v)?),
                "error" => faults.error = Some(v.to_owned()),
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

impl fmt::Display for VendorScenario {
    /// The canonical directive text (without `sim:`): only non-default values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut o = Out { f };
        match &self.kind {
            VendorKind::Default { chunk } => {
                write!(o.f, "default")?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            VendorKind::Text {
                len,
                chunk,
                unicode,
            } => {
                write!(o.f, "text")?;
                o.kv("len", *len, TEXT_LEN)?;
                o.kv("chunk", *chunk, CHUNK)?;
                o.kv("unicode", *unicode, false)?;
            }
            VendorKind::Echo { chunk } => {
                write!(o.f, "echo")?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            VendorKind::Tools {
                n,
                fragments,
                preamble,
                name,
                interleave,
            } => {
                write!(o.f, "tools")?;
                o.kv("n", *n, 1)?;
                o.kv("fragments", *fragments, FRAGMENTS)?;
                o.kv("preamble", *preamble, true)?;
                if let Some(name) = name {
                    write!(o.f, " name={name}")?;
                }
                o.kv("interleave", *interleave, false)?;
            }
            VendorKind::Thinking {
                thinking_len,
                len,
                chunk,
            } => {
                write!(o.f, "thinking")?;
                o.kv("thinking_len", *thinking_len, THINKING_LEN)?;
                o.kv("len", *len, ANSWER_LEN)?;
                o.kv("chunk", *chunk, CHUNK)?;
            }
            VendorKind::Status {
                code,
                retry_after,
                error_type,
            } => {
                write!(o.f, "status code={code}")?;
                if let Some(r) = retry_after {
                    write!(o.f, " retry_after={r}")?;
                }
                if let Some(t) = error_type {
                    write!(o.f, " error_type={t}")?;
                }
            }
        }
        o.ms("header_delay", self.header_delay)?;
        o.ms("delay", self.first_delay)?;
        o.ms("interval", self.interval)?;
        o.kv("extra", self.extra, false)?;
        if self.finish == Finish::Length {
            write!(o.f, " finish=length")?;
        }
        match &self.fault {
            None => {}
            Some(VendorFault::Disconnect { after }) => write!(o.f, " disconnect_after={after}")?,
            Some(VendorFault::ErrorEvent { after, error_type }) => {
                write!(o.f, " error_after={after}")?;
                if let Some(t) = error_type {
                    write!(o.f, " error={t}")?;
                }
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
