//! A frame's headers block read in place: borrowed header views, the iterators
//! over a block, and the validation the decoder runs once per frame.
//!
//! `split_one` cuts one header (lengths and type code) and checks every length
//! against the bytes actually present, so a lying length can only produce
//! [`EventStreamError::InvalidHeader`], never a panic or an out-of-bounds read.
//! [`validate`] adds the UTF-8 checks and, in the same pass, notes where the
//! semantic headers are ([`Semantic`]); a block it accepted cuts and converts
//! again without error, which is what lets [`Headers`] and [`RawHeaders`] be
//! infallible iterators and `Frame::message` read its headers without a scan.

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
    raw: RawHeaders<'a>,
}

impl<'a> Headers<'a> {
    /// Iterates a block that [`validate`] accepted.
    pub(super) fn new(block: &'a [u8]) -> Self {
        Headers {
            raw: RawHeaders::new(block),
        }
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = HeaderRef<'a>;

    fn next(&mut self) -> Option<HeaderRef<'a>> {
        // `view` cannot fail on a validated block; were it to, stop there.
        let view = self.raw.next()?.view();
        if view.is_none() {
            self.raw.reader.rest = &[];
        }
        view
    }
}

/// Checks a whole headers block: every length, type code and UTF-8 text; and,
/// in the same pass, notes where the first of each semantic header is, so
/// that `Frame::message` need not walk the block again.
pub(super) fn validate(block: &[u8]) -> Result<Semantic, EventStreamError> {
    let mut r = Reader {
        rest: block,
        index: 0,
    };
    // What makes the `u32` offsets of `Semantic` exact; the decoder's blocks
    // are shorter by construction, so only a hand-built frame could be refused.
    if u32::try_from(block.len()).is_err() {
        return Err(invalid(0, "headers block longer than 4 GiB".to_owned()));
    }
    let mut found = Semantic::default();
    while !r.rest.is_empty() {
        let header = split_one(&mut r)?;
        header.check_text(r.index)?;
        // The value ends where the unread rest begins.
        let end = block.len() - r.rest.len();
        found.note(header, end);
        r.index += 1;
    }
    Ok(found)
}

/// The last headers block [`validate`] accepted, and what it found there.
///
/// A stream sends the same block on every frame of one event type (the same
/// `:event-type`, `:content-type` and `:message-type`, byte for byte), so a
/// block equal to the last one is accepted without walking it again: one
/// compare of a few dozen bytes instead of the cuts, UTF-8 checks and name
/// matches of every header (about 480 instructions a frame on `primary`'s
/// three-header blocks). Equal bytes validate to the same result, so this
/// changes no outcome; a refused block is never kept.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockMemo {
    block: Vec<u8>,
    semantic: Semantic,
}

impl BlockMemo {
    /// Longer blocks are validated every time (a block of the upstreams seen
    /// so far is under 100 bytes); this bounds what the memo holds.
    const MAX_KEPT: usize = 256;

    /// [`validate`], or the last result when `block` is the last block.
    pub(super) fn validate(&mut self, block: &[u8]) -> Result<Semantic, EventStreamError> {
        // The empty memo stands for the empty block, whose result is the
        // default `Semantic` it holds.
        if self.block == block {
            return Ok(self.semantic);
        }
        let semantic = validate(block)?;
        if block.len() <= Self::MAX_KEPT {
            self.block.clear();
            self.block.extend_from_slice(block);
            self.semantic = semantic;
        }
        Ok(semantic)
    }
}

/// Where the first occurrence of each header `Frame::message` may need sits in
/// the headers block (first one wins, as in `Frame::header`). Built only by
/// [`validate`], so a [`Slot::Text`] always spans UTF-8 within the block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Semantic {
    pub(super) message_type: Slot,
    pub(super) event_type: Slot,
    pub(super) exception_type: Slot,
    pub(super) error_code: Slot,
    pub(super) error_message: Slot,
}

