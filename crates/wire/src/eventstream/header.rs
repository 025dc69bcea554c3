//! Event-stream headers: the typed value, and the byte layout of one header
//! (`name_len: u8`, name, `type: u8`, value) in both directions.
//!
//! Parsing checks every length against the bytes actually present, so a lying
//! length can only produce [`EventStreamError::InvalidHeader`], never a panic or
//! an out-of-bounds read.

use bytes::{BufMut, Bytes, BytesMut};

use super::EventStreamError;

const TYPE_BOOL_TRUE: u8 = 0;
const TYPE_BOOL_FALSE: u8 = 1;
const TYPE_BYTE: u8 = 2;
const TYPE_SHORT: u8 = 3;
const TYPE_INT: u8 = 4;
const TYPE_LONG: u8 = 5;
const TYPE_BYTE_ARRAY: u8 = 6;
pub(super) const TYPE_STRING: u8 = 7;
const TYPE_TIMESTAMP: u8 = 8;
const TYPE_UUID: u8 = 9;

/// Longest header name the format can carry (its length is one byte).
pub const MAX_HEADER_NAME: usize = u8::MAX as usize;
/// Longest byte-array or string value the format can carry (its length is a `u16`).
pub const MAX_HEADER_VALUE: usize = u16::MAX as usize;

/// One header value, with the ten wire types folded into nine variants
/// (types 0 and 1 are `Bool(true)` and `Bool(false)`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HeaderValue {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    ByteArray(Bytes),
    String(String),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

impl HeaderValue {
    /// The string, when this is a `String` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            HeaderValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The wire type code.
    fn type_code(&self) -> u8 {
        match self {
            HeaderValue::Bool(true) => TYPE_BOOL_TRUE,
            HeaderValue::Bool(false) => TYPE_BOOL_FALSE,
            HeaderValue::Byte(_) => TYPE_BYTE,
            HeaderValue::Short(_) => TYPE_SHORT,
            HeaderValue::Int(_) => TYPE_INT,
            HeaderValue::Long(_) => TYPE_LONG,
            HeaderValue::ByteArray(_) => TYPE_BYTE_ARRAY,
            HeaderValue::String(_) => TYPE_STRING,
            HeaderValue::Timestamp(_) => TYPE_TIMESTAMP,
            HeaderValue::Uuid(_) => TYPE_UUID,
        }
    }

    /// Bytes the value takes after its type byte.
    fn value_len(&self) -> usize {
        match self {
            HeaderValue::Bool(_) => 0,
            HeaderValue::Byte(_) => 1,
            HeaderValue::Short(_) => 2,
            HeaderValue::Int(_) => 4,
            HeaderValue::Long(_) | HeaderValue::Timestamp(_) => 8,
            HeaderValue::ByteArray(b) => 2 + b.len(),
            HeaderValue::String(s) => 2 + s.len(),
            HeaderValue::Uuid(_) => 16,
        }
    }
}

/// One named header of a frame.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    pub name: String,
    pub value: HeaderValue,
}

impl Header {
    pub fn new(name: impl Into<String>, value: HeaderValue) -> Self {
        Header {
            name: name.into(),
            value,
        }
    }

    /// A header with a string value, the only kind the semantic headers use.
    pub fn string(name: impl Into<String>, value: impl Into<String>) -> Self {
        Header::new(name, HeaderValue::String(value.into()))
    }

    /// Bytes this header takes on the wire.
    pub(super) fn encoded_len(&self) -> usize {
        1 + self.name.len() + 1 + self.value.value_len()
    }

    /// Whether the format can carry this header.
    pub(super) fn check(&self) -> Result<(), EventStreamError> {
        if self.name.is_empty() || self.name.len() > MAX_HEADER_NAME {
            return Err(EventStreamError::InvalidHeader(format!(
                "name {:?} must be 1 to {MAX_HEADER_NAME} bytes",
                self.name
            )));
        }
        let value_len = match &self.value {
            HeaderValue::ByteArray(b) => b.len(),
            HeaderValue::String(s) => s.len(),
            _ => 0,
        };
        if value_len > MAX_HEADER_VALUE {
            return Err(EventStreamError::InvalidHeader(format!(
                "value of {:?} is {value_len} bytes, above {MAX_HEADER_VALUE}",
                self.name
            )));
        }
        Ok(())
    }

