//! A decoded frame (headers block and payload, both shared with the read
//! buffer, and where its semantic headers sit in the block) and its typed view
//! by `:message-type`.

use std::fmt;

use bytes::{Bytes, BytesMut};

use super::block::{
    slot_bytes, slot_text, validate, HeaderValueRef, Headers, RawHeaders, Semantic, Slot,
};
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
#[derive(Clone, Default)]
pub struct Frame {
    /// The raw headers block. Private: it is validated whenever a frame is
    /// built, which is what makes reading it infallible.
    headers: Bytes,
    pub payload: Bytes,
    /// Where the semantic headers are in `headers`, noted by the validation
    /// (so it is a function of `headers`, and left out of equality).
    semantic: Semantic,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Self) -> bool {
        self.headers == other.headers && self.payload == other.payload
    }
}

impl Eq for Frame {}

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
        // The same validation the decoder runs: it cannot refuse what the
        // checks above let through, and it notes the semantic headers.
        let semantic = validate(&block)?;
        Ok(Frame {
            headers: block.freeze(),
            payload: payload.into(),
            semantic,
        })
    }

    /// A frame around a headers block that `block::validate` accepted, with
    /// what it found.
    pub(super) fn from_validated(headers: Bytes, payload: Bytes, semantic: Semantic) -> Self {
        Frame {
            headers,
            payload,
            semantic,
        }
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

    /// Reads the semantic headers where the validation found them (no scan,
    /// no allocation). Errors when `:message-type` or the header its kind
    /// requires is missing or not a string, or when the kind is unknown.
    pub fn message(&self) -> Result<Message<'_>, EventStreamError> {
        let found = &self.semantic;
        // The kind is matched as bytes: only an unknown one becomes text.
        match self.required_bytes(MESSAGE_TYPE, found.message_type)? {
            b"event" => Ok(Message::Event {
                event_type: self.required_str(EVENT_TYPE, found.event_type)?,
                payload: &self.payload,
            }),
            b"exception" => Ok(Message::Exception {
                exception_type: self.required_str(EXCEPTION_TYPE, found.exception_type)?,
                payload: &self.payload,
            }),
            b"error" => Ok(Message::Error {
                code: self.required_str(ERROR_CODE, found.error_code)?,
                message: self
                    .optional_str(ERROR_MESSAGE, found.error_message)?
                    .unwrap_or_default(),
            }),
            other => Err(EventStreamError::UnknownMessageType(
                String::from_utf8_lossy(other).into_owned(),
            )),
        }
    }

    /// The bytes of a string header's value (validated UTF-8), or the errors
    /// of [`Frame::required_str`].
    fn required_bytes(&self, name: &'static str, slot: Slot) -> Result<&[u8], EventStreamError> {
        match slot {
            Slot::Absent => Err(EventStreamError::MissingHeader(name)),
            Slot::NotString => Err(EventStreamError::HeaderNotString(name)),
            Slot::Text { start, len } => slot_bytes(&self.headers, start, len)
                // Cannot happen: the slot came from validating this block.
                .ok_or(EventStreamError::HeaderNotString(name)),
        }
    }

    fn required_str(&self, name: &'static str, slot: Slot) -> Result<&str, EventStreamError> {
        self.optional_str(name, slot)?
            .ok_or(EventStreamError::MissingHeader(name))
    }

    fn optional_str(
        &self,
        name: &'static str,
        slot: Slot,
    ) -> Result<Option<&str>, EventStreamError> {
        match slot {
            Slot::Absent => Ok(None),
            Slot::Text { start, len } => match slot_text(&self.headers, start, len) {
                Some(text) => Ok(Some(text)),
                // Cannot happen: the slot came from validating this block.
                None => Err(EventStreamError::HeaderNotString(name)),
            },
            Slot::NotString => Err(EventStreamError::HeaderNotString(name)),
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
