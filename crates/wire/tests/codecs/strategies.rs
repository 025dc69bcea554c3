//! Generators shared by the property tests.

use bytes::Bytes;
use proptest::prelude::*;
use wire::eventstream::{Frame, Header, HeaderValue};

/// Any header value the format can carry, of every type.
pub fn header_value() -> impl Strategy<Value = HeaderValue> {
    prop_oneof![
        any::<bool>().prop_map(HeaderValue::Bool),
        any::<i8>().prop_map(HeaderValue::Byte),
        any::<i16>().prop_map(HeaderValue::Short),
        any::<i32>().prop_map(HeaderValue::Int),
        any::<i64>().prop_map(HeaderValue::Long),
        proptest::collection::vec(any::<u8>(), 0..40)
            .prop_map(|v| HeaderValue::ByteArray(Bytes::from(v))),
        "\\PC{0,30}".prop_map(HeaderValue::String),
        any::<i64>().prop_map(HeaderValue::Timestamp),
        any::<[u8; 16]>().prop_map(HeaderValue::Uuid),
    ]
}

/// A header name of 1 to 255 bytes (any printable Unicode).
pub fn header_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[:a-z-]{1,20}",
        1 => "\\PC{1,80}".prop_filter("at most 255 bytes", |n| n.len() <= 255),
    ]
}

pub fn header() -> impl Strategy<Value = Header> {
    (header_name(), header_value()).prop_map(|(name, value)| Header { name, value })
}

/// A frame of 0 to 6 headers and a payload of up to 300 bytes.
pub fn frame() -> impl Strategy<Value = Frame> {
    (
        proptest::collection::vec(header(), 0..6),
        proptest::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(headers, payload)| Frame::try_new(&headers, payload).unwrap())
}

/// Owned copies of a frame's headers, in order (what the encoder takes).
pub fn owned_headers(frame: &Frame) -> Vec<Header> {
    frame.headers().map(Header::from).collect()
}

/// Splits `bytes` at the given cut points (any values; reduced modulo the
/// length, sorted), so chunks may be empty and may cut anywhere.
pub fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}
