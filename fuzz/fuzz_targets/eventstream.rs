//! The event-stream decoder fed in arbitrary chunks: the same frames and the
//! same final error as when fed at once; an error consumes nothing; every
//! frame's message view reads without panicking, and re-encoding a frame
//! decodes back to it.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use wire::eventstream::{try_encode, Decoder, EventStreamError, Frame, Header};

const MAX_FRAME: usize = 64 * 1024;

fn decode_all(pieces: &[&[u8]]) -> (Vec<Frame>, Option<EventStreamError>) {
    let mut decoder = Decoder::with_max_frame(MAX_FRAME);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in pieces {
        buf.extend_from_slice(piece);
        loop {
            let before = buf.len();
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(e) => {
                    assert_eq!(buf.len(), before, "an error consumed input");
                    return (frames, Some(e));
                }
            }
        }
    }
    loop {
        match decoder.decode_eof(&mut buf) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return (frames, None),
            Err(e) => return (frames, Some(e)),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (pieces, input) = gateway_fuzz::split(data);
    let whole = decode_all(&[input]);
    let chunked = decode_all(&pieces);
    assert_eq!(whole, chunked);
    for frame in &whole.0 {
        let _ = frame.message();
        let headers: Vec<Header> = frame.headers().map(Header::from).collect();
        let mut out = BytesMut::new();
        try_encode(&headers, &frame.payload, &mut out).expect("a decoded frame encodes");
        let again = Decoder::with_max_frame(MAX_FRAME)
            .decode(&mut out)
            .expect("a re-encoded frame decodes")
            .expect("a whole frame");
        assert_eq!(&again, frame);
        assert!(out.is_empty());
    }
});
