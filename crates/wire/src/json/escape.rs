//! Fast JSON string literals, byte-identical to `serde_json`'s, and numbers.
//!
//! `serde_json` escapes a string one byte at a time; text-heavy bodies (the
//! `primary` request's prompt, every streamed delta) spend most of their
//! serialization there. [`write_str`] skips clean 8-byte words at once (SWAR)
//! and escapes exactly as `serde_json` does: `\"`, `\\`, `\b`, `\f`, `\n`,
//! `\r`, `\t`, other control bytes as `\u00xx`, everything else (non-ASCII
//! included) as is. [`serialize_str`] brings the same scan to serde-derived
//! types through `#[serde(serialize_with)]`; [`write_uint`] appends numbers.

use bytes::BufMut;
use serde::Serializer;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Strings shorter than this go through `serde_json` itself in
/// [`serialize_str`]: the raw-value detour only pays for longer text.
const RAW_MIN_LEN: usize = 128;

/// Appends an unsigned integer in decimal (`itoa`, as `serde_json` writes it).
pub fn write_uint<B: BufMut>(out: &mut B, n: impl itoa::Integer) {
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends `s` as a JSON string literal, quotes included.
pub fn write_str<B: BufMut>(out: &mut B, s: &str) {
    let bytes = s.as_bytes();
    out.put_u8(b'"');
    // `start..` is the run not yet copied; clean 8-byte words only extend it,
    // a word with flags is walked flag by flag.
    let mut start = 0;
    let mut offset = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mut flags = escape_flags(u64::from_le_bytes(word));
        while flags != 0 {
            // Borrows in the flag arithmetic only spill into bytes above a
            // true hit, so the lowest flag (little-endian: the first byte) is
            // exact; the byte is checked again before escaping.
            let at = offset + (flags.trailing_zeros() / 8) as usize;
            flags &= flags - 1;
            let b = bytes.get(at).copied().unwrap_or_default();
            if needs_escape(b) {
                out.put_slice(bytes.get(start..at).unwrap_or_default());
                write_escape(out, b);
                start = at + 1;
            }
        }
        offset += 8;
    }
    for (k, &b) in chunks.remainder().iter().enumerate() {
        if needs_escape(b) {
            let at = offset + k;
            out.put_slice(bytes.get(start..at).unwrap_or_default());
            write_escape(out, b);
            start = at + 1;
        }
    }
    out.put_slice(bytes.get(start..).unwrap_or_default());
    out.put_u8(b'"');
}

/// `#[serde(serialize_with = "wire::json::serialize_str")]` for fields that
/// may hold long text: the literal is escaped by [`write_str`] and handed to
/// `serde_json`'s serializer to be written as it is ([`RawJson`]). Short
/// strings get the plain `serialize_str`.
pub fn serialize_str<S: Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    if value.len() < RAW_MIN_LEN {
        return serializer.serialize_str(value);
    }
    let mut literal = Vec::with_capacity(value.len() + value.len() / 16 + 2);
    write_str(&mut literal, value);
    // Escaping keeps UTF-8 intact, so this check passes; falling back
    // costs nothing but speed.
    match std::str::from_utf8(&literal) {
        Ok(literal) => serde::Serialize::serialize(&RawJson(literal), serializer),
        Err(_) => serializer.serialize_str(value),
    }
}

/// JSON text that `serde_json`'s serializers write as it is: what
/// `serde_json::value::RawValue` serializes as, without the parse with which
/// `RawValue::from_string` checks its text first. That check cost as much
/// as the escaping it followed (about 3 instructions a byte; the `primary`
/// request's 1.5 KB prompt paid about 6,000 a request), and [`write_str`]'s
/// literals are valid JSON by construction (its tests compare them with
/// `serde_json`'s byte for byte). `serde_json` recognises the value by a
/// struct name it keeps private; `raw_json_is_written_as_it_is` fails if
/// that name ever changes.
struct RawJson<'a>(&'a str);

/// The struct and field name `serde_json` gives a raw value.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl serde::Serialize for RawJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut raw = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(RAW_VALUE_TOKEN, self.0)?;
        raw.end()
    }
}

/// [`serialize_str`] for `Option<String>` fields (`None` is `null`).
pub fn serialize_opt_str<S: Serializer>(
    value: &Option<String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    struct Fast<'a>(&'a str);
    impl serde::Serialize for Fast<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serialize_str(self.0, serializer)
        }
    }
    match value {
        Some(text) => serializer.serialize_some(&Fast(text)),
        None => serializer.serialize_none(),
    }
}

