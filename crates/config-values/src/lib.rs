//! Value types of configuration fields and their text form: durations (`30`,
//! `30s`, `5m`, `1h30m`), booleans (`true/false/1/0`), integers, byte sizes
//! (`10MiB`), `DebugMode`. Each parses from and renders to the same text, so the
//! admin API can show and accept exactly what the environment accepts.
//!
//! Its own crate, std only, so the fuzz workspace (`fuzz/`, target
//! `config_values`) can link it without the gateway; the gateway re-exports
//! it as `config::value` and adds its own field types (regions, URLs).

use std::fmt;
use std::time::Duration;

/// The kind of a field, for the declared table (and the admin API's form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Bool,
    Integer,
    Duration,
    ByteSize,
    String,
    Enum(&'static [&'static str]),
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Bool => "boolean",
            FieldKind::Integer => "integer",
            FieldKind::Duration => "duration",
            FieldKind::ByteSize => "byte_size",
            FieldKind::String => "string",
            FieldKind::Enum(_) => "enum",
        }
    }
}

/// A type a configuration field can have.
pub trait FieldValue: Sized {
    const KIND: FieldKind;
    /// Parse the text form; the error says what was expected (never echoes the input).
    fn parse_value(raw: &str) -> Result<Self, String>;
    /// The canonical text form; `parse_value(render(x)) == x`.
    fn render(&self) -> String;
}

impl FieldValue for bool {
    const KIND: FieldKind = FieldKind::Bool;
    fn parse_value(raw: &str) -> Result<Self, String> {
        parse_bool(raw)
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl FieldValue for u16 {
    const KIND: FieldKind = FieldKind::Integer;
    fn parse_value(raw: &str) -> Result<Self, String> {
        raw.trim()
            .parse()
            .map_err(|_| format!("expected an integer from 0 to {}", u16::MAX))
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl FieldValue for u32 {
    const KIND: FieldKind = FieldKind::Integer;
    fn parse_value(raw: &str) -> Result<Self, String> {
        raw.trim()
            .parse()
            .map_err(|_| format!("expected an integer from 0 to {}", u32::MAX))
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl FieldValue for String {
    const KIND: FieldKind = FieldKind::String;
    fn parse_value(raw: &str) -> Result<Self, String> {
        let v = raw.trim();
        if v.is_empty() {
            Err("expected a non-empty string".into())
        } else {
            Ok(v.to_owned())
        }
    }
    fn render(&self) -> String {
        self.clone()
    }
}

impl FieldValue for Duration {
    const KIND: FieldKind = FieldKind::Duration;
    fn parse_value(raw: &str) -> Result<Self, String> {
        parse_duration(raw)
    }
    fn render(&self) -> String {
        render_duration(*self)
    }
}

/// `true`, `false`, `1`, `0` (case-insensitive).
pub fn parse_bool(raw: &str) -> Result<bool, String> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err("expected a boolean: true, false, 1 or 0".into()),
    }
}

const DURATION_HINT: &str =
    "expected a duration: plain seconds (30) or with units ms, s, m, h, d (30s, 5m, 1h30m)";

/// Plain seconds (`30`) or one or more number+unit pairs (`500ms`, `30s`, `5m`, `1h30m`).
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(DURATION_HINT.into());
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        let secs = s.parse::<u64>().map_err(|_| DURATION_HINT.to_string())?;
        // The same bound as with units: whole milliseconds in a u64, so the
        // rendered form ("...s") parses back.
        return secs
            .checked_mul(1_000)
            .map(Duration::from_millis)
            .ok_or_else(|| "duration is too large".to_string());
    }
    let bytes = s.as_bytes();
    let mut total_ms: u64 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return Err(DURATION_HINT.into());
        }
        let number: u64 = s[start..i].parse().map_err(|_| DURATION_HINT.to_string())?;
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit_ms: u64 = match &s[unit_start..i] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return Err(DURATION_HINT.into()),
        };
        total_ms = number
            .checked_mul(unit_ms)
            .and_then(|v| total_ms.checked_add(v))
            .ok_or_else(|| "duration is too large".to_string())?;
    }
    Ok(Duration::from_millis(total_ms))
}

/// The shortest exact form: `500ms`, `30s`, `5m`, `6h` (hours are the largest unit).
pub fn render_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let secs = ms / 1000;
    if secs != 0 && secs.is_multiple_of(3600) {
        format!("{}h", secs / 3600)
    } else if secs != 0 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

/// A size in bytes; accepts `1048576`, `512KiB`, `10MiB`, `1GiB` and the decimal
/// `KB`/`MB`/`GB` (case-insensitive units).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub const fn mib(n: u64) -> Self {
        ByteSize(n * 1024 * 1024)
    }

    pub fn bytes(self) -> u64 {
        self.0
    }

    /// As `usize`, saturating on 32-bit targets.
    pub fn as_usize(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl FieldValue for ByteSize {
    const KIND: FieldKind = FieldKind::ByteSize;
    fn parse_value(raw: &str) -> Result<Self, String> {
        const HINT: &str = "expected a size in bytes, optionally with a unit (10MiB, 512KiB, 1GB)";
        let s = raw.trim();
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let number: u64 = num.parse().map_err(|_| HINT.to_string())?;
        let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            "g" | "gib" => 1 << 30,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            _ => return Err(HINT.into()),
        };
        number
            .checked_mul(factor)
            .map(ByteSize)
            .ok_or_else(|| "size is too large".into())
    }
    fn render(&self) -> String {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1 << 30) {
            format!("{}GiB", b >> 30)
        } else if b != 0 && b.is_multiple_of(1 << 20) {
            format!("{}MiB", b >> 20)
        } else if b != 0 && b.is_multiple_of(1 << 10) {
            format!("{}KiB", b >> 10)
        } else {
            b.to_string()
        }
    }
}

