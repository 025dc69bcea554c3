//! Awkward network chunking: every recorded stream is fed to the decoders in
//! several cuttings, and the decoded result must not depend on the cutting.

use bytes::BytesMut;
use wire::eventstream::{Decoder, Frame};
use wire::sse::{SseEvent, SseParser};

/// How a byte stream is cut into network reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// One read.
    Whole,
    /// Reads of `n` bytes.
    Every(usize),
    /// A cut before every UTF-8 continuation byte, so every multi-byte
    /// character arrives split (and binary framing is cut at random places).
    InsideUtf8,
}

/// The cuttings every recorded stream goes through.
pub const CUTS: [Cut; 5] = [
    Cut::Whole,
    Cut::Every(7),
    Cut::Every(1),
    Cut::Every(13),
    Cut::InsideUtf8,
];

/// `bytes` as the reads of `cut`.
pub fn pieces(bytes: &[u8], cut: Cut) -> Vec<&[u8]> {
    match cut {
        Cut::Whole => vec![bytes],
        Cut::Every(n) => bytes.chunks(n).collect(),
        Cut::InsideUtf8 => {
            let mut out = Vec::new();
            let mut start = 0;
            for (i, b) in bytes.iter().enumerate() {
                if i > start && (0x80..0xC0).contains(b) {
                    out.push(&bytes[start..i]);
                    start = i;
                }
            }
            out.push(&bytes[start..]);
            out
        }
    }
}

/// Whether `cut` splits at least one multi-byte character of `bytes`.
pub fn splits_a_character(bytes: &[u8], cut: Cut) -> bool {
    let mut at = 0;
    for piece in pieces(bytes, cut) {
        at += piece.len();
        if bytes.get(at).is_some_and(|b| (0x80..0xC0).contains(b)) {
            return true;
        }
    }
    false
}

/// All SSE events of `bytes`, read in the pieces of `cut`.
pub fn sse_events(bytes: &[u8], cut: Cut) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for piece in pieces(bytes, cut) {
        parser.feed(piece);
        while let Some(event) = parser.next_event().unwrap() {
            out.push(event);
        }
    }
    while let Some(event) = parser.finish().unwrap() {
        out.push(event);
    }
    out
}

/// All event-stream frames of `bytes`, read in the pieces of `cut`.
pub fn frames(bytes: &[u8], cut: Cut) -> Vec<Frame> {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in pieces(bytes, cut) {
        buf.extend_from_slice(piece);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            out.push(frame);
        }
    }
    while let Some(frame) = decoder.decode_eof(&mut buf).unwrap() {
        out.push(frame);
    }
    assert!(buf.is_empty(), "bytes left after the last frame");
    out
}

#[test]
fn cuttings_lose_no_byte_and_the_utf8_cutting_splits_characters() {
    let text = "a€b😀c".as_bytes();
    for cut in CUTS {
        assert_eq!(pieces(text, cut).concat(), text, "{cut:?}");
    }
    assert!(splits_a_character(text, Cut::InsideUtf8));
    assert!(!splits_a_character(text, Cut::Whole));
}