/// One semantic header as [`validate`] found it. Eight bytes: offsets are
/// `u32` (a frame's `total_length` is one) and a value's length is a `u16`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Slot {
    #[default]
    Absent,
    /// Present, but its value is not a string.
    NotString,
    /// A string value: `len` bytes of the block from `start`.
    Text { start: u32, len: u16 },
}

impl Semantic {
    /// Records `header`, whose value ends at `end` in the block, if it is the
    /// first one of a semantic name.
    #[inline(always)]
    fn note(&mut self, header: RawHeader<'_>, end: usize) {
        // Dispatch on the length, then compare fixed-size arrays: inline
        // word compares rather than a `memcmp` per candidate name.
        let name = header.name;
        let slot = match name.len() {
            11 if is(name, b":event-type") => &mut self.event_type,
            11 if is(name, b":error-code") => &mut self.error_code,
            13 if is(name, b":message-type") => &mut self.message_type,
            14 if is(name, b":error-message") => &mut self.error_message,
            15 if is(name, b":exception-type") => &mut self.exception_type,
            _ => return,
        };
        if *slot != Slot::Absent {
            return;
        }
        *slot = match header.type_code {
            TYPE_STRING => {
                // Both fit: `validate` refused blocks past `u32::MAX` and a
                // string's length is a `u16` on the wire.
                let (Ok(start), Ok(len)) = (
                    u32::try_from(end - header.value.len()),
                    u16::try_from(header.value.len()),
                ) else {
                    return;
                };
                Slot::Text { start, len }
            }
            _ => Slot::NotString,
        };
    }
}

/// Whether `name` is `want`, compared as a fixed-size array.
#[inline(always)]
fn is<const N: usize>(name: &[u8], want: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(name).is_ok_and(|name| name == want)
}

/// The text of a [`Slot::Text`] of a block that [`validate`] accepted; `None`
/// only if the slot did not come from this block.
pub(super) fn slot_text(block: &[u8], start: u32, len: u16) -> Option<&str> {
    text(slot_bytes(block, start, len)?)
}

/// The bytes of a [`Slot::Text`], not converted.
pub(super) fn slot_bytes(block: &[u8], start: u32, len: u16) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    block.get(start..start + usize::from(len))
}

/// One header cut into its parts, the value not yet interpreted: what
/// [`validate`] checks and `Frame::header` scans, comparing names as bytes and
/// converting only the value it needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawHeader<'a> {
    pub(super) name: &'a [u8],
    type_code: u8,
    /// The value's bytes, without the length prefix of strings and byte arrays.
    value: &'a [u8],
}

impl<'a> RawHeader<'a> {
    /// The typed value; `None` only for a string that is not UTF-8 (or a
    /// header that `split_one` did not cut).
    pub(super) fn value(&self) -> Option<HeaderValueRef<'a>> {
        // `split_one` cut fixed-size values to their exact size, so the
        // array conversions cannot fail.
        let v = self.value;
        Some(match self.type_code {
            TYPE_BOOL_TRUE => HeaderValueRef::Bool(true),
            TYPE_BOOL_FALSE => HeaderValueRef::Bool(false),
            TYPE_BYTE => HeaderValueRef::Byte(i8::from_be_bytes(v.try_into().ok()?)),
            TYPE_SHORT => HeaderValueRef::Short(i16::from_be_bytes(v.try_into().ok()?)),
            TYPE_INT => HeaderValueRef::Int(i32::from_be_bytes(v.try_into().ok()?)),
            TYPE_LONG => HeaderValueRef::Long(i64::from_be_bytes(v.try_into().ok()?)),
            TYPE_BYTE_ARRAY => HeaderValueRef::ByteArray(v),
            TYPE_STRING => HeaderValueRef::String(text(v)?),
            TYPE_TIMESTAMP => HeaderValueRef::Timestamp(i64::from_be_bytes(v.try_into().ok()?)),
            TYPE_UUID => HeaderValueRef::Uuid(v.try_into().ok()?),
            _ => return None,
        })
    }

    /// Checks that the name and a string value are UTF-8, which is all that
    /// [`RawHeader::view`] can still fail on; `index` numbers the header in
    /// error messages.
    fn check_text(&self, index: usize) -> Result<(), EventStreamError> {
        if !is_text(self.name) {
            return Err(invalid(index, "name is not UTF-8".to_owned()));
        }
        if self.type_code == TYPE_STRING && !is_text(self.value) {
            let name = String::from_utf8_lossy(self.name);
            return Err(invalid(index, format!("value of {name:?} is not UTF-8")));
        }
        Ok(())
    }

    /// Name and value as text and typed value; fails only where
    /// [`RawHeader::check_text`] would.
    fn view(&self) -> Option<HeaderRef<'a>> {
        Some(HeaderRef {
            name: text(self.name)?,
            value: self.value()?,
        })
    }
}

