//! The SSE parser in raw-span mode, fed in arbitrary chunks: the same blocks
//! (or the same error) as when fed at once; the blocks concatenate to the
//! input; their events are the events mode's. Run at the default limits and
//! at small ones, so the limit errors are reached too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::sse::{SseBlock, SseError, SseEvent, SseParser};

fn blocks(pieces: &[&[u8]], mut parser: SseParser) -> Result<Vec<SseBlock>, SseError> {
    let mut out = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        while let Some(b) = parser.next_block()? {
            out.push(b);
        }
    }
    while let Some(b) = parser.finish_block()? {
        out.push(b);
    }
    Ok(out)
}

fn events(pieces: &[&[u8]], mut parser: SseParser) -> Result<Vec<SseEvent>, SseError> {
    let mut out = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        while let Some(e) = parser.next_event()? {
            out.push(e);
        }
    }
    while let Some(e) = parser.finish()? {
        out.push(e);
    }
    Ok(out)
}

fn check(pieces: &[&[u8]], input: &[u8], parser: fn() -> SseParser) {
    let whole = blocks(&[input], parser());
    let chunked = blocks(pieces, parser());
    assert_eq!(whole, chunked);
    let evs = events(pieces, parser());
    match whole {
        Ok(blocks) => {
            let raw: Vec<u8> = blocks.iter().flat_map(|b| b.raw.iter().copied()).collect();
            assert_eq!(raw, input);
            // Only the last block may lack its blank line.
            assert!(blocks.iter().rev().skip(1).all(|b| b.terminated));
            let from_blocks: Vec<SseEvent> = blocks.into_iter().filter_map(|b| b.event).collect();
            assert_eq!(Ok(from_blocks), evs);
        }
        // The events mode stops at the same error (it may see it later, but
        // never gets past it).
        Err(e) => assert_eq!(evs.err(), Some(e)),
    }
}

fuzz_target!(|data: &[u8]| {
    let (pieces, input) = gateway_fuzz::split(data);
    check(&pieces, input, SseParser::new);
    check(&pieces, input, || {
        SseParser::with_limits(40, 60).with_max_block(100)
    });
});
