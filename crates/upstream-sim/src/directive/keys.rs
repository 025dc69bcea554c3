//! A scenario's keys as values: [`Key`] names where one key's value lives
//! and its default ([`Slot`]), so one list serves reading a spec and printing
//! the canonical text; [`CommonKeys`] are the keys every scenario has, and
//! [`Out`] writes ` key=value` pairs.

use std::fmt;
use std::time::Duration;

use super::defaults;
use super::{boolean, duration, error_status, num, ScenarioParseError};

/// The keys every scenario has, borrowed from it while its spec is read.
pub(crate) struct CommonKeys<'a> {
    pub header_delay: &'a mut Duration,
    pub first_delay: &'a mut Duration,
    pub interval: &'a mut Duration,
    pub times: &'a mut Option<u32>,
    pub key: &'a mut Option<String>,
}

impl CommonKeys<'_> {
    /// Apply one common key; `Ok(false)` when `key` is not one of them.
    pub(super) fn set(self, key: &str, v: &str) -> Result<bool, ScenarioParseError> {
        match key {
            "header_delay" => *self.header_delay = duration(key, v)?,
            "delay" => *self.first_delay = duration(key, v)?,
            "interval" => *self.interval = duration(key, v)?,
            "times" => *self.times = Some(num(key, v)?),
            "key" => *self.key = Some(v.to_owned()),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Where the value of one key lives, with its default (not printed).
pub(crate) enum Slot<'a> {
    /// A number; `positive` refuses 0.
    Count {
        v: &'a mut usize,
        default: usize,
        positive: bool,
    },
    Flag {
        v: &'a mut bool,
        default: bool,
    },
    /// A word, printed when present.
    Word(&'a mut Option<String>),
    /// Seconds, printed when present.
    Seconds(&'a mut Option<u32>),
    /// An HTTP error status, always printed.
    Status(&'a mut u16),
}

/// One key of a scenario: its name and its value.
pub(crate) struct Key<'a> {
    name: &'static str,
    slot: Slot<'a>,
}

impl<'a> Key<'a> {
    pub(crate) fn count(name: &'static str, v: &'a mut usize, default: usize) -> Self {
        let slot = Slot::Count {
            v,
            default,
            positive: false,
        };
        Key { name, slot }
    }

    pub(crate) fn positive(name: &'static str, v: &'a mut usize, default: usize) -> Self {
        let slot = Slot::Count {
            v,
            default,
            positive: true,
        };
        Key { name, slot }
    }

    /// `chunk`: characters per event, at least 1.
    pub(crate) fn chunk(v: &'a mut usize) -> Self {
        Key::positive("chunk", v, defaults::CHUNK)
    }

    pub(crate) fn flag(name: &'static str, v: &'a mut bool, default: bool) -> Self {
        let slot = Slot::Flag { v, default };
        Key { name, slot }
    }

    /// A flag that is off by default.
    pub(crate) fn off(name: &'static str, v: &'a mut bool) -> Self {
        Key::flag(name, v, false)
    }

    pub(crate) fn word(name: &'static str, v: &'a mut Option<String>) -> Self {
        let slot = Slot::Word(v);
        Key { name, slot }
    }

    /// `retry_after`-like seconds, printed when present.
    pub(crate) fn seconds(name: &'static str, v: &'a mut Option<u32>) -> Self {
        let slot = Slot::Seconds(v);
        Key { name, slot }
    }

    /// `code`: an HTTP error status, always printed.
    pub(crate) fn status_code(v: &'a mut u16) -> Self {
        let slot = Slot::Status(v);
        Key { name: "code", slot }
    }

    pub(super) fn name(&self) -> &'static str {
        self.name
    }

    pub(super) fn set(self, v: &str) -> Result<(), ScenarioParseError> {
        let key = self.name;
        match self.slot {
            Slot::Count {
                v: slot, positive, ..
            } => {
                *slot = if positive {
                    super::positive(key, v)?
                } else {
                    num(key, v)?
                }
            }
            Slot::Flag { v: slot, .. } => *slot = boolean(key, v)?,
            Slot::Word(slot) => *slot = Some(v.to_owned()),
            Slot::Seconds(slot) => *slot = Some(num(key, v)?),
            Slot::Status(slot) => *slot = error_status(key, v)?,
        }
        Ok(())
    }

    pub(super) fn write(&self, o: &mut Out<'_, '_>) -> fmt::Result {
        let key = self.name;
        match &self.slot {
            Slot::Count { v, default, .. } => o.kv(key, **v, *default),
            Slot::Flag { v, default } => o.kv(key, **v, *default),
            Slot::Word(v) => o.some(key, v.as_deref()),
            Slot::Seconds(v) => o.some(key, **v),
            Slot::Status(v) => write!(o.f, " {key}={v}"),
        }
    }
}

/// Writes a scenario's canonical text: ` key=value` only where the value
/// differs from the default.
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

    /// ` key=value` when there is a value.
    pub(crate) fn some<T: fmt::Display>(&mut self, key: &str, v: Option<T>) -> fmt::Result {
        match v {
            Some(v) => write!(self.f, " {key}={v}"),
            None => Ok(()),
        }
    }

    pub(crate) fn ms(&mut self, key: &str, d: Duration) -> fmt::Result {
        if d.is_zero() {
            return Ok(());
        }
        write!(self.f, " {key}={}ms", d.as_millis())
    }

    /// `header_delay`, `delay` and `interval`.
    pub(super) fn timing(
        &mut self,
        header_delay: Duration,
        first_delay: Duration,
        interval: Duration,
    ) -> fmt::Result {
        self.ms("header_delay", header_delay)?;
        self.ms("delay", first_delay)?;
        self.ms("interval", interval)
    }

    /// `times` and `key`, which end every canonical text.
    pub(super) fn counting(&mut self, times: Option<u32>, key: Option<&str>) -> fmt::Result {
        self.some("times", times)?;
        self.some("key", key)
    }
}
