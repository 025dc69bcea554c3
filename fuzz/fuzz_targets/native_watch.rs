//! The native-stream watch over a provider stream cut into arbitrary chunks,
//! as the relay reads it (raw blocks and their events in one pass): the same
//! forwarded bytes, the same verdict per event, the same ending and usage as
//! when the stream arrives at once. The first byte also chooses the format
//! (bit 0: chat completions) and whether the client wants usage (bit 1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::watch::{Ending, Seen, Watch};
use translate::{ClientFormat, Usage};
use wire::sse::{SseError, SseParser};

type Verdict = (Vec<u8>, Vec<Seen>, Ending, Usage);

fn relay(format: ClientFormat, strip: bool, pieces: &[&[u8]]) -> Result<Verdict, SseError> {
    let mut parser = SseParser::new();
    let mut watch = Watch::new(format, strip);
    let (mut forwarded, mut seen) = (Vec::new(), Vec::new());
    let mut blocks = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        while let Some(block) = parser.next_block()? {
            blocks.push(block);
        }
    }
    while let Some(block) = parser.finish_block()? {
        blocks.push(block);
    }
    for block in blocks {
        let s = block
            .event
            .as_ref()
            .map(|e| watch.observe(e))
            .unwrap_or_default();
        if !s.drop {
            forwarded.extend_from_slice(&block.raw);
        }
        seen.push(s);
    }
    Ok((forwarded, seen, watch.ending(), watch.usage()))
}

fuzz_target!(|data: &[u8]| {
    let Some(&flags) = data.first() else {
        return;
    };
    let format = if flags & 1 == 1 {
        ClientFormat::OpenAi
    } else {
        ClientFormat::Anthropic
    };
    let strip = flags & 2 == 2;
    let (pieces, input) = gateway_fuzz::split(data);
    let whole = relay(format, strip, &[input]);
    assert_eq!(relay(format, strip, &pieces), whole);
    if let Ok((_, seen, _, _)) = &whole {
        // Only the chat-completions usage chunk is ever dropped.
        assert!(strip || seen.iter().all(|s| !s.drop));
    }
});