/// High bit set in each byte of `x` that is `"`, `\` or below 0x20 (and
/// possibly in bytes above such a byte: see [`write_str`]).
fn escape_flags(x: u64) -> u64 {
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn write_escape<B: BufMut>(out: &mut B, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.put_slice(b"\\\""),
        b'\\' => out.put_slice(b"\\\\"),
        b'\n' => out.put_slice(b"\\n"),
        b'\r' => out.put_slice(b"\\r"),
        b'\t' => out.put_slice(b"\\t"),
        0x08 => out.put_slice(b"\\b"),
        0x0c => out.put_slice(b"\\f"),
        _ => {
            out.put_slice(b"\\u00");
            out.put_u8(HEX[usize::from(b >> 4)]);
            out.put_u8(HEX[usize::from(b & 0x0f)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn literal(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[derive(serde::Serialize)]
    struct Field<'a> {
        #[serde(serialize_with = "serialize_str")]
        text: &'a str,
    }

    #[derive(serde::Serialize)]
    struct OptField {
        #[serde(serialize_with = "serialize_opt_str")]
        text: Option<String>,
    }

    #[test]
    fn raw_json_is_written_as_it_is() {
        // What `serde_json::value::RawValue` does, by the same private name:
        // into text, and into a `Value` (which parses it).
        let raw = RawJson(r#"{"a":[1,"x\n"]}"#);
        assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"a":[1,"x\n"]}"#);
        assert_eq!(
            serde_json::to_value(&raw).unwrap(),
            serde_json::json!({"a": [1, "x\n"]})
        );
        let reference = serde_json::value::RawValue::from_string("[true]".to_owned()).unwrap();
        assert_eq!(
            serde_json::to_string(&RawJson("[true]")).unwrap(),
            serde_json::to_string(&reference).unwrap()
        );
    }

    #[test]
    fn writes_numbers() {
        let mut out = Vec::new();
        write_uint(&mut out, 0u32);
        out.put_u8(b',');
        write_uint(&mut out, u32::MAX);
        out.put_u8(b',');
        write_uint(&mut out, u64::MAX);
        assert_eq!(&out[..], b"0,4294967295,18446744073709551615");
    }

    #[test]
    fn optional_fields_serialize_as_serde_json_would() {
        let long = "y\"".repeat(100);
        for text in [None, Some("short".to_owned()), Some(long)] {
            let ours = serde_json::to_string(&OptField { text: text.clone() }).unwrap();
            let plain = serde_json::to_string(&serde_json::json!({ "text": text })).unwrap();
            assert_eq!(ours, plain);
        }
    }

    #[test]
    fn escapes_like_serde_json() {
        for s in [
            "",
            "plain",
            "quote \" and backslash \\",
            "lines\nand\ttabs\r",
            "\u{0}\u{1}\u{8}\u{c}\u{1f}\u{7f}",
            "non-ASCII: é ü 日本 🦀",
            "exactly8",
            "\"\"\"\"\"\"\"\"\"",
        ] {
            assert_eq!(literal(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn finds_escapes_at_every_offset_of_a_word() {
        for at in 0..24 {
            for special in ['"', '\\', '\n', '\u{1}'] {
                let mut s = "a".repeat(24);
                s.replace_range(at..=at, &special.to_string());
                assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
            }
        }
    }

    #[test]
    fn long_fields_serialize_as_serde_json_would() {
        let long = format!("{}\"quoted\"\n{}", "x".repeat(200), "é".repeat(100));
        for text in ["short \" one", long.as_str()] {
            let ours = serde_json::to_string(&Field { text }).unwrap();
            let plain = serde_json::to_string(&serde_json::json!({ "text": text })).unwrap();
            assert_eq!(ours, plain);
            let pretty = serde_json::to_string_pretty(&Field { text }).unwrap();
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&pretty).unwrap()["text"],
                text
            );
        }
    }

    proptest! {
        #[test]
        fn any_string_escapes_like_serde_json(s in any::<String>()) {
            prop_assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
            let long = s.repeat(1 + RAW_MIN_LEN / (s.len() + 1));
            let ours = serde_json::to_string(&Field { text: &long }).unwrap();
            prop_assert_eq!(ours, serde_json::to_string(&serde_json::json!({ "text": long })).unwrap());
        }
    }
}
