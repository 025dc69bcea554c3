//! A decoded frame and its typed view by `:message-type`.

use bytes::Bytes;

use super::{EventStreamError, Header, HeaderValue};

/// Names of the semantic headers, as the format spells them.
pub const MESSAGE_TYPE: &str = ":message-type";
pub const EVENT_TYPE: &str = ":event-type";
pub const EXCEPTION_TYPE: &str = ":exception-type";
pub const CONTENT_TYPE: &str = ":content-type";
pub const ERROR_CODE: &str = ":error-code";
pub const ERROR_MESSAGE: &str = ":error-message";

/// One whole, checksum-verified frame. The payload shares the decoder's buffer
/// (no copy).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    pub headers: Vec<Header>,
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
    /// The value of the first header with this name. The format gives header
    /// order no meaning and does not forbid repeats; the first one wins.
    pub fn header(&self, name: &str) -> Option<&HeaderValue> {
        self.headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| &h.value)
    }

    /// The value of the named header when it is a string; `None` when absent or
    /// of another type.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(HeaderValue::as_str)
    }

    /// Reads the semantic headers. Errors when `:message-type` or the header its
    /// kind requires is missing or not a string, or when the kind is unknown.
    pub fn message(&self) -> Result<Message<'_>, EventStreamError> {
        match self.required_str(MESSAGE_TYPE)? {
            "event" => Ok(Message::Event {
                event_type: self.required_str(EVENT_TYPE)?,
                payload: &self.payload,
            }),
            "exception" => Ok(Message::Exception {
                exception_type: self.required_str(EXCEPTION_TYPE)?,
                payload: &self.payload,
            }),
            "error" => Ok(Message::Error {
                code: self.required_str(ERROR_CODE)?,
                message: self.optional_str(ERROR_MESSAGE)?.unwrap_or_default(),
            }),
            other => Err(EventStreamError::UnknownMessageType(other.to_owned())),
        }
    }

    fn required_str(&self, name: &'static str) -> Result<&str, EventStreamError> {
        self.optional_str(name)?
            .ok_or(EventStreamError::MissingHeader(name))
    }

    fn optional_str(&self, name: &'static str) -> Result<Option<&str>, EventStreamError> {
        match self.header(name) {
            None => Ok(None),
            Some(HeaderValue::String(s)) => Ok(Some(s)),
            Some(_) => Err(EventStreamError::HeaderNotString(name)),
        }
    }
}
