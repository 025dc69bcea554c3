//! The text forms of configuration values (`config-values`), as the
//! environment and the admin API give them: any text parses or is refused
//! without a panic; what parses renders to a canonical text that parses
//! back to the same value and renders the same again; every duration and
//! byte size renders to a text that parses back to it.
//!
//! Input: one byte choosing the value type, then the text (or, for the
//! last two choices, 8 bytes of a value to render first).
#![no_main]

use std::fmt::Debug;
use std::time::Duration;

use config_values::{parse_bool, parse_duration, render_duration, ByteSize, DebugMode, FieldValue};
use libfuzzer_sys::fuzz_target;

fn round_trip<T: FieldValue + PartialEq + Debug>(raw: &str) {
    let Ok(value) = T::parse_value(raw) else {
        return;
    };
    let text = T::render(&value);
    let again = T::parse_value(&text).unwrap_or_else(|e| panic!("{raw:?} -> {text:?}: {e}"));
    assert_eq!(again, value, "{raw:?} -> {text:?}");
    assert_eq!(T::render(&again), text);
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let raw = String::from_utf8_lossy(rest);
    match choice % 9 {
        0 => round_trip::<bool>(&raw),
        1 => round_trip::<u16>(&raw),
        2 => round_trip::<u32>(&raw),
        3 => round_trip::<String>(&raw),
        4 => {
            round_trip::<Duration>(&raw);
            assert_eq!(parse_duration(&raw), Duration::parse_value(&raw));
        }
        5 => round_trip::<ByteSize>(&raw),
        6 => {
            round_trip::<DebugMode>(&raw);
            assert_eq!(parse_bool(&raw).is_ok(), bool::parse_value(&raw).is_ok());
        }
        7 => {
            let Some(bytes) = rest.first_chunk::<8>() else {
                return;
            };
            let d = Duration::from_millis(u64::from_le_bytes(*bytes));
            let text = render_duration(d);
            assert_eq!(parse_duration(&text), Ok(d), "{text}");
        }
        _ => {
            let Some(bytes) = rest.first_chunk::<8>() else {
                return;
            };
            let size = ByteSize(u64::from_le_bytes(*bytes));
            let text = size.render();
            assert_eq!(ByteSize::parse_value(&text), Ok(size), "{text}");
        }
    }
});
