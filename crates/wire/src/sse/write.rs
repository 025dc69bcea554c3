//! SSE writers for the gateway's responses, appending straight to the output
//! buffer (no intermediate `String`).
//!
//! SSE has no escaping, so a line break inside a value would end the line
//! early. The writers keep every output well formed: `data` and comment text
//! containing line breaks become one field line per line (a parser joins `data`
//! lines back with `"\n"`, so LF-separated data round-trips exactly; CR and
//! CR LF come back as LF), and an event name, which must be one line, has each
//! CR or LF written as a space. JSON from `serde_json` never contains a raw
//! line break, so the common case is one `data:` line.

use bytes::{BufMut, BytesMut};

/// The end-of-stream marker of the chat-completions format.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// Appends `data: <data>\n\n` (one `data:` line per line of `data`).
pub fn write_data(out: &mut BytesMut, data: &[u8]) {
    out.reserve(data.len() + 8);
    write_lines(out, b"data: ", data);
    out.put_u8(b'\n');
}

/// Appends `event: <event>\ndata: <data>\n\n`.
pub fn write_event(out: &mut BytesMut, event: &str, data: &[u8]) {
    out.reserve(event.len() + data.len() + 16);
    out.put_slice(b"event: ");
    let mut rest = event.as_bytes();
    while let Some(at) = memchr::memchr2(b'\n', b'\r', rest) {
        out.put_slice(rest.get(..at).unwrap_or_default());
        out.put_u8(b' ');
        rest = rest.get(at + 1..).unwrap_or_default();
    }
    out.put_slice(rest);
    out.put_u8(b'\n');
    write_data(out, data);
}

/// Appends `: <text>\n\n`, a comment (used as keep-alive); parsers ignore it.
pub fn write_comment(out: &mut BytesMut, text: &str) {
    write_lines(out, b": ", text.as_bytes());
    out.put_u8(b'\n');
}

/// Writes `prefix + line + "\n"` for each line of `value` (split at CR LF, LF
/// or CR); an empty value gives one line.
fn write_lines(out: &mut BytesMut, prefix: &[u8], value: &[u8]) {
    let mut rest = value;
    loop {
        out.put_slice(prefix);
        let Some(at) = memchr::memchr2(b'\n', b'\r', rest) else {
            out.put_slice(rest);
            out.put_u8(b'\n');
            return;
        };
        out.put_slice(rest.get(..at).unwrap_or_default());
        out.put_u8(b'\n');
        let skip = if rest.get(at..at + 2) == Some(b"\r\n") {
            2
        } else {
            1
        };
        rest = rest.get(at + skip..).unwrap_or_default();
    }
}
