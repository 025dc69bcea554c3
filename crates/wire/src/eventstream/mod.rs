//! The AWS event-stream frame codec (`application/vnd.amazon.eventstream`), the
//! framing of every `primary` upstream response.
//!
//! A frame is a 12-byte prelude (`total_length`, `headers_length`, prelude
//! CRC32), typed headers, a payload and a CRC32 of everything before it; all
//! integers are big-endian. [`Decoder`] turns a byte stream into verified
//! [`Frame`]s whose headers block and payload share the read buffer;
//! [`Frame::headers`] and [`Frame::message`] read them in place as borrowed
//! views ([`HeaderRef`], [`Message`]) without allocating, and the `encode*`
//! functions write frames from owned [`Header`]s (for the simulator and tests).
//!
//! Layout: `header` (owned headers, type codes, writing one header), `block`
//! (reading a headers block: validation and borrowed views), `frame` (the
//! frame and its typed view), `decode`, `encode`, `error`.

mod block;
mod decode;
mod encode;
mod error;
mod frame;
mod header;

pub use block::{HeaderRef, HeaderValueRef, Headers};
pub use decode::Decoder;
pub use encode::{
    encode, encode_error, encode_event, encode_exception, try_encode, ENCODING_ERROR_CODE,
};
pub use error::EventStreamError;
pub use frame::{
    Frame, Message, CONTENT_TYPE, ERROR_CODE, ERROR_MESSAGE, EVENT_TYPE, EXCEPTION_TYPE,
    MESSAGE_TYPE,
};
pub use header::{Header, HeaderValue, MAX_HEADER_NAME, MAX_HEADER_VALUE};

/// Default limit on a frame's `total_length`: the format's 24 MiB payload and
/// 128 KiB headers limits plus the 16 bytes of overhead. The format tells
/// clients not to enforce the service limits; this one only bounds memory.
pub const DEFAULT_MAX_FRAME: usize = 24 * 1024 * 1024 + 128 * 1024 + OVERHEAD;

/// Prelude size: `total_length`, `headers_length`, prelude CRC.
const PRELUDE_LEN: usize = 12;
/// Prelude plus the trailing message CRC.
const OVERHEAD: usize = PRELUDE_LEN + 4;

#[cfg(test)]
mod tests;
