//! Properties of the SSE parser and writers: a stream generated from a model
//! parses to the model's events however it is chunked (inside UTF-8
//! characters, between CR and LF), and the writers round-trip any text. In
//! raw-span mode the blocks are the same whatever the chunking, they
//! concatenate to the input exactly, their boundaries are those of a plain
//! reference splitter, and their events are the events mode's.

use bytes::BytesMut;
use proptest::prelude::*;
use wire::sse::{write_comment, write_data, write_event, SseBlock, SseError, SseEvent, SseParser};

use crate::strategies::chunks;

/// One event block of the model: each field at most once, any data lines.
#[derive(Debug, Clone)]
struct Block {
    comment: Option<String>,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    unknown: Option<String>,
    data: Vec<String>,
}

/// How the model is written out.
#[derive(Debug, Clone)]
struct Style {
    bom: bool,
    /// Line terminator choices, used in turn: 0 LF, 1 CR, 2 CR LF.
    endings: Vec<u8>,
    /// Whether to write a space after each colon, used in turn.
    spaces: Vec<bool>,
    /// 0: ends with a blank line; 1: no final blank line; 2: nor a final terminator.
    tail: u8,
}

fn value() -> impl Strategy<Value = String> {
    "[^\\r\\n\\x00]{0,12}"
}

fn block() -> impl Strategy<Value = Block> {
    (
        proptest::option::weighted(0.2, value()),
        proptest::option::weighted(0.3, "[^\\r\\n\\x00]{1,12}"),
        proptest::option::weighted(0.2, value()),
        proptest::option::weighted(0.1, any::<u64>()),
        proptest::option::weighted(0.1, value()),
        proptest::collection::vec(value(), 0..4),
    )
        .prop_map(|(comment, event, id, retry, unknown, data)| Block {
            comment,
            event,
            id,
            retry,
            unknown,
            data,
        })
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        proptest::collection::vec(0u8..3, 1..16),
        proptest::collection::vec(any::<bool>(), 1..16),
        0u8..3,
    )
        .prop_map(|(bom, endings, spaces, tail)| Style {
            bom,
            endings,
            spaces,
            tail,
        })
}

/// Writes the blocks as an SSE stream in the given style.
fn render(blocks: &[Block], style: &Style) -> Vec<u8> {
    let mut lines: Vec<String> = Vec::new();
    let mut spaces = style.spaces.iter().cycle();
    let mut field = |name: &str, value: &str| {
        // Without the space, a value starting with a space would lose it.
        let space = *spaces.next().unwrap() || value.starts_with(' ');
        format!("{name}:{}{value}", if space { " " } else { "" })
    };
    for b in blocks {
        if let Some(c) = &b.comment {
            lines.push(format!(":{c}"));
        }
        if let Some(e) = &b.event {
            lines.push(field("event", e));
        }
        if let Some(i) = &b.id {
            lines.push(field("id", i));
        }
        if let Some(r) = b.retry {
            lines.push(field("retry", &r.to_string()));
        }
        if let Some(u) = &b.unknown {
            lines.push(field("x-unknown", u));
        }
        for d in &b.data {
            lines.push(field("data", d));
        }
        lines.push(String::new());
    }
    let mut terminators = vec![true; lines.len()];
    if style.tail >= 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
        terminators.pop();
    }
    if style.tail == 2 {
        if let Some(last) = terminators.last_mut() {
            *last = false;
        }
    }

    let mut out = Vec::new();
    if style.bom {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    let mut endings = style.endings.iter().cycle();
    let mut previous = "";
    for (line, terminated) in lines.iter().zip(terminators) {
        out.extend_from_slice(line.as_bytes());
        if !terminated {
            break;
        }
        let mut ending = ["\n", "\r", "\r\n"][usize::from(*endings.next().unwrap())];
        // CR then an LF-ended blank line would read as one CR LF: use CR LF.
        if previous == "\r" && line.is_empty() && ending == "\n" {
            ending = "\r\n";
        }
        out.extend_from_slice(ending.as_bytes());
        previous = ending;
    }
    out
}

/// The events the WHATWG rules (plus our EOF rule) give for the blocks.
fn expected(blocks: &[Block]) -> Vec<SseEvent> {
    let mut last_id = String::new();
    let mut retry = None;
    let mut events = Vec::new();
    for b in blocks {
        if let Some(i) = &b.id {
            last_id.clone_from(i);
        }
        if b.retry.is_some() {
            retry = b.retry;
        }
        if !b.data.is_empty() {
            events.push(SseEvent {
                event: b.event.clone().map(Into::into),
                data: b.data.join("\n"),
                id: (!last_id.is_empty()).then(|| last_id.clone()),
                retry,
            });
        }
    }
    events
}

fn parse(pieces: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for piece in pieces {
        parser.feed(piece);
        while let Some(e) = parser.next_event()? {
            events.push(e);
        }
    }
    while let Some(e) = parser.finish()? {
        events.push(e);
    }
    Ok(events)
}

