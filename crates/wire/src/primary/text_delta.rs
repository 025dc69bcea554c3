//! The text-delta payload in the one shape the upstream sends,
//! `{"content":"..."}`, read without the JSON reader. Most events of an answer
//! are such deltas, so the short path pays; every other payload, and every
//! string this path does not decode itself, is left to the reader.

use std::borrow::Cow;

/// The content of `{"content":"s"}`, exactly as the JSON reader gives it:
/// borrowed when `s` has no escapes, decoded when it has only the one-letter
/// ones. `None` for any other shape, and when `s` holds what only the reader
/// decodes (`\u` escapes) or refuses (a raw `"` or control character, a bad
/// escape, invalid UTF-8), so that it gives the value or the error.
pub(super) fn content(payload: &[u8]) -> Option<Cow<'_, str>> {
    let s = payload
        .strip_prefix(br#"{"content":""#)?
        .strip_suffix(br#""}"#)?;
    match find_special(s) {
        None => std::str::from_utf8(s).ok().map(Cow::Borrowed),
        Some(at) => unescape(s, at).map(Cow::Owned),
    }
}

/// Index of the first byte that a JSON string does not hold as itself.
fn find_special(s: &[u8]) -> Option<usize> {
    const LANES: usize = 16;
    let mut base = 0;
    for chunk in s.chunks_exact(LANES) {
        // No early exit inside a chunk, so the check vectorizes.
        if chunk.iter().fold(false, |hit, &b| hit | is_special(b)) {
            break;
        }
        base += LANES;
    }
    s[base..]
        .iter()
        .position(|&b| is_special(b))
        .map(|i| base + i)
}

fn is_special(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

/// `s` with its one-letter escapes decoded; `at` is its first special byte.
/// Each escape is ASCII and decodes to one ASCII byte, so the result is
/// valid UTF-8 exactly when `s` is.
fn unescape(s: &[u8], at: usize) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s;
    let mut next = Some(at);
    while let Some(i) = next {
        out.extend_from_slice(&rest[..i]);
        if rest[i] != b'\\' {
            return None;
        }
        out.push(match rest.get(i + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            _ => return None,
        });
        rest = &rest[i + 2..];
        next = find_special(rest);
    }
    out.extend_from_slice(rest);
    String::from_utf8(out).ok()
}
