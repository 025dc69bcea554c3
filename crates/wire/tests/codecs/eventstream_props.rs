//! Properties of the event-stream decoder: chunking never matters, any damage
//! is an error, and any frame it accepts re-encodes to the same bytes.

use bytes::{BufMut, BytesMut};
use proptest::prelude::*;
use wire::eventstream::{try_encode, Decoder, EventStreamError, Frame, DEFAULT_MAX_FRAME};

use crate::strategies::{chunks, frame, owned_headers};

fn encode_all(frames: &[Frame]) -> BytesMut {
    let mut out = BytesMut::new();
    for f in frames {
        try_encode(&owned_headers(f), &f.payload, &mut out).unwrap();
    }
    out
}

/// Feeds the chunks through one decoder, draining after each, then at EOF.
fn decode_chunked(pieces: &[&[u8]]) -> Result<Vec<Frame>, EventStreamError> {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        while let Some(f) = decoder.decode(&mut buf)? {
            frames.push(f);
        }
    }
    while let Some(f) = decoder.decode_eof(&mut buf)? {
        frames.push(f);
    }
    Ok(frames)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn rechunked_streams_decode_to_the_same_frames(
        frames in proptest::collection::vec(frame(), 0..8),
        cuts in proptest::collection::vec(any::<usize>(), 0..24),
    ) {
        let bytes = encode_all(&frames);
        let decoded = decode_chunked(&chunks(&bytes, &cuts)).unwrap();
        prop_assert_eq!(decoded, frames);
    }

    #[test]
    fn any_single_byte_change_is_an_error(
        f in frame(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = encode_all(std::slice::from_ref(&f));
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        // CRC-32 catches every error burst of 32 bits or less, so one changed
        // byte is always caught, by the prelude or the message checksum.
        let result = Decoder::new().decode_eof(&mut bytes);
        prop_assert!(
            matches!(
                result,
                Err(EventStreamError::PreludeCrc { .. } | EventStreamError::MessageCrc { .. })
            ),
            "byte {} ^ {:#x}: {:?}", i, flip, result
        );
    }

    #[test]
    fn any_truncation_is_an_error_at_eof(
        f in frame(),
        at in any::<prop::sample::Index>(),
    ) {
        let whole = encode_all(std::slice::from_ref(&f));
        let cut = at.index(whole.len()); // 0 ..= len - 1
        let mut buf = BytesMut::from(&whole[..cut]);
        let mut decoder = Decoder::new();
        prop_assert_eq!(decoder.decode(&mut buf), Ok(None));
        let expected = if cut == 0 {
            Ok(None)
        } else {
            Err(EventStreamError::TruncatedStream { buffered: cut })
        };
        prop_assert_eq!(decoder.decode_eof(&mut buf), expected);
    }

    #[test]
    fn oversize_frame_refused_before_its_body(
        max in 16usize..100_000,
        excess in 1u32..1_000_000,
        headers_len in any::<u32>(),
    ) {
        let total = max as u32 + excess;
        let mut buf = BytesMut::new();
        buf.put_u32(total);
        buf.put_u32(headers_len);
        buf.put_u32(crc32fast::hash(&buf[..8]));
        let result = Decoder::with_max_frame(max).decode(&mut buf);
        prop_assert_eq!(
            result,
            Err(EventStreamError::FrameTooLarge { len: total as usize, max })
        );
        prop_assert_eq!(buf.len(), 12);
    }

    /// Random header blocks inside frames with valid lengths and CRCs reach
    /// the header parser: it either errors, or yields a frame that re-encodes
    /// to exactly the input bytes (nothing was skipped or misread).
    #[test]
    fn random_header_blocks_parse_exactly_or_fail(
        block in proptest::collection::vec(any::<u8>(), 0..120),
        payload in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let mut bytes = BytesMut::new();
        bytes.put_u32((16 + block.len() + payload.len()) as u32);
        bytes.put_u32(block.len() as u32);
        bytes.put_u32(crc32fast::hash(&bytes[..8]));
        bytes.put_slice(&block);
        bytes.put_slice(&payload);
        bytes.put_u32(crc32fast::hash(&bytes));
        let input = bytes.clone();
        match Decoder::new().decode_eof(&mut bytes) {
            Ok(Some(f)) => {
                let mut again = BytesMut::new();
                try_encode(&owned_headers(&f), &f.payload, &mut again).unwrap();
                prop_assert_eq!(again, input);
            }
            Ok(None) => prop_assert!(false, "a whole frame must decode or fail"),
            Err(err) => prop_assert!(
                matches!(err, EventStreamError::InvalidHeader(_)),
                "{:?}", err
            ),
        }
    }

    /// The same, starting from valid headers with one byte changed and the
    /// CRCs fixed up, which reaches deeper into the header parser.
    #[test]
    fn damaged_headers_with_fixed_crcs_parse_exactly_or_fail(
        f in frame(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = encode_all(std::slice::from_ref(&f));
        let headers_len = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
        prop_assume!(headers_len > 0);
        bytes[12 + at.index(headers_len)] ^= flip;
        let end = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..end]);
        bytes[end..].copy_from_slice(&crc.to_be_bytes());
        let input = bytes.clone();
        match Decoder::new().decode_eof(&mut bytes) {
            Ok(Some(f)) => {
                let mut again = BytesMut::new();
                try_encode(&owned_headers(&f), &f.payload, &mut again).unwrap();
                prop_assert_eq!(again, input);
            }
            Ok(None) => prop_assert!(false, "a whole frame must decode or fail"),
            Err(err) => prop_assert!(
                matches!(err, EventStreamError::InvalidHeader(_)),
                "{:?}", err
            ),
        }
    }

    /// Arbitrary bytes, chunked anyhow: never a panic.
    #[test]
    fn garbage_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        max in prop_oneof![Just(DEFAULT_MAX_FRAME), 0usize..64],
    ) {
        let mut decoder = Decoder::with_max_frame(max);
        let mut buf = BytesMut::new();
        for piece in chunks(&bytes, &cuts) {
            buf.extend_from_slice(piece);
            while let Ok(Some(_)) = decoder.decode(&mut buf) {}
        }
        let _ = decoder.decode_eof(&mut buf);
    }
}
