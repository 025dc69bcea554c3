//! The frame encoder (used by the simulator, the tests and the benches).
//!
//! [`try_encode`] refuses headers the format cannot carry (empty or over-long
//! names, values over 65,535 bytes, frames over 4 GiB). The infallible
//! [`encode`] family never writes a malformed frame: where `try_encode` would
//! fail, it writes an `error` frame (`:error-code FrameEncodingError`) naming the
//! problem instead, so the receiver sees a typed failure rather than a silently
//! missing or corrupted frame.

use bytes::{BufMut, BytesMut};

use super::frame::{
    CONTENT_TYPE, ERROR_CODE, ERROR_MESSAGE, EVENT_TYPE, EXCEPTION_TYPE, MESSAGE_TYPE,
};
use super::header::{checked_len, MAX_HEADER_NAME, MAX_HEADER_VALUE, TYPE_STRING};
use super::{EventStreamError, Header, OVERHEAD};

/// `:error-code` of the frame written in place of one that cannot be encoded.
pub const ENCODING_ERROR_CODE: &str = "FrameEncodingError";

const JSON: &str = "application/json";

/// Appends one frame, or errors (writing nothing) when a header or the total
/// size is outside what the format can carry.
pub fn try_encode(
    headers: &[Header],
    payload: &[u8],
    out: &mut BytesMut,
) -> Result<(), EventStreamError> {
    let headers_len = checked_len(headers)?;
    write_frame(headers_len, payload, out, |out| {
        for header in headers {
            header.write(out);
        }
    })
}

/// Appends one frame. See the module doc for what happens when the headers
/// cannot be encoded.
pub fn encode(headers: &[Header], payload: &[u8], out: &mut BytesMut) {
    if let Err(err) = try_encode(headers, payload, out) {
        encode_error(ENCODING_ERROR_CODE, &err.to_string(), out);
    }
}

/// Appends an event frame with the headers `:event-type`, `:content-type:
/// application/json`, `:message-type: event`, in that order.
pub fn encode_event(event_type: &str, payload: &[u8], out: &mut BytesMut) {
    let headers = [
        (EVENT_TYPE, event_type),
        (CONTENT_TYPE, JSON),
        (MESSAGE_TYPE, "event"),
    ];
    if let Err(err) = encode_strings(&headers, payload, out) {
        encode_error(ENCODING_ERROR_CODE, &err.to_string(), out);
    }
}

/// Appends an exception frame: `:message-type: exception`, `:exception-type`,
/// `:content-type: application/json`.
pub fn encode_exception(exception_type: &str, payload: &[u8], out: &mut BytesMut) {
    let headers = [
        (MESSAGE_TYPE, "exception"),
        (EXCEPTION_TYPE, exception_type),
        (CONTENT_TYPE, JSON),
    ];
    if let Err(err) = encode_strings(&headers, payload, out) {
        encode_error(ENCODING_ERROR_CODE, &err.to_string(), out);
    }
}

/// Appends an error frame: `:message-type: error`, `:error-code`,
/// `:error-message`, no payload. A code or message over 65,535 bytes is cut at
/// the last character boundary that fits (they are human-readable text).
pub fn encode_error(code: &str, message: &str, out: &mut BytesMut) {
    let headers = [
        (MESSAGE_TYPE, "error"),
        (ERROR_CODE, clip(code, MAX_HEADER_VALUE)),
        (ERROR_MESSAGE, clip(message, MAX_HEADER_VALUE)),
    ];
    // Every name is a short constant and every value fits after `clip`, and the
    // frame is far below 4 GiB, so this cannot fail; were it to, writing nothing
    // is the only option that does not recurse.
    let _ = encode_strings(&headers, &[], out);
}

/// Encodes string-valued headers without building `Header`s (no allocation).
fn encode_strings(
    headers: &[(&str, &str)],
    payload: &[u8],
    out: &mut BytesMut,
) -> Result<(), EventStreamError> {
    let mut headers_len = 0usize;
    for (name, value) in headers {
        if name.is_empty() || name.len() > MAX_HEADER_NAME || value.len() > MAX_HEADER_VALUE {
            // Reuse the owned path's checks for the error text.
            Header::string(*name, *value).check()?;
        }
        headers_len += 1 + name.len() + 1 + 2 + value.len();
    }
    write_frame(headers_len, payload, out, |out| {
        for (name, value) in headers {
            // Lengths checked above.
            out.put_u8(name.len() as u8);
            out.put_slice(name.as_bytes());
            out.put_u8(TYPE_STRING);
            out.put_u16(value.len() as u16);
            out.put_slice(value.as_bytes());
        }
    })
}

/// Writes prelude, headers (via `write_headers`, which must write exactly
/// `headers_len` bytes), payload and both CRCs.
fn write_frame(
    headers_len: usize,
    payload: &[u8],
    out: &mut BytesMut,
    write_headers: impl FnOnce(&mut BytesMut),
) -> Result<(), EventStreamError> {
    let max = u32::MAX as usize;
    let total_len = headers_len
        .checked_add(payload.len())
        .and_then(|n| n.checked_add(OVERHEAD))
        .filter(|&n| n <= max)
        .ok_or(EventStreamError::FrameTooLarge {
            len: headers_len
                .saturating_add(payload.len())
                .saturating_add(OVERHEAD),
            max,
        })?;
    out.reserve(total_len);
    let start = out.len();
    // Both fit in u32: headers_len < total_len <= u32::MAX.
    out.put_u32(total_len as u32);
    out.put_u32(headers_len as u32);
    let prelude_crc = crc32fast::hash(&out[start..]);
    out.put_u32(prelude_crc);
    write_headers(out);
    out.put_slice(payload);
    let message_crc = crc32fast::hash(&out[start..]);
    out.put_u32(message_crc);
    Ok(())
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default()
}
