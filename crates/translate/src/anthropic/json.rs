//! Hand-written JSON for the streaming hot path: string literals and numbers
//! appended straight to the output buffer.
//!
//! Escapes match `serde_json` byte for byte (`\"`, `\\`, `\b`, `\f`, `\n`,
//! `\r`, `\t`, other control bytes as `\u00xx`; everything else, including
//! non-ASCII, as is), so hand-written events and serde-rendered bodies agree.
//! The scan for bytes that need escaping looks at 8 bytes per step.

use bytes::{BufMut, BytesMut};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Appends `s` as a JSON string literal, quotes included.
pub(crate) fn write_str(out: &mut BytesMut, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.put_u8(b'"');
    // `start..` is the run not yet copied; clean 8-byte words only extend it,
    // a word with flags is walked byte by byte.
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
            // exact; the bytes are checked again before escaping.
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

/// Appends `n` in decimal.
pub(crate) fn write_u32(out: &mut BytesMut, n: u32) {
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// High bit set in each byte of `x` that is `"`, `\` or below 0x20.
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

fn write_escape(out: &mut BytesMut, b: u8) {
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
        let mut out = BytesMut::new();
        write_str(&mut out, s);
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn escapes_like_serde_json() {
        for s in [
            "",
            "plain",
            "quote \" and backslash \\",
            "lines\nand\r\ttabs\u{8}\u{c}",
            "\u{0}\u{1}\u{1f}\u{7f}",
            "emoji 🦀 and ünïcödé",
            "\"\"\"\"\"\"\"\"\"",
            "12345678\"12345678\\",
        ] {
            assert_eq!(literal(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn finds_escapes_at_every_offset_of_a_word() {
        for at in 0..24 {
            for special in ['"', '\\', '\n', '\u{1}'] {
                let s = format!("{}{special}{}", "a".repeat(at), "é".repeat(8));
                assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
            }
        }
    }

    #[test]
    fn writes_numbers() {
        let mut out = BytesMut::new();
        write_u32(&mut out, 0);
        out.put_u8(b',');
        write_u32(&mut out, u32::MAX);
        assert_eq!(&out[..], b"0,4294967295");
    }

    proptest! {
        #[test]
        fn any_string_matches_serde_json(s in any::<String>()) {
            prop_assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn ascii_heavy_strings_match_serde_json(s in "[ -~\\n\\t\"\\\\\u{0}-\u{1f}]{0,64}") {
            prop_assert_eq!(literal(&s), serde_json::to_string(&s).unwrap());
        }
    }
}
