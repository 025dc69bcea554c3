//! The `sim:` directive grammar every simulated upstream shares: finding the
//! directive lines of a text, parsing one line's `key=value` spec into a
//! scenario ([`parse`] over the [`Directive`] each scenario type implements),
//! the value parsers (numbers, booleans, durations, status codes), the keys
//! every scenario has (timing, `times`, `key`), the fault keys gathered
//! before they are combined, and the writer that prints a scenario back as
//! its canonical text. Each upstream's `scenario` module adds only its own
//! names and keys.
//!
//! ```text
//! line      := "sim:" WS [TARGET WS] spec
//! spec      := [NAME | "scenario=" NAME] (WS KEY "=" VALUE)*
//! TARGET    := guardrail
//! ```
//!
//! A line without a target is for the chat services (primary and vendors);
//! a line whose first word is a target is for that service only, and the
//! others skip it, so one message can script both the guardrail and the
//! answer. The names and keys of each are documented with its scenario type:
//! the primary's in [`crate::primary::scenario`], the vendors' in
//! [`crate::vendor_common::scenario`], the guardrail's (`none`, `content`,
//! `topic`, `word`, `pii`, `regex`, `status`) in [`crate::guardrail::scenario`].

pub(crate) mod keys;
pub(crate) mod kinds;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub(crate) use keys::{CommonKeys, Key, Out};
pub(crate) use kinds::{chat_kinds, common_keys, scenario_common, shape};

/// The directive prefix of a line.
pub const DIRECTIVE_PREFIX: &str = "sim:";

/// Services addressed by name at the start of a directive (`sim: guardrail …`).
pub const TARGETS: &[&str] = &["guardrail"];

/// Why a directive could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioParseError(pub String);

impl fmt::Display for ScenarioParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad sim directive: {}", self.0)
    }
}

impl std::error::Error for ScenarioParseError {}

/// Every `sim:` line of `content`, trimmed, after the prefix.
fn all_lines(content: &str) -> impl Iterator<Item = &str> {
    // Cheap pre-check: most messages have no directive at all.
    let any = content.contains(DIRECTIVE_PREFIX);
    content
        .lines()
        .filter(move |_| any)
        .filter_map(|line| line.trim_start().strip_prefix(DIRECTIVE_PREFIX))
        .map(str::trim)
}

/// The first word of a spec and the rest.
fn first_word(spec: &str) -> (&str, &str) {
    match spec.split_once(|c: char| c.is_ascii_whitespace()) {
        Some((word, rest)) => (word, rest.trim_start()),
        None => (spec, ""),
    }
}

/// The specs (text after `sim:`) of the chat directives of `content`: every
/// directive line not addressed to a [`TARGETS`] service.
pub fn lines(content: &str) -> impl Iterator<Item = &str> {
    all_lines(content).filter(|spec| !TARGETS.contains(&first_word(spec).0))
}

/// The specs (after `sim: TARGET`) of the directives addressed to `target`.
pub fn lines_for<'a>(content: &'a str, target: &'a str) -> impl Iterator<Item = &'a str> {
    all_lines(content).filter_map(move |spec| match first_word(spec) {
        (word, rest) if word == target => Some(rest),
        _ => None,
    })
}

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

/// An HTTP error status, 400..599.
pub(crate) fn error_status(key: &str, v: &str) -> Result<u16, ScenarioParseError> {
    let c: u16 = num(key, v)?;
    if !(400..=599).contains(&c) {
        return err(format!("{key}={v}: must be 400..599"));
    }
    Ok(c)
}

/// Fault keys as read, combined by the scenario once the whole spec is read
/// (a fault's type may come before its position).
#[derive(Debug, Default)]
pub(crate) struct FaultKeys<'s> {
    given: Vec<(&'s str, &'s str)>,
}

impl FaultKeys<'_> {
    /// The last value given for `key`.
    pub(crate) fn word(&self, key: &str) -> Option<&str> {
        self.given
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// The last value given for `key`, as a number.
    pub(crate) fn count(&self, key: &str) -> Result<Option<usize>, ScenarioParseError> {
        self.word(key).map(|v| num(key, v)).transpose()
    }

    /// A fault type (`type_key`) given without the position it needs.
    pub(crate) fn orphan(
        &self,
        type_key: &str,
        position_key: &str,
    ) -> Result<(), ScenarioParseError> {
        if self.word(type_key).is_some() && self.word(position_key).is_none() {
            return err(format!("{type_key}= needs {position_key}="));
        }
        Ok(())
    }
}

/// At most one of the faults a spec named.
pub(crate) fn one_fault<F>(mut faults: Vec<F>) -> Result<Option<F>, ScenarioParseError> {
    if faults.len() > 1 {
        return err("at most one fault per scenario");
    }
    Ok(faults.pop())
}

/// The defaults the chat scenarios share.
pub(crate) mod defaults {
    /// Characters per text event.
    pub(crate) const CHUNK: usize = 20;
    /// Length of generated text.
    pub(crate) const TEXT_LEN: usize = 200;
    /// Length of thinking text.
    pub(crate) const THINKING_LEN: usize = 120;
    /// Length of the answer after thinking.
    pub(crate) const ANSWER_LEN: usize = 80;
    /// Pieces of each tool call's input.
    pub(crate) const FRAGMENTS: usize = 3;
    /// Status of a `status` scenario without `code`.
    pub(crate) const STATUS_CODE: u16 = 500;
}

/// A scenario's keys that every scenario has ([`scenario_common`] implements it).
pub(crate) trait HasCommonKeys {
    fn common(&mut self) -> CommonKeys<'_>;
}

