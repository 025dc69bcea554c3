//! The pieces of the `sim:` directive grammar that every simulated upstream
//! shares: the parse error, value parsers (numbers, booleans, durations) and
//! the writer that prints a scenario back as its canonical directive text.
//! Each upstream's `scenario` module adds its own kinds and keys on top.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Why a directive could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioParseError(pub String);

impl fmt::Display for ScenarioParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad sim directive: {}", self.0)
    }
}

impl std::error::Error for ScenarioParseError {}

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, ScenarioParseError> {
    Err(ScenarioParseError(msg.into()))
}

pub(crate) fn num<T: FromStr>(key: &str, v: &str) -> Result<T, ScenarioParseError> {
    v.parse()
        .or_else(|_| err(format!("{key}={v}: not a number")))
}

pub(crate) fn positive(key: &str, v: &str) -> Result<usize, ScenarioParseError> {
    match num::<usize>(key, v)? {
        0 => err(format!("{key} must be at least 1")),
        n => Ok(n),
    }
}

pub(crate) fn boolean(key: &str, v: &str) -> Result<bool, ScenarioParseError> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => err(format!("{key}={v}: not a boolean")),
    }
}

/// `250ms`, `2s`, or plain milliseconds.
pub(crate) fn duration(key: &str, v: &str) -> Result<Duration, ScenarioParseError> {
    if let Some(ms) = v.strip_suffix("ms") {
        return num::<u64>(key, ms).map(Duration::from_millis);
    }
    if let Some(s) = v.strip_suffix('s') {
        return num::<u64>(key, s).map(Duration::from_secs);
    }
    num::<u64>(key, v).map(Duration::from_millis)
}

/// Writes ` key=value` when the value differs from the default.
pub(crate) struct Out<'a, 'b> {
    pub(crate) f: &'a mut fmt::Formatter<'b>,
}

impl Out<'_, '_> {
    pub(crate) fn kv<T: PartialEq + fmt::Display>(
        &mut self,
        key: &str,
        v: T,
        default: T,
    ) -> fmt::Result {
        if v == default {
            return Ok(());
        }
        write!(self.f, " {key}={v}")
    }

    pub(crate) fn ms(&mut self, key: &str, d: Duration) -> fmt::Result {
        if d.is_zero() {
            return Ok(());
        }
        write!(self.f, " {key}={}ms", d.as_millis())
    }
}