/// What request and response bodies are logged (secrets are always masked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebugMode {
    /// No bodies in the log.
    #[default]
    Off,
    /// Bodies of failed requests only.
    Errors,
    /// Every body.
    All,
}

impl DebugMode {
    pub const VALUES: &'static [&'static str] = &["off", "errors", "all"];

    pub fn as_str(self) -> &'static str {
        match self {
            DebugMode::Off => "off",
            DebugMode::Errors => "errors",
            DebugMode::All => "all",
        }
    }

    /// Whether a body of a request that ended with `failed` should be logged.
    pub fn logs_body(self, failed: bool) -> bool {
        match self {
            DebugMode::Off => false,
            DebugMode::Errors => failed,
            DebugMode::All => true,
        }
    }
}

impl fmt::Display for DebugMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FieldValue for DebugMode {
    const KIND: FieldKind = FieldKind::Enum(DebugMode::VALUES);
    fn parse_value(raw: &str) -> Result<Self, String> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(DebugMode::Off),
            "errors" => Ok(DebugMode::Errors),
            "all" => Ok(DebugMode::All),
            _ => Err("expected one of off, errors, all".into()),
        }
    }
    fn render(&self) -> String {
        self.as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_plain_seconds_and_units() {
        let cases = [
            ("30", 30_000),
            ("30s", 30_000),
            ("5m", 300_000),
            ("6h", 21_600_000),
            ("1d", 86_400_000),
            ("500ms", 500),
            ("1h30m", 5_400_000),
            (" 15s ", 15_000),
            ("0", 0),
        ];
        for (raw, ms) in cases {
            assert_eq!(
                parse_duration(raw),
                Ok(Duration::from_millis(ms)),
                "input {raw:?}"
            );
        }
    }

    /// Found by the `config_values` fuzz target: plain seconds past
    /// u64::MAX milliseconds were accepted, and their rendering
    /// (`4294967294294967295s`) was then refused as too large.
    #[test]
    fn plain_seconds_have_the_same_bound_as_units() {
        let max_secs = u64::MAX / 1000;
        let d = parse_duration(&max_secs.to_string()).unwrap();
        assert_eq!(parse_duration(&render_duration(d)), Ok(d));
        for raw in ["4294967294294967295", &(max_secs + 1).to_string()] {
            assert_eq!(
                parse_duration(raw),
                Err("duration is too large".to_string()),
                "{raw}"
            );
        }
    }

    #[test]
    fn durations_reject_garbage() {
        for raw in ["", "s", "30x", "-5", "1.5s", "m5", "5 m", "30S"] {
            assert!(parse_duration(raw).is_err(), "input {raw:?} was accepted");
        }
    }

    #[test]
    fn durations_render_and_round_trip() {
        for (d, text) in [
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(300), "5m"),
            (Duration::from_secs(6 * 3600), "6h"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_secs(90), "90s"),
            (Duration::ZERO, "0s"),
        ] {
            assert_eq!(render_duration(d), text);
            assert_eq!(parse_duration(text), Ok(d));
        }
    }

    #[test]
    fn booleans_accept_the_documented_words_only() {
        assert_eq!(parse_bool("true"), Ok(true));
        assert_eq!(parse_bool("TRUE"), Ok(true));
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("false"), Ok(false));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("yes").is_err());
        assert!(parse_bool("2").is_err());
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(ByteSize::parse_value("10MiB"), Ok(ByteSize::mib(10)));
        assert_eq!(ByteSize::parse_value("10mb"), Ok(ByteSize(10_000_000)));
        assert_eq!(ByteSize::parse_value("1024"), Ok(ByteSize(1024)));
        assert_eq!(ByteSize::parse_value("512 KiB"), Ok(ByteSize(512 * 1024)));
        assert!(ByteSize::parse_value("ten").is_err());
        assert!(ByteSize::parse_value("10XB").is_err());
        assert_eq!(ByteSize::mib(10).render(), "10MiB");
        assert_eq!(ByteSize(1000).render(), "1000");
    }

    #[test]
    fn debug_mode_values() {
        assert_eq!(DebugMode::parse_value("Errors"), Ok(DebugMode::Errors));
        assert!(DebugMode::parse_value("verbose").is_err());
        assert!(DebugMode::Errors.logs_body(true));
        assert!(!DebugMode::Errors.logs_body(false));
        assert!(DebugMode::All.logs_body(false));
        assert!(!DebugMode::Off.logs_body(true));
    }
}
