//! Owned event-stream headers (for encoding, and for building frames in tests),
//! the wire type codes, and the byte layout of one header (`name_len: u8`,
//! name, `type: u8`, value) on the writing side; `block` reads it back.

use bytes::{BufMut, Bytes, BytesMut};

use super::EventStreamError;

pub(super) const TYPE_BOOL_TRUE: u8 = 0;
pub(super) const TYPE_BOOL_FALSE: u8 = 1;
pub(super) const TYPE_BYTE: u8 = 2;
pub(super) const TYPE_SHORT: u8 = 3;
pub(super) const TYPE_INT: u8 = 4;
pub(super) const TYPE_LONG: u8 = 5;
pub(super) const TYPE_BYTE_ARRAY: u8 = 6;
pub(super) const TYPE_STRING: u8 = 7;
pub(super) const TYPE_TIMESTAMP: u8 = 8;
pub(super) const TYPE_UUID: u8 = 9;

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

/// Checks every header and returns the bytes they take on the wire together.
pub(super) fn checked_len(headers: &[Header]) -> Result<usize, EventStreamError> {
    let mut len = 0usize;
    for header in headers {
        header.check()?;
        len += header.encoded_len();
    }
    Ok(len)
}
