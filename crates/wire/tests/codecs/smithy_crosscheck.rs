//! Cross-check against the AWS SDK's codec (`aws-smithy-eventstream`): frames
//! it writes decode identically with ours, frames we write decode identically
//! with its decoder, and both encoders produce the same bytes.

use aws_smithy_eventstream::frame::{
    read_message_from, write_message_to, DecodedFrame, MessageFrameDecoder,
};
use aws_smithy_types::event_stream::{
    Header as SdkHeader, HeaderValue as SdkValue, Message as SdkMessage,
};
use aws_smithy_types::str_bytes::StrBytes;
use aws_smithy_types::DateTime;
use bytes::BytesMut;
use proptest::prelude::*;
use wire::eventstream::{
    encode_event, encode_exception, try_encode, Decoder, Frame, Header, HeaderValue, Message,
};

use crate::strategies::{chunks, frame, owned_headers};

fn to_sdk_value(value: &HeaderValue) -> SdkValue {
    match value {
        HeaderValue::Bool(v) => SdkValue::Bool(*v),
        HeaderValue::Byte(v) => SdkValue::Byte(*v),
        HeaderValue::Short(v) => SdkValue::Int16(*v),
        HeaderValue::Int(v) => SdkValue::Int32(*v),
        HeaderValue::Long(v) => SdkValue::Int64(*v),
        HeaderValue::ByteArray(v) => SdkValue::ByteArray(v.clone()),
        HeaderValue::String(v) => SdkValue::String(StrBytes::from(v.clone())),
        HeaderValue::Timestamp(ms) => SdkValue::Timestamp(DateTime::from_millis(*ms)),
        HeaderValue::Uuid(v) => SdkValue::Uuid(u128::from_be_bytes(*v)),
    }
}

fn from_sdk_value(value: &SdkValue) -> HeaderValue {
    match value {
        SdkValue::Bool(v) => HeaderValue::Bool(*v),
        SdkValue::Byte(v) => HeaderValue::Byte(*v),
        SdkValue::Int16(v) => HeaderValue::Short(*v),
        SdkValue::Int32(v) => HeaderValue::Int(*v),
        SdkValue::Int64(v) => HeaderValue::Long(*v),
        SdkValue::ByteArray(v) => HeaderValue::ByteArray(v.clone()),
        SdkValue::String(v) => HeaderValue::String(v.as_str().to_owned()),
        SdkValue::Timestamp(t) => HeaderValue::Timestamp(t.to_millis().unwrap()),
        SdkValue::Uuid(v) => HeaderValue::Uuid(v.to_be_bytes()),
        other => panic!("value type unknown to this test: {other:?}"),
    }
}

fn to_sdk(frame: &Frame) -> SdkMessage {
    let headers = owned_headers(frame)
        .iter()
        .map(|h| SdkHeader::new(h.name.clone(), to_sdk_value(&h.value)))
        .collect();
    SdkMessage::new_from_parts(headers, frame.payload.clone())
}

fn from_sdk(message: &SdkMessage) -> Frame {
    let headers: Vec<Header> = message
        .headers()
        .iter()
        .map(|h| Header::new(h.name().as_str(), from_sdk_value(h.value())))
        .collect();
    Frame::try_new(&headers, message.payload().clone()).unwrap()
}

fn sdk_write(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::new();
    write_message_to(&to_sdk(frame), &mut out).unwrap();
    out
}

fn ours_write(frame: &Frame) -> BytesMut {
    let mut out = BytesMut::new();
    try_encode(&owned_headers(frame), &frame.payload, &mut out).unwrap();
    out
}

#[test]
fn sdk_decodes_our_kiro_frames() {
    let mut out = BytesMut::new();
    encode_event("assistantResponseEvent", br#"{"content":"Hi"}"#, &mut out);
    let message = read_message_from(&out[..]).unwrap();
    assert_eq!(message.payload().as_ref(), br#"{"content":"Hi"}"#);
    let names: Vec<&str> = message
        .headers()
        .iter()
        .map(|h| h.name().as_str())
        .collect();
    assert_eq!(names, [":event-type", ":content-type", ":message-type"]);

    let mut out = BytesMut::new();
    encode_exception(
        "ThrottlingException",
        br#"{"message":"slow down"}"#,
        &mut out,
    );
    let message = read_message_from(&out[..]).unwrap();
    let exception = message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == ":exception-type")
        .unwrap();
    assert_eq!(
        exception.value().as_string().unwrap().as_str(),
        "ThrottlingException"
    );
}

#[test]
fn we_decode_sdk_frames_by_message_type() {
    let message = SdkMessage::new(&br#"{"message":"boom"}"#[..])
        .add_header(SdkHeader::new(
            ":message-type",
            SdkValue::String("exception".into()),
        ))
        .add_header(SdkHeader::new(
            ":exception-type",
            SdkValue::String("internalServerException".into()),
        ));
    let mut bytes = Vec::new();
    write_message_to(&message, &mut bytes).unwrap();
    let frame = Decoder::new()
        .decode(&mut BytesMut::from(&bytes[..]))
        .unwrap()
        .unwrap();
    assert_eq!(
        frame.message().unwrap(),
        Message::Exception {
            exception_type: "internalServerException",
            payload: br#"{"message":"boom"}"#,
        }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn both_encoders_write_the_same_bytes(f in frame()) {
        prop_assert_eq!(&ours_write(&f)[..], &sdk_write(&f)[..]);
    }

    #[test]
    fn sdk_frames_decode_identically_with_ours(
        frames in proptest::collection::vec(frame(), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut stream = Vec::new();
        for f in &frames {
            stream.extend_from_slice(&sdk_write(f));
        }
        let mut decoder = Decoder::new();
        let mut buf = BytesMut::new();
        let mut decoded = Vec::new();
        for piece in chunks(&stream, &cuts) {
            buf.extend_from_slice(piece);
            while let Some(f) = decoder.decode(&mut buf).unwrap() {
                decoded.push(f);
            }
        }
        prop_assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
        prop_assert_eq!(decoded, frames);
    }

    #[test]
    fn our_frames_decode_identically_with_the_sdk(
        frames in proptest::collection::vec(frame(), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut stream = BytesMut::new();
        for f in &frames {
            try_encode(&owned_headers(f), &f.payload, &mut stream).unwrap();
        }
        let mut decoder = MessageFrameDecoder::new();
        let mut buf = BytesMut::new();
        let mut decoded = Vec::new();
        for piece in chunks(&stream, &cuts) {
            buf.extend_from_slice(piece);
            while let DecodedFrame::Complete(m) = decoder.decode_frame(&mut buf).unwrap() {
                decoded.push(from_sdk(&m));
            }
        }
        prop_assert!(buf.is_empty());
        prop_assert_eq!(decoded, frames);
    }

    /// Where the two decoders disagree on damaged input, both must still
    /// refuse it: a frame one accepts and the other rejects would be a bug in
    /// one of them. (Ours also rejects empty header names, which the SDK
    /// accepts but the format forbids, so those are generated nowhere.)
    #[test]
    fn damaged_frames_rejected_by_both(
        f in frame(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = ours_write(&f);
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        let sdk = read_message_from(&bytes[..]);
        let ours = Decoder::new().decode_eof(&mut bytes.clone());
        prop_assert!(sdk.is_err(), "SDK accepted damaged frame");
        prop_assert!(ours.is_err(), "we accepted damaged frame");
    }
}