/// A scenario's names and the keys of its kind ([`chat_kinds`] implements it
/// for the chat scenarios).
pub(crate) trait Shaped: Sized {
    /// The scenario a name stands for, every key at its default.
    fn named(name: &str) -> Result<Self, ScenarioParseError>;
    /// The kind's name and keys, in canonical order.
    fn kind_keys(&mut self) -> (&'static str, Vec<Key<'_>>);
}

/// A scenario type with a directive form.
pub(crate) trait Directive: Shaped + HasCommonKeys + Clone {
    /// The name a spec without one stands for.
    const DEFAULT_NAME: &'static str = "default";
    /// Keys gathered into [`FaultKeys`] and combined by [`Directive::set_fault`].
    const FAULT_KEYS: &'static [&'static str];

    /// The scenario's own keys besides its kind's (flags), in canonical order.
    fn own_keys(&mut self) -> Vec<Key<'_>>;
    /// Apply a key that no slot describes; `Ok(false)` when unknown.
    fn set_other(&mut self, _key: &str, _v: &str) -> Result<bool, ScenarioParseError> {
        Ok(false)
    }
    /// Print what [`Directive::set_other`] reads.
    fn write_other(&self, _o: &mut Out<'_, '_>) -> fmt::Result {
        Ok(())
    }
    /// Combine the fault keys that were given.
    fn set_fault(&mut self, faults: &FaultKeys<'_>) -> Result<(), ScenarioParseError>;
    /// Print the fault.
    fn write_fault(&self, o: &mut Out<'_, '_>) -> fmt::Result;
}

/// Apply `key` to the first of `keys` with that name; false when none has it.
fn set_in(keys: Vec<Key<'_>>, key: &str, v: &str) -> Result<bool, ScenarioParseError> {
    match keys.into_iter().find(|k| k.name() == key) {
        Some(k) => k.set(v).map(|()| true),
        None => Ok(false),
    }
}

/// Parse a spec (the text after `sim:`): a name (bare, or `scenario=NAME`
/// anywhere), then `key=value` words. An unknown name or key, a key that does
/// not apply to the name, or a bad value is an error.
pub(crate) fn parse<D: Directive>(spec: &str) -> Result<D, ScenarioParseError> {
    let mut tokens = spec.split_ascii_whitespace().peekable();
    let name = match tokens.peek() {
        Some(t) if !t.contains('=') => tokens.next().unwrap_or(D::DEFAULT_NAME),
        _ => spec
            .split_ascii_whitespace()
            .find_map(|t| t.strip_prefix("scenario="))
            .unwrap_or(D::DEFAULT_NAME),
    };
    let mut s = D::named(name)?;
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
            _ if D::FAULT_KEYS.contains(&key) => faults.given.push((key, v)),
            _ => {
                let known = s.common().set(key, v)?
                    || set_in(s.kind_keys().1, key, v)?
                    || set_in(s.own_keys(), key, v)?
                    || s.set_other(key, v)?;
                if !known {
                    return err(format!("unknown key '{key}' for scenario {name}"));
                }
            }
        }
    }
    s.set_fault(&faults)?;
    Ok(s)
}

/// The canonical text of a scenario (without `sim:`): its name, then only the
/// values that differ from the defaults, in a fixed order, so spellings of
/// one scenario print alike.
pub(crate) fn write<D: Directive>(scenario: &D, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut copy = scenario.clone();
    let mut o = Out { f };
    let (name, kind) = copy.kind_keys();
    o.f.write_str(name)?;
    for k in &kind {
        k.write(&mut o)?;
    }
    drop(kind);
    let common = copy.common();
    o.timing(*common.header_delay, *common.first_delay, *common.interval)?;
    let (times, key) = (*common.times, common.key.clone());
    for k in &copy.own_keys() {
        k.write(&mut o)?;
    }
    scenario.write_other(&mut o)?;
    scenario.write_fault(&mut o)?;
    o.counting(times, key.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_lines_skip_lines_for_a_target() {
        let content = "hello\n  sim: text len=5\nnot sim: here\nsim:echo\nsim: guardrail content type=HATE\nsim:guardrail";
        let chat: Vec<_> = lines(content).collect();
        assert_eq!(chat, ["text len=5", "echo"]);
        let guard: Vec<_> = lines_for(content, "guardrail").collect();
        assert_eq!(guard, ["content type=HATE", ""]);
        assert_eq!(lines("no directive").count(), 0);
        assert_eq!(lines_for("sim: text", "guardrail").count(), 0);
    }

    #[test]
    fn value_parsers() {
        assert_eq!(duration("d", "2s"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("d", "250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("d", "7"), Ok(Duration::from_millis(7)));
        assert!(duration("d", "x").is_err());
        assert_eq!(boolean("b", "on"), Ok(true));
        assert!(boolean("b", "maybe").is_err());
        assert_eq!(error_status("code", "429"), Ok(429));
        assert!(error_status("code", "200")
            .unwrap_err()
            .0
            .contains("400..599"));
    }

    #[test]
    fn fault_keys_keep_the_last_value() {
        let mut f = FaultKeys::default();
        f.given.push(("after", "1"));
        f.given.push(("after", "3"));
        f.given.push(("kind", "x"));
        assert_eq!(f.count("after"), Ok(Some(3)));
        assert_eq!(f.word("kind"), Some("x"));
        assert!(f.orphan("kind", "after").is_ok());
        assert!(f
            .orphan("kind", "other")
            .unwrap_err()
            .0
            .contains("needs other="));
        assert!(one_fault(vec![1, 2]).is_err());
        assert_eq!(one_fault(vec![1]), Ok(Some(1)));
    }
}
