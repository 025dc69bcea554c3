use bytes::{BufMut, Bytes, BytesMut};

use super::*;

/// The 124-byte event frame of upstream-protocols.md section 1.6.
const EVENT_VECTOR: &str = "
    00 00 00 7c 00 00 00 5c 3b dd cf 78 0b 3a 65 76 65 6e 74 2d 74 79 70 65 07 00 16 61 73 73
    69 73 74 61 6e 74 52 65 73 70 6f 6e 73 65 45 76 65 6e 74 0d 3a 63 6f 6e 74 65 6e 74 2d 74
    79 70 65 07 00 10 61 70 70 6c 69 63 61 74 69 6f 6e 2f 6a 73 6f 6e 0d 3a 6d 65 73 73 61 67
    65 2d 74 79 70 65 07 00 05 65 76 65 6e 74 7b 22 63 6f 6e 74 65 6e 74 22 3a 22 48 69 22 7d
    b0 2b ab dc";

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

fn be(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// A frame around raw header bytes, with correct lengths and CRCs.
fn raw_frame(headers: &[u8], payload: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    out.put_u32((16 + headers.len() + payload.len()) as u32);
    out.put_u32(headers.len() as u32);
    out.put_u32(crc32fast::hash(&out[..8]));
    out.put_slice(headers);
    out.put_slice(payload);
    out.put_u32(crc32fast::hash(&out));
    out
}

/// A 12-byte prelude with a correct CRC and arbitrary lengths.
fn prelude(total: u32, headers: u32) -> BytesMut {
    let mut out = BytesMut::new();
    out.put_u32(total);
    out.put_u32(headers);
    out.put_u32(crc32fast::hash(&out[..8]));
    out
}

fn decode_one(bytes: &[u8]) -> Result<Option<Frame>, EventStreamError> {
    Decoder::new().decode_eof(&mut BytesMut::from(bytes))
}

/// Owned copies of a frame's headers, in order.
fn owned(frame: &Frame) -> Vec<Header> {
    frame.headers().map(Header::from).collect()
}

fn frame_of(headers: &[Header]) -> Frame {
    Frame::try_new(headers, Bytes::new()).unwrap()
}

#[test]
fn vector_empty_headers() {
    let mut out = BytesMut::new();
    encode(&[], br#"{"foo": "bar"}"#, &mut out);
    assert_eq!(out.len(), 30);
    assert_eq!(be(&out, 0), 30);
    assert_eq!(be(&out, 4), 0);
    assert_eq!(be(&out, 8), 0xBAF2_F68A);
    assert_eq!(&out[12..26], br#"{"foo": "bar"}"#);
    assert_eq!(be(&out, 26), 0xAE72_58E4);

    let frame = decode_one(&out).unwrap().unwrap();
    assert_eq!(frame.headers().next(), None);
    assert_eq!(&frame.payload[..], br#"{"foo": "bar"}"#);
    assert_eq!(
        frame.message(),
        Err(EventStreamError::MissingHeader(MESSAGE_TYPE))
    );
}

#[test]
fn vector_event_frame_byte_for_byte() {
    let expected = hex(EVENT_VECTOR);
    let mut out = BytesMut::new();
    encode_event("assistantResponseEvent", br#"{"content":"Hi"}"#, &mut out);
    assert_eq!(&out[..], &expected[..]);

    // The generic encoder with the same headers gives the same bytes.
    let headers = [
        Header::string(EVENT_TYPE, "assistantResponseEvent"),
        Header::string(CONTENT_TYPE, "application/json"),
        Header::string(MESSAGE_TYPE, "event"),
    ];
    let mut generic = BytesMut::new();
    encode(&headers, br#"{"content":"Hi"}"#, &mut generic);
    assert_eq!(&generic[..], &expected[..]);

    let frame = decode_one(&expected).unwrap().unwrap();
    assert_eq!(owned(&frame), headers);
    assert_eq!(
        frame,
        Frame::try_new(&headers, &br#"{"content":"Hi"}"#[..]).unwrap()
    );
    assert_eq!(frame.header_str(CONTENT_TYPE), Some("application/json"));
    assert_eq!(
        frame.message().unwrap(),
        Message::Event {
            event_type: "assistantResponseEvent",
            payload: br#"{"content":"Hi"}"#,
        }
    );
}

#[test]
fn vector_exception_frame() {
    let payload = br#"{"message":"Too many requests"}"#;
    let mut out = BytesMut::new();
    encode_exception("ThrottlingException", payload, &mut out);
    assert_eq!(out.len(), 144);
    assert_eq!(be(&out, 0), 144);
    assert_eq!(be(&out, 4), 97);
    assert_eq!(be(&out, 8), 0x8E91_A9B7);
    assert_eq!(be(&out, 140), 0x5291_FDD1);

    let frame = decode_one(&out).unwrap().unwrap();
    let names: Vec<&str> = frame.headers().map(|h| h.name).collect();
    assert_eq!(names, [MESSAGE_TYPE, EXCEPTION_TYPE, CONTENT_TYPE]);
    assert_eq!(
        frame.message().unwrap(),
        Message::Exception {
            exception_type: "ThrottlingException",
            payload,
        }
    );
}

fn every_type() -> Vec<Header> {
    vec![
        Header::new("t", HeaderValue::Bool(true)),
        Header::new("f", HeaderValue::Bool(false)),
        Header::new("byte", HeaderValue::Byte(-128)),
        Header::new("short", HeaderValue::Short(i16::MIN)),
        Header::new("int", HeaderValue::Int(-123_456_789)),
        Header::new("long", HeaderValue::Long(i64::MAX)),
        Header::new(
            "bytes",
            HeaderValue::ByteArray(Bytes::from_static(&[0, 255, 7])),
        ),
        Header::new("empty", HeaderValue::ByteArray(Bytes::new())),
        Header::string("str", "héllo ✓ 🦀"),
        Header::new("ts", HeaderValue::Timestamp(1_700_000_000_123)),
        Header::new("uuid", HeaderValue::Uuid(*b"0123456789abcdef")),
        Header::new("x".repeat(255), HeaderValue::String("y".repeat(65_535))),
    ]
}

#[test]
fn every_header_type_round_trips() {
    let headers = every_type();
    let mut out = BytesMut::new();
    try_encode(&headers, b"payload", &mut out).unwrap();
    let frame = decode_one(&out).unwrap().unwrap();
    assert_eq!(owned(&frame), headers);
    assert_eq!(&frame.payload[..], b"payload");
    assert_eq!(frame.header("long"), Some(HeaderValueRef::Long(i64::MAX)));
    assert_eq!(
        frame.header("bytes"),
        Some(HeaderValueRef::ByteArray(&[0, 255, 7]))
    );
    assert_eq!(frame.header_str("str"), Some("héllo ✓ 🦀"));
    assert_eq!(frame.header_str("long"), None);
    assert_eq!(frame.header("missing"), None);
}

#[test]
fn header_type_codes_on_the_wire() {
    // name_len, name, type, value: checks the type byte each variant writes.
    let cases: [(HeaderValue, &[u8]); 10] = [
        (HeaderValue::Bool(true), &[0]),
        (HeaderValue::Bool(false), &[1]),
        (HeaderValue::Byte(-1), &[2, 0xff]),
        (HeaderValue::Short(0x0102), &[3, 1, 2]),
        (HeaderValue::Int(0x0102_0304), &[4, 1, 2, 3, 4]),
        (HeaderValue::Long(1), &[5, 0, 0, 0, 0, 0, 0, 0, 1]),
        (
            HeaderValue::ByteArray(Bytes::from_static(b"ab")),
            &[6, 0, 2, b'a', b'b'],
        ),
        (HeaderValue::String("é".into()), &[7, 0, 2, 0xc3, 0xa9]),
        (HeaderValue::Timestamp(2), &[8, 0, 0, 0, 0, 0, 0, 0, 2]),
        (
            HeaderValue::Uuid([9; 16]),
            &[9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
        ),
    ];
    for (value, wire) in cases {
        let mut out = BytesMut::new();
        encode(&[Header::new("n", value.clone())], b"", &mut out);
        assert_eq!(&out[12..14], &[1, b'n']);
        assert_eq!(&out[14..out.len() - 4], wire, "{value:?}");
        let mut raw = vec![1, b'n'];
        raw.extend_from_slice(wire);
        let frame = decode_one(&raw_frame(&raw, b"")).unwrap().unwrap();
        assert_eq!(owned(&frame), [Header::new("n", value)]);
    }
}

#[test]
fn decodes_byte_by_byte_and_back_to_back() {
    let mut stream = BytesMut::new();
    encode_event("a", b"{}", &mut stream);
    encode_exception("b", b"[]", &mut stream);
    encode_error("c", "d", &mut stream);
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for byte in &stream[..] {
        buf.put_u8(*byte);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    assert_eq!(decoder.decode_eof(&mut buf).unwrap(), None);
    let messages: Vec<Message<'_>> = frames.iter().map(|f| f.message().unwrap()).collect();
    assert_eq!(
        messages,
        [
            Message::Event {
                event_type: "a",
                payload: b"{}"
            },
            Message::Exception {
                exception_type: "b",
                payload: b"[]"
            },
            Message::Error {
                code: "c",
                message: "d"
            },
        ]
    );
}

#[test]
fn payload_shares_the_input_buffer() {
    let mut buf = BytesMut::new();
    encode_event("assistantResponseEvent", br#"{"content":"Hi"}"#, &mut buf);
    let base = buf.as_ptr() as usize;
    let frame = Decoder::new().decode(&mut buf).unwrap().unwrap();
    assert_eq!(frame.payload.as_ptr() as usize, base + 12 + 92);
    assert!(buf.is_empty());
}

#[test]
fn headers_are_read_in_place() {
    let mut buf = BytesMut::new();
    encode(
        &[
            Header::string("x-name", "a value"),
            Header::string(MESSAGE_TYPE, "event"),
        ],
        b"{}",
        &mut buf,
    );
    let base = buf.as_ptr() as usize;
    let frame = Decoder::new().decode(&mut buf).unwrap().unwrap();
    let first = frame.headers().next().unwrap();
    assert_eq!(first.name.as_ptr() as usize, base + 12 + 1);
    let value = first.value.as_str().unwrap();
    assert_eq!(value.as_ptr() as usize, base + 12 + 1 + 6 + 1 + 2);
    // Known constants (`:message-type`, `event`, ...) read as `'static` text.
    assert_eq!(frame.header_str(MESSAGE_TYPE), Some("event"));
}

#[test]
fn bad_prelude_crc() {
    let mut buf = BytesMut::from(&hex(EVENT_VECTOR)[..]);
    buf[8] ^= 1;
    let before = buf.clone();
    let mut decoder = Decoder::new();
    let err = decoder.decode(&mut buf).unwrap_err();
    assert_eq!(
        err,
        EventStreamError::PreludeCrc {
            expected: 0x3ADD_CF78,
            actual: 0x3BDD_CF78
        }
    );
    // Nothing consumed: the stream cannot move past a bad frame.
    assert_eq!(buf, before);
    assert_eq!(decoder.decode(&mut buf).unwrap_err(), err);
}

#[test]
fn bad_message_crc() {
    let mut buf = BytesMut::from(&hex(EVENT_VECTOR)[..]);
    buf[110] ^= 0x20; // inside the payload
    let err = Decoder::new().decode(&mut buf).unwrap_err();
    assert!(
        matches!(
            err,
            EventStreamError::MessageCrc {
                expected: 0xB02B_ABDC,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(buf.len(), 124);
}

#[test]
fn frame_too_small() {
    let mut buf = prelude(15, 0);
    buf.put_bytes(0, 8);
    assert_eq!(
        Decoder::new().decode(&mut buf),
        Err(EventStreamError::FrameTooSmall(15))
    );
}

#[test]
fn oversize_frame_rejected_from_prelude_alone() {
    let mut buf = prelude(1_000_001, 0);
    assert_eq!(
        Decoder::with_max_frame(1_000_000).decode(&mut buf),
        Err(EventStreamError::FrameTooLarge {
            len: 1_000_001,
            max: 1_000_000
        })
    );
    // With the default limit a 4 GiB claim is refused just the same.
    let mut buf = prelude(u32::MAX, 0);
    assert!(matches!(
        Decoder::new().decode(&mut buf),
        Err(EventStreamError::FrameTooLarge { .. })
    ));
}

#[test]
fn frame_at_the_limit_is_accepted() {
    let mut buf = BytesMut::new();
    encode(&[], &[7; 84], &mut buf);
    assert_eq!(buf.len(), 100);
    let frame = Decoder::with_max_frame(100)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert_eq!(frame.payload.len(), 84);
}

#[test]
fn waits_for_body_and_reserves_room() {
    let mut whole = BytesMut::new();
    encode(&[], &[1; 1000], &mut whole);
    let mut buf = BytesMut::from(&whole[..12]);
    assert_eq!(Decoder::new().decode(&mut buf), Ok(None));
    assert!(buf.capacity() >= 1016);
    assert_eq!(
        Decoder::new().decode_eof(&mut buf),
        Err(EventStreamError::TruncatedStream { buffered: 12 })
    );
}

#[test]
fn headers_length_must_fit() {
    let mut buf = prelude(20, 5);
    assert_eq!(
        Decoder::new().decode(&mut buf),
        Err(EventStreamError::InvalidHeadersLength {
            headers_len: 5,
            total_len: 20
        })
    );
    let mut buf = prelude(20, u32::MAX);
    assert!(matches!(
        Decoder::new().decode(&mut buf),
        Err(EventStreamError::InvalidHeadersLength { .. })
    ));
}

#[test]
fn malformed_headers_are_typed_errors() {
    let cases: [(&[u8], &str); 9] = [
        (&[0, 7, 0, 0], "empty name"),
        (&[5, b'a', b'b'], "name needs 5 bytes"),
        (&[1, b'a'], "value type"),
        (&[1, b'a', 10], "unknown value type 10"),
        (&[1, b'a', 4, 0, 0], "int value needs 4 bytes"),
        (&[1, b'a', 7, 0, 9, b'x'], "string needs 9 bytes"),
        (&[1, b'a', 6, 0], "byte array length"),
        (&[1, 0xff, 0], "name is not UTF-8"),
        (&[1, b'a', 7, 0, 2, 0xc3, 0x28], "not UTF-8"),
    ];
    for (raw, why) in cases {
        let mut buf = raw_frame(raw, b"{}");
        let len = buf.len();
        match Decoder::new().decode(&mut buf) {
            Err(EventStreamError::InvalidHeader(text)) => {
                assert!(text.contains(why), "{raw:?}: {text}")
            }
            other => panic!("{raw:?}: {other:?}"),
        }
        assert_eq!(buf.len(), len, "nothing consumed on error");
    }
}

#[test]
fn message_view_errors() {
    let frame = |headers: Vec<Header>| frame_of(&headers);
    assert_eq!(
        frame(vec![Header::string(MESSAGE_TYPE, "event")]).message(),
        Err(EventStreamError::MissingHeader(EVENT_TYPE))
    );
    assert_eq!(
        frame(vec![Header::string(MESSAGE_TYPE, "exception")]).message(),
        Err(EventStreamError::MissingHeader(EXCEPTION_TYPE))
    );
    assert_eq!(
        frame(vec![Header::string(MESSAGE_TYPE, "error")]).message(),
        Err(EventStreamError::MissingHeader(ERROR_CODE))
    );
    assert_eq!(
        frame(vec![Header::string(MESSAGE_TYPE, "ping")]).message(),
        Err(EventStreamError::UnknownMessageType("ping".into()))
    );
    assert_eq!(
        frame(vec![Header::new(MESSAGE_TYPE, HeaderValue::Int(1))]).message(),
        Err(EventStreamError::HeaderNotString(MESSAGE_TYPE))
    );
    // An error frame without :error-message still reports its code.
    assert_eq!(
        frame(vec![
            Header::string(ERROR_CODE, "InternalFailure"),
            Header::string(MESSAGE_TYPE, "error"),
        ])
        .message(),
        Ok(Message::Error {
            code: "InternalFailure",
            message: ""
        })
    );
}

#[test]
fn try_encode_refuses_what_the_format_cannot_carry() {
    let too_long_name = Header::string("n".repeat(256), "v");
    let empty_name = Header::string("", "v");
    let too_long_value = Header::new("n", HeaderValue::ByteArray(vec![0; 65_536].into()));
    for header in [too_long_name, empty_name, too_long_value] {
        let mut out = BytesMut::from(&b"keep"[..]);
        let err = try_encode(std::slice::from_ref(&header), b"", &mut out).unwrap_err();
        assert!(matches!(err, EventStreamError::InvalidHeader(_)), "{err:?}");
        assert_eq!(&out[..], b"keep", "nothing written on error");
    }
}

#[test]
fn encode_writes_an_error_frame_instead_of_a_bad_frame() {
    let mut out = BytesMut::new();
    encode(&[Header::string("", "v")], b"{}", &mut out);
    let frame = decode_one(&out).unwrap().unwrap();
    match frame.message().unwrap() {
        Message::Error { code, message } => {
            assert_eq!(code, ENCODING_ERROR_CODE);
            assert!(message.contains("invalid event-stream header"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let mut out = BytesMut::new();
    encode_event(&"e".repeat(70_000), b"{}", &mut out);
    let frame = decode_one(&out).unwrap().unwrap();
    assert!(matches!(
        frame.message(),
        Ok(Message::Error {
            code: ENCODING_ERROR_CODE,
            ..
        })
    ));
}

#[test]
fn encode_error_clips_long_text_on_a_char_boundary() {
    // 'é' is two bytes: 32,768 of them are 65,536 bytes, one over the limit.
    let message = "é".repeat(32_768);
    let mut out = BytesMut::new();
    encode_error("Big", &message, &mut out);
    let frame = decode_one(&out).unwrap().unwrap();
    match frame.message().unwrap() {
        Message::Error { code, message } => {
            assert_eq!(code, "Big");
            assert_eq!(message.len(), 65_534);
            assert!(message.chars().all(|c| c == 'é'));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn repeated_header_names_first_wins() {
    let frame = frame_of(&[Header::string("k", "first"), Header::string("k", "second")]);
    assert_eq!(frame.header_str("k"), Some("first"));
    // The same for the semantic headers `message` reads.
    let frame = frame_of(&[
        Header::string(MESSAGE_TYPE, "event"),
        Header::string(EVENT_TYPE, "first"),
        Header::string(MESSAGE_TYPE, "error"),
        Header::new(EVENT_TYPE, HeaderValue::Int(2)),
    ]);
    assert_eq!(
        frame.message(),
        Ok(Message::Event {
            event_type: "first",
            payload: b""
        })
    );
}

#[test]
fn try_new_refuses_what_the_format_cannot_carry() {
    let err = Frame::try_new(&[Header::string("", "v")], Bytes::new()).unwrap_err();
    assert!(matches!(err, EventStreamError::InvalidHeader(_)), "{err:?}");
}

#[test]
fn try_new_matches_the_decoded_frame() {
    let headers = every_type();
    let mut out = BytesMut::new();
    try_encode(&headers, b"p", &mut out).unwrap();
    let decoded = decode_one(&out).unwrap().unwrap();
    let built = Frame::try_new(&headers, &b"p"[..]).unwrap();
    assert_eq!(decoded, built);
    assert_ne!(decoded, Frame::try_new(&headers[1..], &b"p"[..]).unwrap());
    // Debug shows the headers, not the raw block.
    let shown = format!("{:?}", frame_of(&[Header::string("k", "v")]));
    assert!(
        shown.contains(r#"name: "k", value: String("v")"#),
        "{shown}"
    );
}

/// What `message()` must answer, computed the slow way: the first header of
/// each name, read through the public iterator.
fn message_by_scan(frame: &Frame) -> Result<Message<'_>, EventStreamError> {
    let first = |name: &'static str| frame.headers().find(|h| h.name == name);
    let string = |name: &'static str| match first(name) {
        None => Ok(None),
        Some(h) => h
            .value
            .as_str()
            .map(Some)
            .ok_or(EventStreamError::HeaderNotString(name)),
    };
    let required = |name: &'static str| string(name)?.ok_or(EventStreamError::MissingHeader(name));
    match required(MESSAGE_TYPE)? {
        "event" => Ok(Message::Event {
            event_type: required(EVENT_TYPE)?,
            payload: &frame.payload,
        }),
        "exception" => Ok(Message::Exception {
            exception_type: required(EXCEPTION_TYPE)?,
            payload: &frame.payload,
        }),
        "error" => Ok(Message::Error {
            code: required(ERROR_CODE)?,
            message: string(ERROR_MESSAGE)?.unwrap_or_default(),
        }),
        other => Err(EventStreamError::UnknownMessageType(other.to_owned())),
    }
}

#[test]
fn semantic_headers_found_in_any_order_among_others() {
    // Non-string and long-named headers before, between and after; names
    // that share the ':' prefix or a semantic name's length but are not one;
    // repeats of every semantic name (the first wins).
    let headers = [
        Header::new("x".repeat(255), HeaderValue::String("y".repeat(300))),
        Header::new(":event-typ", HeaderValue::String("near miss".into())),
        Header::new(":error-codes", HeaderValue::Int(1)),
        Header::string(ERROR_MESSAGE, "slow down ✓"),
        Header::new("uuid", HeaderValue::Uuid([7; 16])),
        Header::string(":error-cod3", "near miss"),
        Header::string(ERROR_CODE, "Throttled"),
        Header::new("bytes", HeaderValue::ByteArray(vec![b':'; 40].into())),
        Header::string(MESSAGE_TYPE, "error"),
        Header::string(ERROR_CODE, "second"),
        Header::string(ERROR_MESSAGE, "second"),
        Header::string(MESSAGE_TYPE, "event"),
        Header::new("ts", HeaderValue::Timestamp(5)),
    ];
    let expected = Message::Error {
        code: "Throttled",
        message: "slow down ✓",
    };
    let built = frame_of(&headers);
    assert_eq!(built.message(), Ok(expected));
    let mut out = BytesMut::new();
    try_encode(&headers, b"", &mut out).unwrap();
    let decoded = decode_one(&out).unwrap().unwrap();
    assert_eq!(decoded.message(), Ok(expected));

    // The first :event-type is not a string: a later string one does not count.
    let frame = frame_of(&[
        Header::new("pad", HeaderValue::Long(9)),
        Header::new(EVENT_TYPE, HeaderValue::Bool(true)),
        Header::string(MESSAGE_TYPE, "event"),
        Header::string(EVENT_TYPE, "later"),
    ]);
    assert_eq!(
        frame.message(),
        Err(EventStreamError::HeaderNotString(EVENT_TYPE))
    );
    // The first :message-type is a string: a later non-string one is ignored.
    let frame = frame_of(&[
        Header::string(EXCEPTION_TYPE, "Boom"),
        Header::string(MESSAGE_TYPE, "exception"),
        Header::new(MESSAGE_TYPE, HeaderValue::Int(3)),
    ]);
    assert_eq!(
        frame.message(),
        Ok(Message::Exception {
            exception_type: "Boom",
            payload: b""
        })
    );
}

#[test]
fn message_reads_the_frame_it_was_validated_with() {
    // Clones and frames decoded back to back each read their own block.
    let mut stream = BytesMut::new();
    encode_event("first", b"1", &mut stream);
    encode(
        &[
            Header::new("n".repeat(200), HeaderValue::Short(1)),
            Header::string(MESSAGE_TYPE, "exception"),
            Header::string(EXCEPTION_TYPE, "second"),
        ],
        b"2",
        &mut stream,
    );
    let mut decoder = Decoder::new();
    let first = decoder.decode(&mut stream).unwrap().unwrap();
    let second = decoder.decode(&mut stream).unwrap().unwrap();
    let copy = second.clone();
    drop(second);
    assert_eq!(
        first.message(),
        Ok(Message::Event {
            event_type: "first",
            payload: b"1"
        })
    );
    assert_eq!(
        copy.message(),
        Ok(Message::Exception {
            exception_type: "second",
            payload: b"2"
        })
    );
    assert_eq!(
        Frame::default().message(),
        Err(EventStreamError::MissingHeader(MESSAGE_TYPE))
    );
}

#[test]
fn a_repeated_block_is_checked_and_read_as_its_own() {
    // Blocks equal to the one before are taken from the memo; a different
    // block, valid or not, is checked again, and a refused one is never kept.
    let event = |kind: &str| {
        let mut raw = BytesMut::new();
        for (name, value) in [(EVENT_TYPE, kind), (MESSAGE_TYPE, "event")] {
            Header::string(name, value).write(&mut raw);
        }
        raw
    };
    let bad: &[u8] = &[1, b'a', 7, 0, 2, 0xc3, 0x28];
    let mut decoder = Decoder::new();
    let mut next = |headers: &[u8]| decoder.decode(&mut raw_frame(headers, b"{}"));
    let kind =
        |frame: Result<Option<Frame>, EventStreamError>| match frame.unwrap().unwrap().message() {
            Ok(Message::Event { event_type, .. }) => event_type.to_owned(),
            other => panic!("{other:?}"),
        };
    assert_eq!(kind(next(&event("a"))), "a");
    assert_eq!(kind(next(&event("a"))), "a");
    assert_eq!(kind(next(&event("b"))), "b");
    assert!(matches!(next(bad), Err(EventStreamError::InvalidHeader(_))));
    assert!(matches!(next(bad), Err(EventStreamError::InvalidHeader(_))));
    assert_eq!(kind(next(&event("b"))), "b");
    assert_eq!(
        next(&[]).unwrap().unwrap().message(),
        Err(EventStreamError::MissingHeader(MESSAGE_TYPE))
    );
    assert_eq!(kind(next(&event("a"))), "a");
}

mod props {
    use proptest::prelude::*;

    use super::*;

    /// Names: mostly the semantic ones (so repeats are common), some near
    /// misses and long names.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(vec![
                MESSAGE_TYPE,
                EVENT_TYPE,
                EXCEPTION_TYPE,
                ERROR_CODE,
                ERROR_MESSAGE,
            ])
            .prop_map(str::to_owned),
            1 => prop::sample::select(vec![CONTENT_TYPE, ":event-typ", ":error-codes", "x"])
                .prop_map(str::to_owned),
            // At most 254 bytes: é takes two.
            1 => "[a-zé:-]{1,127}",
        ]
    }

    /// Values: mostly strings that are message kinds, some other text and
    /// every other type.
    fn value() -> impl Strategy<Value = HeaderValue> {
        prop_oneof![
            4 => prop::sample::select(vec!["event", "exception", "error", "ping", ""])
                .prop_map(|s| HeaderValue::String(s.to_owned())),
            2 => "[a-zA-Z✓ ]{0,40}".prop_map(HeaderValue::String),
            1 => any::<bool>().prop_map(HeaderValue::Bool),
            1 => any::<i8>().prop_map(HeaderValue::Byte),
            1 => any::<i16>().prop_map(HeaderValue::Short),
            1 => any::<i32>().prop_map(HeaderValue::Int),
            1 => any::<i64>().prop_map(HeaderValue::Long),
            1 => prop::collection::vec(any::<u8>(), 0..40)
                .prop_map(|b| HeaderValue::ByteArray(b.into())),
            1 => any::<i64>().prop_map(HeaderValue::Timestamp),
            1 => any::<[u8; 16]>().prop_map(HeaderValue::Uuid),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn message_agrees_built_decoded_and_scanned(
            headers in prop::collection::vec((name(), value()), 0..10),
            payload in prop::collection::vec(any::<u8>(), 0..20),
        ) {
            let headers: Vec<Header> =
                headers.into_iter().map(|(n, v)| Header::new(n, v)).collect();
            let built = Frame::try_new(&headers, payload.clone()).unwrap();
            let mut out = BytesMut::new();
            try_encode(&headers, &payload, &mut out).unwrap();
            let decoded = decode_one(&out).unwrap().unwrap();
            prop_assert_eq!(&built, &decoded);
            prop_assert_eq!(built.message(), message_by_scan(&built));
            prop_assert_eq!(decoded.message(), message_by_scan(&decoded));
        }

        /// One decoder over a stream whose blocks repeat (the memo of the
        /// last block at work) answers every frame as a fresh decoder does.
        #[test]
        fn one_decoder_over_repeated_blocks_agrees_with_fresh_ones(
            pool in prop::collection::vec(
                prop_oneof![
                    3 => prop::collection::vec((name(), value()), 0..4).prop_map(|headers| {
                        let mut raw = BytesMut::new();
                        for (n, v) in headers {
                            Header::new(n, v).write(&mut raw);
                        }
                        raw.to_vec()
                    }),
                    1 => prop::collection::vec(any::<u8>(), 0..12),
                ],
                1..4,
            ),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 1..12),
        ) {
            let mut decoder = Decoder::new();
            for pick in picks {
                let block = pick.get(&pool);
                let shared = decoder.decode(&mut raw_frame(block, b"{}"));
                let fresh = Decoder::new().decode(&mut raw_frame(block, b"{}"));
                match (shared, fresh) {
                    (Ok(Some(a)), Ok(Some(b))) => {
                        prop_assert_eq!(&a, &b);
                        prop_assert_eq!(a.message(), b.message());
                    }
                    (a, b) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
                }
            }
        }
    }
}
