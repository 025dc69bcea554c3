//! Fast JSON string literals, byte-identical to `serde_json`'s, and numbers.
//!
//! `serde_json` escapes a string one byte at a time; text-heavy bodies (the
//! `primary` request's prompt, every streamed delta) spend most of their
//! serialization there. [`write_str`] looks at 16 bytes at once (as two
//! 8-byte words, SWAR), copies the clean runs whole, and escapes
//! exactly as `serde_json` does: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
//! other control bytes as `\u00xx`, everything else (non-ASCII included) as
//! is. [`serialize_str`] brings the same scan to serde-derived types through
//! `#[serde(serialize_with)]`; [`write_uint`] appends numbers.

use bytes::BufMut;
use serde::Serializer;

/// Strings shorter than this go through `serde_json` itself in
/// [`serialize_str`]: the raw-value detour only pays for longer text.
const RAW_MIN_LEN: usize = 128;

/// Bytes looked at in one step of the scan.
const BLOCK: usize = 16;

/// Appends an unsigned integer in decimal (`itoa`, as `serde_json` writes it).
pub fn write_uint<B: BufMut>(out: &mut B, n: impl itoa::Integer) {
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends `s` as a JSON string literal, quotes included.
pub fn write_str<B: BufMut>(out: &mut B, s: &str) {
    write_literal(&mut Buf(out), s);
}

/// Appends the concatenation of `parts` as one JSON string literal, quotes
/// included, without joining them first (an answer's text parts, say).
pub fn write_str_parts<'s, B: BufMut>(out: &mut B, parts: impl IntoIterator<Item = &'s str>) {
    let mut sink = Buf(out);
    sink.put("\"");
    for part in parts {
        write_escaped(&mut sink, part);
    }
    sink.put("\"");
}

/// Appends `s` escaped as inside a JSON string literal, without the quotes
/// (a literal written from pieces, `super::pieces`).
pub(crate) fn write_escaped_into<B: BufMut>(out: &mut B, s: &str) {
    write_escaped(&mut Buf(out), s);
}

/// Where [`write_literal`] writes: runs of the input and escapes, all whole
/// `str`s, so a `String` can take them without a UTF-8 check.
trait Sink {
    fn put(&mut self, text: &str);
}

struct Buf<'a, B>(&'a mut B);

impl<B: BufMut> Sink for Buf<'_, B> {
    fn put(&mut self, text: &str) {
        self.0.put_slice(text.as_bytes());
    }
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// Writes `s` as a JSON string literal, quotes included.
fn write_literal<S: Sink>(out: &mut S, s: &str) {
    out.put("\"");
    write_escaped(out, s);
    out.put("\"");
}

/// Appends `s` escaped as inside a JSON string literal, without the quotes
/// (for literals assembled from pieces, `super::pieces`).
pub(crate) fn escape_into(out: &mut String, s: &str) {
    write_escaped(out, s);
}

/// Writes `s` escaped, without quotes: clean runs as they are, each byte
/// that needs it escaped. Every byte that needs escaping is ASCII, so the
/// runs between them are whole `str`s.
fn write_escaped<S: Sink>(out: &mut S, s: &str) {
    let bytes = s.as_bytes();
    // `start..` is the run not yet written.
    let mut start = 0;
    let mut offset = 0;
    let mut blocks = bytes.chunks_exact(BLOCK);
    for block in &mut blocks {
        let mut bytes_of_block = [0u8; BLOCK];
        bytes_of_block.copy_from_slice(block);
        let mut candidates = escape_candidates(&bytes_of_block);
        while candidates != 0 {
            let at = offset + candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            start = escape_at(out, s, start, at);
        }
        offset += BLOCK;
    }
    for k in 0..blocks.remainder().len() {
        start = escape_at(out, s, start, offset + k);
    }
    out.put(s.get(start..).unwrap_or_default());
}

/// If the byte at `at` needs escaping: writes the run `start..at` and the
/// escape, and returns where the next run starts; else returns `start`.
fn escape_at<S: Sink>(out: &mut S, s: &str, start: usize, at: usize) -> usize {
    match s.as_bytes().get(at).copied().and_then(escape_of) {
        Some(escape) => {
            out.put(s.get(start..at).unwrap_or_default());
            out.put(escape);
            at + 1
        }
        None => start,
    }
}