/// The headers of a validated block, cut but not interpreted.
#[derive(Debug, Clone)]
pub(super) struct RawHeaders<'a> {
    reader: Reader<'a>,
}

impl<'a> RawHeaders<'a> {
    pub(super) fn new(block: &'a [u8]) -> Self {
        RawHeaders {
            reader: Reader {
                rest: block,
                index: 0,
            },
        }
    }
}

impl<'a> Iterator for RawHeaders<'a> {
    type Item = RawHeader<'a>;

    // Inlined, like `split_one`: in the scan `Frame::message` used to make, a
    // call was ~8% of the instructions per frame (measured on 138-byte frames).
    #[inline(always)]
    fn next(&mut self) -> Option<RawHeader<'a>> {
        if self.reader.rest.is_empty() {
            return None;
        }
        // Cannot fail on a validated block; were it to, stop rather than loop.
        let raw = split_one(&mut self.reader).ok();
        if raw.is_none() {
            self.reader.rest = &[];
        }
        raw
    }
}

/// Cuts one header off the block, checking its lengths and type code.
/// Inlined into its two hot callers (`validate`, `RawHeaders::next`): the
/// call and its result copy were ~10% of the instructions per frame.
#[inline(always)]
fn split_one<'a>(r: &mut Reader<'a>) -> Result<RawHeader<'a>, EventStreamError> {
    let [name_len] = r.array("name length")?;
    if name_len == 0 {
        return Err(invalid(r.index, "empty name".to_owned()));
    }
    let name = r.take(usize::from(name_len), "name")?;
    let [type_code] = r.array("value type")?;
    let value = match type_code {
        TYPE_BOOL_TRUE | TYPE_BOOL_FALSE => &[],
        TYPE_BYTE => r.take(1, "byte value")?,
        TYPE_SHORT => r.take(2, "short value")?,
        TYPE_INT => r.take(4, "int value")?,
        TYPE_LONG => r.take(8, "long value")?,
        TYPE_BYTE_ARRAY => {
            let len = usize::from(u16::from_be_bytes(r.array("byte array length")?));
            r.take(len, "byte array")?
        }
        TYPE_STRING => {
            let len = usize::from(u16::from_be_bytes(r.array("string length")?));
            r.take(len, "string")?
        }
        TYPE_TIMESTAMP => r.take(8, "timestamp value")?,
        TYPE_UUID => r.take(16, "uuid value")?,
        other => {
            return Err(invalid(
                r.index,
                format!(
                    "unknown value type {other} for {:?}",
                    String::from_utf8_lossy(name)
                ),
            ))
        }
    };
    Ok(RawHeader {
        name,
        type_code,
        value,
    })
}

/// The bytes as text, or `None` when they are not UTF-8. The names and values
/// `primary` sends on every frame are matched as constants first: the block
/// was validated already, and this skips a second UTF-8 pass on the hot path
/// (`Frame::message`, through [`slot_text`]).
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

/// Whether the bytes are UTF-8, without building a `&str` (ASCII, the common
/// case, is checked a word at a time).
fn is_text(bytes: &[u8]) -> bool {
    bytes.is_ascii() || std::str::from_utf8(bytes).is_ok()
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