    /// Appends the header's bytes. The caller has run [`Header::check`]; the
    /// length casts below are exact under that check.
    pub(super) fn write(&self, out: &mut BytesMut) {
        out.put_u8(self.name.len() as u8);
        out.put_slice(self.name.as_bytes());
        out.put_u8(self.value.type_code());
        match &self.value {
            HeaderValue::Bool(_) => {}
            HeaderValue::Byte(v) => out.put_i8(*v),
            HeaderValue::Short(v) => out.put_i16(*v),
            HeaderValue::Int(v) => out.put_i32(*v),
            HeaderValue::Long(v) | HeaderValue::Timestamp(v) => out.put_i64(*v),
            HeaderValue::ByteArray(b) => {
                out.put_u16(b.len() as u16);
                out.put_slice(b);
            }
            HeaderValue::String(s) => {
                out.put_u16(s.len() as u16);
                out.put_slice(s.as_bytes());
            }
            HeaderValue::Uuid(u) => out.put_slice(u),
        }
    }
}

/// Parses a whole headers block. Kiro frames carry three headers, so the
/// vector starts with room for four to avoid growing on the hot path.
pub(super) fn parse_headers(block: &[u8]) -> Result<Vec<Header>, EventStreamError> {
    let mut headers = Vec::with_capacity(4);
    let mut r = Reader {
        rest: block,
        index: 0,
    };
    while !r.rest.is_empty() {
        r.index = headers.len();
        headers.push(parse_one(&mut r)?);
    }
    Ok(headers)
}

fn parse_one(r: &mut Reader<'_>) -> Result<Header, EventStreamError> {
    let [name_len] = r.array("name length")?;
    if name_len == 0 {
        return Err(invalid(r.index, "empty name".to_owned()));
    }
    let name = text(r.take(usize::from(name_len), "name")?)
        .ok_or_else(|| invalid(r.index, "name is not UTF-8".to_owned()))?;
    let [type_code] = r.array("value type")?;
    let value = match type_code {
        TYPE_BOOL_TRUE => HeaderValue::Bool(true),
        TYPE_BOOL_FALSE => HeaderValue::Bool(false),
        TYPE_BYTE => HeaderValue::Byte(i8::from_be_bytes(r.array("byte value")?)),
        TYPE_SHORT => HeaderValue::Short(i16::from_be_bytes(r.array("short value")?)),
        TYPE_INT => HeaderValue::Int(i32::from_be_bytes(r.array("int value")?)),
        TYPE_LONG => HeaderValue::Long(i64::from_be_bytes(r.array("long value")?)),
        TYPE_BYTE_ARRAY => {
            let len = usize::from(u16::from_be_bytes(r.array("byte array length")?));
            HeaderValue::ByteArray(Bytes::copy_from_slice(r.take(len, "byte array")?))
        }
        TYPE_STRING => {
            let len = usize::from(u16::from_be_bytes(r.array("string length")?));
            HeaderValue::String(
                text(r.take(len, "string")?)
                    .ok_or_else(|| invalid(r.index, format!("value of {name:?} is not UTF-8")))?,
            )
        }
        TYPE_TIMESTAMP => HeaderValue::Timestamp(i64::from_be_bytes(r.array("timestamp value")?)),
        TYPE_UUID => HeaderValue::Uuid(r.array("uuid value")?),
        other => {
            return Err(invalid(
                r.index,
                format!("unknown value type {other} for {name:?}"),
            ))
        }
    };
    Ok(Header { name, value })
}

/// The bytes as an owned string, or `None` when they are not UTF-8. The names
/// and values `primary` sends on every frame are matched as constants first,
/// which skips UTF-8 validation on the hot path (a measurable share of the
/// decode time for ~100-byte frames).
fn text(bytes: &[u8]) -> Option<String> {
    let known = match bytes {
        b":message-type" => ":message-type",
        b":event-type" => ":event-type",
        b":content-type" => ":content-type",
        b":exception-type" => ":exception-type",
        b"event" => "event",
        b"application/json" => "application/json",
        b"assistantResponseEvent" => "assistantResponseEvent",
        b"toolUseEvent" => "toolUseEvent",
        _ => return std::str::from_utf8(bytes).ok().map(str::to_owned),
    };
    Some(known.to_owned())
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
