//! Hand-written JSON pieces for the streaming hot path: a string literal
//! escaped exactly as `serde_json` escapes it (so output is byte-identical to
//! serializing the same value), and integers via `itoa`.

use bytes::{BufMut, BytesMut};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Repeats a byte in every lane of a u64.
const fn lanes(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Whether any byte of the word is a control character, `"` or `\`.
///
/// Classic SWAR tests: `(x - 0x01..) & !x & 0x80..` is non-zero exactly when
/// some byte of `x` is zero, and `(x - n..) & !x & 0x80..` when some byte is
/// below `n` (for `n <= 0x80`).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const HIGH: u64 = lanes(0x80);
    const ONE: u64 = lanes(0x01);
    let control = w.wrapping_sub(lanes(0x20)) & !w;
    let quote = w ^ lanes(b'"');
    let quote = quote.wrapping_sub(ONE) & !quote;
    let backslash = w ^ lanes(b'\\');
    let backslash = backslash.wrapping_sub(ONE) & !backslash;
    (control | quote | backslash) & HIGH != 0
}

#[inline]
fn byte_needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Appends `s` as a JSON string literal, quotes included.
pub(crate) fn write_str(out: &mut BytesMut, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.put_u8(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Skip clean 8-byte words quickly; most text has nothing to escape.
        // A word that needs escaping is then scanned byte by byte in full.
        let end = match bytes.get(i..i + 8) {
            Some(word) => {
                let mut lane = [0u8; 8];
                lane.copy_from_slice(word);
                if !word_needs_escape(u64::from_ne_bytes(lane)) {
                    i += 8;
                    continue;
                }
                i + 8
            }
            None => bytes.len(),
        };
        while i < end {
            let b = bytes[i];
            if byte_needs_escape(b) {
                out.extend_from_slice(&bytes[start..i]);
                write_escape(out, b);
                start = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.put_u8(b'"');
}

fn write_escape(out: &mut BytesMut, b: u8) {
    match b {
        b'"' => out.put_slice(b"\\\""),
        b'\\' => out.put_slice(b"\\\\"),
        b'\n' => out.put_slice(b"\\n"),
        b'\r' => out.put_slice(b"\\r"),
        b'\t' => out.put_slice(b"\\t"),
        0x08 => out.put_slice(b"\\b"),
        0x0c => out.put_slice(b"\\f"),
        _ => out.put_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0x0f)],
        ]),
    }
}

/// Appends an unsigned integer.
pub(crate) fn write_u64(out: &mut BytesMut, n: u64) {
    let mut buf = itoa::Buffer::new();
    out.put_slice(buf.format(n).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = BytesMut::new();
        write_str(&mut out, s);
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn escapes_exactly_like_serde_json() {
        let mut all_controls = String::new();
        for b in 0u8..0x20 {
            all_controls.push(char::from(b));
        }
        let cases = [
            "",
            "plain ascii text that is longer than eight bytes",
            "quote \" and backslash \\ inside",
            "\"\\\"\\",
            "line\nbreak\r\ttab\u{8}\u{c}",
            all_controls.as_str(),
            "emoji 🎉 and CJK 漢字 and \u{2028} and \u{7f} and /slash/",
            "12345678\"12345678\\1234567\n",
        ];
        for case in cases {
            assert_eq!(
                escaped(case),
                serde_json::to_string(case).unwrap(),
                "{case:?}"
            );
        }
        // every single char position relative to the 8-byte words
        for pad in 0..17 {
            for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', ' ', 'é'] {
                let s = format!("{}{special}{}", "a".repeat(pad), "b".repeat(17 - pad));
                assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap());
            }
        }
    }

    #[test]
    fn word_test_agrees_with_byte_test() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut lane = [b'a'; 8];
                lane[pos] = b;
                assert_eq!(
                    word_needs_escape(u64::from_ne_bytes(lane)),
                    byte_needs_escape(b),
                    "byte {b:#x} at {pos}"
                );
            }
        }
    }
}