/// Every block of `pieces` in raw-span mode, with the end of input.
fn blocks(pieces: &[&[u8]], parser: SseParser) -> Result<Vec<SseBlock>, SseError> {
    let mut parser = parser;
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

/// The reference: the whole input cut after each blank line (lines end in
/// CR LF, LF or CR; a leading BOM is no part of the first line), and the
/// rest, if any, as a last block without its blank line.
fn reference_split(input: &[u8]) -> Vec<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let bom = if input.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let (mut start, mut line, mut i) = (0, bom, bom);
    while i < input.len() {
        let term = match (input[i], input.get(i + 1)) {
            (b'\r', Some(b'\n')) => 2,
            (b'\r' | b'\n', _) => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        let blank = i == line;
        i += term;
        line = i;
        if blank {
            out.push((input[start..i].to_vec(), true));
            start = i;
        }
    }
    if start < input.len() {
        out.push((input[start..].to_vec(), false));
    }
    out
}

fn raws(blocks: &[SseBlock]) -> Vec<Vec<u8>> {
    blocks.iter().map(|b| b.raw.to_vec()).collect()
}

fn cut(blocks: &[SseBlock]) -> Vec<(Vec<u8>, bool)> {
    blocks
        .iter()
        .map(|b| (b.raw.to_vec(), b.terminated))
        .collect()
}

fn events_of(blocks: Vec<SseBlock>) -> Vec<SseEvent> {
    blocks.into_iter().filter_map(|b| b.event).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn raw_blocks_are_the_input_and_carry_the_model_events(
        blocks_in in proptest::collection::vec(block(), 0..6),
        style in style(),
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let bytes = render(&blocks_in, &style);
        let whole = blocks(&[&bytes], SseParser::new()).unwrap();
        let chunked = blocks(&chunks(&bytes, &cuts), SseParser::new()).unwrap();
        let byte_by_byte: Vec<&[u8]> = bytes.chunks(1).collect();
        let dripped = blocks(&byte_by_byte, SseParser::new()).unwrap();
        prop_assert_eq!(&whole, &chunked);
        prop_assert_eq!(&whole, &dripped);
        prop_assert_eq!(raws(&whole).concat(), bytes.clone());
        prop_assert_eq!(cut(&whole), reference_split(&bytes));
        prop_assert_eq!(events_of(whole), expected(&blocks_in));
    }

    /// Arbitrary bytes: the same blocks (or the same error) at any chunking;
    /// without an error they concatenate to the input, cut where the
    /// reference cuts, and their events are the events mode's.
    #[test]
    fn raw_blocks_of_garbage_are_chunking_independent(
        bytes in proptest::collection::vec(
            prop_oneof![any::<u8>(), Just(b'\r'), Just(b'\n'), Just(b':'), Just(b'd'), Just(0xEF)], 0..300),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let limits = || SseParser::with_limits(64, 128).with_max_block(200);
        let whole = blocks(&[&bytes], limits());
        let chunked = blocks(&chunks(&bytes, &cuts), limits());
        prop_assert_eq!(&whole, &chunked);
        let events = {
            let mut parser = limits();
            parser.feed(&bytes);
            let mut v = Vec::new();
            loop {
                match parser.finish() {
                    Ok(Some(e)) => v.push(e),
                    Ok(None) => break Ok(v),
                    Err(e) => break Err(e),
                }
            }
        };
        if let Ok(whole) = whole {
            prop_assert_eq!(raws(&whole).concat(), bytes.clone());
            prop_assert_eq!(cut(&whole), reference_split(&bytes));
            prop_assert_eq!(Ok(events_of(whole)), events);
        }
    }

    #[test]
    fn any_chunking_yields_the_model_events(
        blocks in proptest::collection::vec(block(), 0..6),
        style in style(),
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let bytes = render(&blocks, &style);
        let want = expected(&blocks);
        prop_assert_eq!(parse(&[&bytes]).unwrap(), want.clone());
        prop_assert_eq!(parse(&chunks(&bytes, &cuts)).unwrap(), want);
    }

    #[test]
    fn byte_by_byte_yields_the_model_events(
        blocks in proptest::collection::vec(block(), 0..4),
        style in style(),
    ) {
        let bytes = render(&blocks, &style);
        let pieces: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(parse(&pieces).unwrap(), expected(&blocks));
    }

    #[test]
    fn written_events_parse_back(
        items in proptest::collection::vec(("\\PC{0,10}", "(\\PC|\\r|\\n){0,30}", any::<bool>()), 0..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let mut out = BytesMut::new();
        let mut want = Vec::new();
        for (name, data, with_name) in &items {
            write_comment(&mut out, "keep\nalive");
            if *with_name {
                write_event(&mut out, name, data.as_bytes());
            } else {
                write_data(&mut out, data.as_bytes());
            }
            want.push(SseEvent {
                event: (*with_name && !name.is_empty()).then(|| name.clone().into()),
                data: data.replace("\r\n", "\n").replace('\r', "\n"),
                ..SseEvent::default()
            });
        }
        prop_assert_eq!(parse(&chunks(&out, &cuts)).unwrap(), want);
    }

    /// Arbitrary bytes, chunked anyhow: events or a typed error, never a panic.
    #[test]
    fn garbage_never_panics(
        bytes in proptest::collection::vec(
            prop_oneof![any::<u8>(), Just(b'\r'), Just(b'\n'), Just(b':')], 0..300),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut parser = SseParser::with_limits(64, 128);
        for piece in chunks(&bytes, &cuts) {
            parser.feed(piece);
            while let Ok(Some(_)) = parser.next_event() {}
        }
        while let Ok(Some(_)) = parser.finish() {}
    }
}
