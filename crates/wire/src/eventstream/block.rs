//! A frame's headers block read in place: borrowed header views, the iterator
//! over a block, and the validation the decoder runs once per frame.
//!
//! Parsing checks every length against the bytes actually present, so a lying
//! length can only produce [`EventStreamError::InvalidHeader`], never a panic or
//! an out-of-bounds read. A block that passed [`validate`] parses again without
//! error, which is what lets [`Headers`] be an infallible iterator.

use bytes::Bytes;

use super::header::{
    TYPE_BOOL_FALSE, TYPE_BOOL_TRUE, TYPE_BYTE, TYPE_BYTE_ARRAY, TYPE_INT, TYPE_LONG, TYPE_SHORT,
    TYPE_STRING, TYPE_TIMESTAMP, TYPE_UUID,
};
use super::{EventStreamError, Header, HeaderValue};

/// A header value borrowed from a frame; the variants mirror [`HeaderValue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderValueRef<'a> {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    ByteArray(&'a [u8]),
    String(&'a str),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

impl<'a> HeaderValueRef<'a> {
    /// The string, when this is a `String` value.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            HeaderValueRef::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<HeaderValueRef<'_>> for HeaderValue {
    /// Copies the borrowed bytes (a string or byte array) into an owned value.
    fn from(value: HeaderValueRef<'_>) -> Self {
        match value {
            HeaderValueRef::Bool(v) => HeaderValue::Bool(v),
            HeaderValueRef::Byte(v) => HeaderValue::Byte(v),
            HeaderValueRef::Short(v) => HeaderValue::Short(v),
            HeaderValueRef::Int(v) => HeaderValue::Int(v),
            HeaderValueRef::Long(v) => HeaderValue::Long(v),
            HeaderValueRef::ByteArray(b) => HeaderValue::ByteArray(Bytes::copy_from_slice(b)),
            HeaderValueRef::String(s) => HeaderValue::String(s.to_owned()),
            HeaderValueRef::Timestamp(v) => HeaderValue::Timestamp(v),
            HeaderValueRef::Uuid(v) => HeaderValue::Uuid(v),
        }
    }
}

/// One header borrowed from a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HeaderRef<'a> {
    pub name: &'a str,
    pub value: HeaderValueRef<'a>,
}

impl From<HeaderRef<'_>> for Header {
    fn from(header: HeaderRef<'_>) -> Self {
        Header::new(header.name, header.value.into())
    }
}

/// The headers of a frame in wire order, borrowed (see [`super::Frame::headers`]).
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    reader: Reader<'a>,
}

impl<'a> Headers<'a> {
    /// Iterates a block that [`validate`] accepted.
    pub(super) fn new(block: &'a [u8]) -> Self {
        Headers {
            reader: Reader {
                rest: block,
                index: 0,
            },
        }
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = HeaderRef<'a>;

    fn next(&mut self) -> Option<HeaderRef<'a>> {
        if self.reader.rest.is_empty() {
            return None;
        }
        // Cannot fail on a validated block; were it to, stop rather than loop.
        let header = parse_one(&mut self.reader).ok();
        if header.is_none() {
            self.reader.rest = &[];
        }
        header
    }
}

/// Checks a whole headers block: every length, type code and UTF-8 text.
pub(super) fn validate(block: &[u8]) -> Result<(), EventStreamError> {
    let mut r = Reader {
        rest: block,
        index: 0,
    };
    while !r.rest.is_empty() {
        parse_one(&mut r)?;
        r.index += 1;
    }
    Ok(())
}

fn parse_one<'a>(r: &mut Reader<'a>) -> Result<HeaderRef<'a>, EventStreamError> {
    let [name_len] = r.array("name length")?;
    if name_len == 0 {
        return Err(invalid(r.index, "empty name".to_owned()));
    }
    let name = text(r.take(usize::from(name_len), "name")?)
        .ok_or_else(|| invalid(r.index, "name is not UTF-8".to_owned()))?;
    let [type_code] = r.array("value type")?;
    let value = match type_code {
        TYPE_BOOL_TRUE => HeaderValueRef::Bool(true),
        TYPE_BOOL_FALSE => HeaderValueRef::Bool(false),
        TYPE_BYTE => HeaderValueRef::Byte(i8::from_be_bytes(r.array("byte value")?)),
        TYPE_SHORT => HeaderValueRef::Short(i16::from_be_bytes(r.array("short value")?)),
        TYPE_INT => HeaderValueRef::Int(i32::from_be_bytes(r.array("int value")?)),
        TYPE_LONG => HeaderValueRef::Long(i64::from_be_bytes(r.array("long value")?)),
        TYPE_BYTE_ARRAY => {
            let len = usize::from(u16::from_be_bytes(r.array("byte array length")?));
            HeaderValueRef::ByteArray(r.take(len, "byte array")?)
        }
        TYPE_STRING => {
            let len = usize::from(u16::from_be_bytes(r.array("string length")?));
            HeaderValueRef::String(
                text(r.take(len, "string")?)
                    .ok_or_else(|| invalid(r.index, format!("value of {name:?} is not UTF-8")))?,
            )
        }
        TYPE_TIMESTAMP => {
            HeaderValueRef::Timestamp(i64::from_be_bytes(r.array("timestamp value")?))
        }
        TYPE_UUID => HeaderValueRef::Uuid(r.array("uuid value")?),
        other => {
            return Err(invalid(
                r.index,
                format!("unknown value type {other} for {name:?}"),
            ))
        }
    };
    Ok(HeaderRef { name, value })
}

/// The bytes as text, or `None` when they are not UTF-8. The names and values
/// `primary` sends on every frame are matched as constants first, which skips
/// UTF-8 validation on the hot path (every header is read at least twice: at
/// decode time and by `Frame::message`).
fn text(bytes: &[u8]) -> Option<&str> {
    let known = match bytes {
        b":message-type" => ":message-type",
        b":event-type" => ":event-type",
        b":content-type" => ":content-type",
        b":exception-type" => ":exception-type",
        b"event" => "event",
        b"application/json" => "application/json",
        b"assistantResponseEvent" => "assistantResponseEvent",
        b"toolUseEvent" => "toolUseEvent",
        _ => return std::str::from_utf8(bytes).ok(),
    };
    Some(known)
}

#[cold]
fn invalid(index: usize, why: String) -> EventStreamError {
    EventStreamError::InvalidHeader(format!("header {index}: {why}"))
}

#[cold]
#[inline(never)]
fn short(index: usize, what: &str, needed: usize, left: usize) -> EventStreamError {
    invalid(
        index,
        format!("{what} needs {needed} bytes but the headers block has {left} left"),
    )
}

/// A bounds-checked cursor over the headers block; `index` numbers the header
/// being read, for error messages.
#[derive(Debug, Clone)]
struct Reader<'a> {
    rest: &'a [u8],
    index: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], EventStreamError> {
        let Some((head, tail)) = self.rest.split_at_checked(n) else {
            return Err(short(self.index, what, n, self.rest.len()));
        };
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], EventStreamError> {
        let Some((head, tail)) = self.rest.split_first_chunk::<N>() else {
            return Err(short(self.index, what, N, self.rest.len()));
        };
        self.rest = tail;
        Ok(*head)
    }
}
