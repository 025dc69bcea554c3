//! A decoded frame (headers block and payload, both shared with the read
//! buffer) and its typed view by `:message-type`.

use std::fmt;

use bytes::{Bytes, BytesMut};

use super::block::{HeaderValueRef, Headers, RawHeader, RawHeaders};
use super::header::checked_len;
use super::{EventStreamError, Header};

/// Names of the semantic headers, as the format spells them.
pub const MESSAGE_TYPE: &str = ":message-type";
pub const EVENT_TYPE: &str = ":event-type";
pub const EXCEPTION_TYPE: &str = ":exception-type";
pub const CONTENT_TYPE: &str = ":content-type";
pub const ERROR_CODE: &str = ":error-code";
pub const ERROR_MESSAGE: &str = ":error-message";

/// One whole, checksum-verified frame. The headers block and the payload share
/// the decoder's buffer (no copy); headers are read in place, so reading them
/// allocates nothing. Two frames are equal when their headers (in order) and
/// payloads are.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// The raw headers block. Private: it is validated whenever a frame is
    /// built, which is what makes reading it infallible.
    headers: Bytes,
    pub payload: Bytes,
}

/// What a frame means, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    /// `:message-type event`; `event_type` is `:event-type` (e.g. `assistantResponseEvent`).
    Event {
        event_type: &'a str,
        payload: &'a [u8],
    },
    /// `:message-type exception`; a modeled error sent after the HTTP 200.
    Exception {
        exception_type: &'a str,
        payload: &'a [u8],
    },
    /// `:message-type error`; an unmodeled error. A missing `:error-message`
    /// reads as `""` so the code still reaches the caller.
    Error { code: &'a str, message: &'a str },
}

impl Frame {
    /// A frame of these headers and payload (for tests, tools and relays; the
    /// decoder builds its frames in place). Errors when a header cannot be
    /// encoded, as [`super::try_encode`] would.
    pub fn try_new(
        headers: &[Header],
        payload: impl Into<Bytes>,
    ) -> Result<Self, EventStreamError> {
        let mut block = BytesMut::with_capacity(checked_len(headers)?);
        for header in headers {
            header.write(&mut block);
        }
        Ok(Frame {
            headers: block.freeze(),
            payload: payload.into(),
        })
    }

    /// A frame around a headers block that `block::validate` accepted.
    pub(super) fn from_validated(headers: Bytes, payload: Bytes) -> Self {
        Frame { headers, payload }
    }

    /// The headers in wire order, borrowed from the frame. Convert one with
    /// `Header::from` when an owned copy is needed.
    pub fn headers(&self) -> Headers<'_> {
        Headers::new(&self.headers)
    }

    /// The value of the first header with this name. The format gives header
    /// order no meaning and does not forbid repeats; the first one wins.
    pub fn header(&self, name: &str) -> Option<HeaderValueRef<'_>> {
        // Names compared as bytes: only the match's value is converted.
        RawHeaders::new(&self.headers)
            .find(|h| h.name == name.as_bytes())
            .and_then(|h| h.value())
    }

    /// The value of the named header when it is a string; `None` when absent or
    /// of another type.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| v.as_str())
    }

    /// Reads the semantic headers (one pass over the block, no allocation).
    /// Errors when `:message-type` or the header its kind requires is missing
    /// or not a string, or when the kind is unknown.
    pub fn message(&self) -> Result<Message<'_>, EventStreamError> {
        let found = Semantic::find(RawHeaders::new(&self.headers));
        match required_str(MESSAGE_TYPE, found.message_type)? {
            "event" => Ok(Message::Event {
                event_type: required_str(EVENT_TYPE, found.event_type)?,
                payload: &self.payload,
            }),
            "exception" => Ok(Message::Exception {
                exception_type: required_str(EXCEPTION_TYPE, found.exception_type)?,
                payload: &self.payload,
            }),
            "error" => Ok(Message::Error {
                code: required_str(ERROR_CODE, found.error_code)?,
                message: optional_str(ERROR_MESSAGE, found.error_message)?.unwrap_or_default(),
            }),
            other => Err(EventStreamError::UnknownMessageType(other.to_owned())),
        }
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("headers", &DebugHeaders(self))
            .field("payload", &self.payload)
            .finish()
    }
}

/// The headers as a list of views rather than raw bytes.
struct DebugHeaders<'a>(&'a Frame);

impl fmt::Debug for DebugHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.headers()).finish()
    }
}

/// The first value of each header [`Frame::message`] may need.
#[derive(Default)]
struct Semantic<'a> {
    message_type: Option<RawHeader<'a>>,
    event_type: Option<RawHeader<'a>>,
    exception_type: Option<RawHeader<'a>>,
    error_code: Option<RawHeader<'a>>,
    error_message: Option<RawHeader<'a>>,
}

impl<'a> Semantic<'a> {
    /// Names are compared as bytes and no value is interpreted yet: most
    /// headers of a frame are not needed.
    fn find(headers: RawHeaders<'a>) -> Self {
        let mut found = Semantic::default();
        for h in headers {
            let slot = match h.name {
                n if n == MESSAGE_TYPE.as_bytes() => &mut found.message_type,
                n if n == EVENT_TYPE.as_bytes() => &mut found.event_type,
                n if n == EXCEPTION_TYPE.as_bytes() => &mut found.exception_type,
                n if n == ERROR_CODE.as_bytes() => &mut found.error_code,
                n if n == ERROR_MESSAGE.as_bytes() => &mut found.error_message,
                _ => continue,
            };
            // First one wins, as in `Frame::header`.
            slot.get_or_insert(h);
        }
        found
    }
}

fn required_str<'a>(
    name: &'static str,
    header: Option<RawHeader<'a>>,
) -> Result<&'a str, EventStreamError> {
    optional_str(name, header)?.ok_or(EventStreamError::MissingHeader(name))
}

fn optional_str<'a>(
    name: &'static str,
    header: Option<RawHeader<'a>>,
) -> Result<Option<&'a str>, EventStreamError> {
    let Some(header) = header else {
        return Ok(None);
    };
    match header.value() {
        Some(HeaderValueRef::String(s)) => Ok(Some(s)),
        // `None` cannot happen on a validated block.
        _ => Err(EventStreamError::HeaderNotString(name)),
    }
}