/// Bit `i` set when byte `i` of `block` may need escaping (`"`, `\\` or
/// below 0x20), from two 8-byte words at a time (SWAR): every byte that
/// needs it is flagged, and possibly bytes above one in the same word
/// (borrows of the arithmetic only spill upwards), so each flag is checked
/// again by [`escape_at`]. A clean block, the common case, costs about 30
/// instructions.
fn escape_candidates(block: &[u8; BLOCK]) -> u32 {
    let (low, high) = halves(block);
    let (low, high) = (word_flags(low), word_flags(high));
    if low | high == 0 {
        return 0;
    }
    gather(low >> 7) | (gather(high >> 7) << 8)
}

/// The high bit of each byte of `x` that is `"`, `\\` or below 0x20 (and
/// possibly of bytes above such a byte).
fn word_flags(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

/// Bit 0 of each byte of `word` (the others clear) gathered into the low 8
/// bits, byte `i` to bit `i`: the product puts bit `8i` at bit `56 + i`, and
/// every other partial product lands below bit 56 on a bit of its own (no
/// carries).
fn gather(word: u64) -> u32 {
    (word.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// A block as two little-endian words, first bytes in `low`.
fn halves(block: &[u8; BLOCK]) -> (u64, u64) {
    let mut low = [0u8; 8];
    let mut high = [0u8; 8];
    low.copy_from_slice(&block[..8]);
    high.copy_from_slice(&block[8..]);
    (u64::from_le_bytes(low), u64::from_le_bytes(high))
}

/// How `serde_json` writes byte `b` inside a string literal, when not as is.
fn escape_of(b: u8) -> Option<&'static str> {
    /// `\u00xx` for every control byte, with the short forms where JSON has one.
    const CONTROL: [&str; 0x20] = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    match b {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        _ => CONTROL.get(usize::from(b)).copied(),
    }
}

/// `#[serde(serialize_with = "wire::json::serialize_str")]` for fields that
/// may hold long text: the literal is escaped by the scan of [`write_str`]
/// and handed to `serde_json`'s serializer to be written as it is
/// ([`RawJson`]). Short strings get the plain `serialize_str`.
pub fn serialize_str<S: Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    if value.len() < RAW_MIN_LEN {
        return serializer.serialize_str(value);
    }
    serialize_literal(serializer, value.len(), |literal| {
        write_escaped(literal, value)
    })
}

/// Serializes, as one JSON string, the text `write` escapes into the
/// literal (about `len` bytes before escaping), handed to `serde_json` as it
/// is ([`RawJson`]).
pub(crate) fn serialize_literal<S: Serializer>(
    serializer: S,
    len: usize,
    write: impl FnOnce(&mut String),
) -> Result<S::Ok, S::Error> {
    // Room for the quotes and an escape every eighth byte: prompts are
    // dense with line breaks, and with a sixteenth the literal was often
    // grown (and copied) once or twice.
    let mut literal = String::with_capacity(len + len / 8 + 16);
    literal.push('"');
    write(&mut literal);
    literal.push('"');
    serde::Serialize::serialize(&RawJson(&literal), serializer)
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
        for at in 0..40 {
            for special in ['"', '\\', '\n', '\u{1}'] {
                let mut s = "a".repeat(40);
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

    /// The bytes of `block` that need escaping, one bit each.
    fn exact(block: &[u8; BLOCK]) -> u32 {
        (0..BLOCK)
            .filter(|&i| escape_of(block[i]).is_some())
            .fold(0, |mask, i| mask | 1 << i)
    }

    proptest! {
        #[test]
        fn candidates_cover_every_byte_to_escape(
            block in prop::array::uniform16(prop_oneof![
                any::<u8>(),
                Just(b'"'), Just(b'\\'), Just(0x1f), Just(0x20), Just(0), Just(0x80), Just(0xff),
            ])
        ) {
            let wanted = exact(&block);
            // May flag more, never less.
            prop_assert_eq!(escape_candidates(&block) & wanted, wanted);
        }

        #[test]
        fn any_string_escapes_like_serde_json(s in any::<String>()) {
            prop_assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
            let long = s.repeat(1 + RAW_MIN_LEN / (s.len() + 1));
            let ours = serde_json::to_string(&Field { text: &long }).unwrap();
            prop_assert_eq!(ours, serde_json::to_string(&serde_json::json!({ "text": long })).unwrap());
        }
    }
}
