use std::borrow::Cow;

use bytes::Bytes;

use super::*;

/// Feeds `chunks` in order, then finishes; collects every event.
fn parse_chunks(chunks: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        parser.feed(chunk);
        while let Some(event) = parser.next_event()? {
            events.push(event);
        }
    }
    while let Some(event) = parser.finish()? {
        events.push(event);
    }
    Ok(events)
}

fn parse(input: &str) -> Vec<SseEvent> {
    parse_chunks(&[input.as_bytes()]).unwrap()
}

fn data(d: &str) -> SseEvent {
    SseEvent {
        data: d.into(),
        ..SseEvent::default()
    }
}

#[test]
fn one_event_per_blank_line() {
    assert_eq!(parse("data: a\n\ndata: b\n\n"), [data("a"), data("b")]);
}

#[test]
fn events_are_returned_as_soon_as_complete() {
    let mut parser = SseParser::new();
    parser.feed(b"data: a\n");
    assert_eq!(parser.next_event(), Ok(None));
    parser.feed(b"\ndata: b\n");
    assert_eq!(parser.next_event(), Ok(Some(data("a"))));
    assert_eq!(parser.next_event(), Ok(None));
}

#[test]
fn all_three_line_endings() {
    let expected = [data("a"), data("b"), data("c")];
    assert_eq!(parse("data: a\r\n\r\ndata: b\r\rdata: c\n\n"), expected);
    assert_eq!(parse("data: a\r\rdata: b\r\n\r\ndata: c\r\n\n"), expected);
}

#[test]
fn cr_at_chunk_end_then_lf_in_next_chunk() {
    // "\r" | "\n" must be one line ending, not a line end plus a blank line.
    let events = parse_chunks(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]).unwrap();
    assert_eq!(events, [data("a\nb")]);
    // A lone CR at a chunk end followed by something else still ends the line.
    let events = parse_chunks(&[b"data: a\r", b"\r"]).unwrap();
    assert_eq!(events, [data("a")]);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(parse(": keep-alive\n\n:\ndata: x\n: mid\n\n"), [data("x")]);
}

#[test]
fn exactly_one_leading_space_is_stripped() {
    assert_eq!(
        parse("data:no-space\n\ndata:  two\n\ndata:\t tab\n\n"),
        [data("no-space"), data(" two"), data("\t tab")]
    );
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(parse("data: a\ndata:\ndata: c\n\n"), [data("a\n\nc")]);
}

#[test]
fn empty_data_line_is_an_event_but_no_data_is_not() {
    assert_eq!(parse("data\n\n"), [data("")]);
    assert_eq!(parse("data:\n\n"), [data("")]);
    assert_eq!(parse("event: ping\n\nid: 1\n\nretry: 5\n\n"), []);
}

#[test]
fn event_name_resets_per_event() {
    let events = parse("event: message_start\ndata: {}\n\ndata: plain\n\nevent:\ndata: x\n\n");
    assert_eq!(events[0].event.as_deref(), Some("message_start"));
    assert_eq!(events[1].event, None);
    assert_eq!(events[2].event, None);
    // An event name without data is dropped with its block.
    let events = parse("event: a\n\ndata: b\n\n");
    assert_eq!(events, [data("b")]);
}

#[test]
fn id_persists_and_nul_ids_are_ignored() {
    let events = parse("id: 7\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n");
    let ids: Vec<Option<&str>> = events.iter().map(|e| e.id.as_deref()).collect();
    assert_eq!(ids, [Some("7"), Some("7"), Some("7"), None]);
}

#[test]
fn retry_takes_only_digits() {
    let events = parse(
        "retry: 3000\ndata: a\n\nretry: 12a\ndata: b\n\nretry:\ndata: c\n\n\
         retry: 99999999999999999999999\ndata: d\n\nretry: 10\n\ndata: e\n\n",
    );
    let retries: Vec<Option<u64>> = events.iter().map(|e| e.retry).collect();
    assert_eq!(
        retries,
        [Some(3000), Some(3000), Some(3000), Some(3000), Some(10)]
    );
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(
        parse("foo: bar\ndata: x\nDATA: y\nevent2: z\n\n"),
        [data("x")]
    );
}

#[test]
fn field_without_colon_has_empty_value() {
    let events = parse("event\ndata\n\n");
    assert_eq!(events, [data("")]);
}

#[test]
fn colon_in_value_is_kept() {
    assert_eq!(
        parse("data: {\"a\":\"b: c\"}\n\n"),
        [data("{\"a\":\"b: c\"}")]
    );
}

#[test]
fn leading_bom_is_skipped_once() {
    assert_eq!(parse("\u{feff}data: x\n\n"), [data("x")]);
    // Split across chunks.
    let events = parse_chunks(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]).unwrap();
    assert_eq!(events, [data("x")]);
    // Only at the start of the stream: a later BOM is part of the field name.
    assert_eq!(parse("\u{feff}\u{feff}data: x\n\ndata: y\n\n"), [data("y")]);
}

#[test]
fn multibyte_utf8_split_across_chunks() {
    let text = "data: héllo 世界 🦀\n\n".as_bytes();
    for cut in 0..=text.len() {
        let events = parse_chunks(&[&text[..cut], &text[cut..]]).unwrap();
        assert_eq!(events, [data("héllo 世界 🦀")], "cut at {cut}");
    }
}

#[test]
fn openai_stream_with_done() {
    let stream = "data: {\"id\":\"1\"}\n\ndata:{\"id\":\"2\"}\n\ndata: [DONE]\n\n";
    assert_eq!(
        parse(stream),
        [
            data("{\"id\":\"1\"}"),
            data("{\"id\":\"2\"}"),
            data("[DONE]")
        ]
    );
}

#[test]
fn finish_dispatches_an_unterminated_last_event() {
    assert_eq!(
        parse("data: a\n\ndata: [DONE]"),
        [data("a"), data("[DONE]")]
    );
    assert_eq!(parse("data: a\ndata: b\n"), [data("a\nb")]);
    assert_eq!(parse("data: a\r"), [data("a")]);
    assert_eq!(parse(": only a comment"), []);
    assert_eq!(parse(""), []);
}

#[test]
fn finish_returns_buffered_events_one_by_one() {
    let mut parser = SseParser::new();
    parser.feed(b"data: a\n\ndata: b\n\ndata: c");
    assert_eq!(parser.finish(), Ok(Some(data("a"))));
    assert_eq!(parser.finish(), Ok(Some(data("b"))));
    assert_eq!(parser.finish(), Ok(Some(data("c"))));
    assert_eq!(parser.finish(), Ok(None));
    assert_eq!(parser.finish(), Ok(None));
}

#[test]
fn invalid_utf8_is_an_error_and_final() {
    let mut parser = SseParser::new();
    parser.feed(b"data: \xff\n\ndata: ok\n\n");
    assert_eq!(parser.next_event(), Err(SseError::InvalidUtf8));
    assert_eq!(parser.next_event(), Err(SseError::InvalidUtf8));
    assert_eq!(
        parse_chunks(&[b"event: \xc3\x28\ndata: x\n\n"]),
        Err(SseError::InvalidUtf8)
    );
    // Bytes in comments and unknown fields are never decoded.
    assert_eq!(
        parse_chunks(&[b": \xff\nx\xff: \xfe\ndata: ok\n\n"]),
        Ok(vec![data("ok")])
    );
}

#[test]
fn line_too_long_with_and_without_terminator() {
    let mut parser = SseParser::with_limits(10, 100);
    parser.feed(b"data: 0123");
    assert_eq!(parser.next_event(), Ok(None));
    parser.feed(b"4");
    assert_eq!(parser.next_event(), Err(SseError::LineTooLong { max: 10 }));

    let mut parser = SseParser::with_limits(10, 100);
    parser.feed(b"data: 01234\n\n");
    assert_eq!(parser.next_event(), Err(SseError::LineTooLong { max: 10 }));

    // A line of exactly the limit is fine.
    let mut parser = SseParser::with_limits(10, 100);
    parser.feed(b"data: 0123\n\n");
    assert_eq!(parser.next_event(), Ok(Some(data("0123"))));
}

#[test]
fn event_too_large() {
    let mut parser = SseParser::with_limits(100, 10);
    parser.feed(b"data: 01234\ndata: 5678\n\n");
    assert_eq!(parser.next_event(), Ok(Some(data("01234\n5678"))));
    parser.feed(b"data: 01234\ndata: 56789\n\n");
    assert_eq!(
        parser.next_event(),
        Err(SseError::EventTooLarge { max: 10 })
    );
}

#[test]
fn event_too_large_counts_every_joined_line() {
    // Three lines: the third is checked against the two already joined.
    let mut parser = SseParser::with_limits(100, 10);
    parser.feed(b"data: 0123\ndata: 4\ndata: 567\n\n");
    assert_eq!(parser.next_event(), Ok(Some(data("0123\n4\n567"))));
    parser.feed(b"data: 0123\ndata: 4\ndata: 5678\n\n");
    assert_eq!(
        parser.next_event(),
        Err(SseError::EventTooLarge { max: 10 })
    );
}

#[test]
fn the_messages_stream_names_are_borrowed_and_others_owned() {
    let events = parse(
        "event: message_start\ndata: {}\n\nevent: custom\ndata: x\n\n\
         event: ping\n\ndata: y\n\nevent: error\ndata: z\n\n",
    );
    assert_eq!(
        events,
        [
            named("message_start", "{}"),
            named("custom", "x"),
            data("y"), // the name of a block without data does not carry over
            named("error", "z"),
        ]
    );
    assert!(matches!(events[0].event, Some(Cow::Borrowed(_))));
    assert!(matches!(events[1].event, Some(Cow::Owned(_))));
    assert!(matches!(events[3].event, Some(Cow::Borrowed(_))));
}

#[test]
fn the_last_event_line_names_the_event_and_an_empty_one_is_no_name() {
    assert_eq!(
        parse("event: a\nevent: b\ndata: x\n\nevent: a\nevent:\ndata: y\n\n"),
        [named("b", "x"), data("y")]
    );
}

#[test]
fn long_partial_line_is_scanned_once() {
    // Feeding a long line byte by byte must not rescan it (this would take
    // quadratic time); checks the result, and that the line is kept whole.
    let mut parser = SseParser::new();
    let value = "x".repeat(200_000);
    parser.feed(b"data: ");
    for byte in value.as_bytes() {
        parser.feed(std::slice::from_ref(byte));
        assert_eq!(parser.next_event(), Ok(None));
    }
    parser.feed(b"\n\n");
    assert_eq!(parser.next_event().unwrap().unwrap().data, value);
}

// ---- raw-span mode ----

/// Feeds `input` in pieces of `chunk` bytes and takes every block, then
/// finishes; returns (raw bytes, event) per block.
fn blocks_of(input: &[u8], chunk: usize) -> Vec<(Vec<u8>, Option<SseEvent>)> {
    let mut parser = SseParser::new();
    let mut blocks = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        parser.feed(piece);
        while let Some(b) = parser.next_block().unwrap() {
            blocks.push((b.raw.to_vec(), b.event));
        }
    }
    while let Some(b) = parser.finish_block().unwrap() {
        blocks.push((b.raw.to_vec(), b.event));
    }
    blocks
}

fn named(name: &str, d: &str) -> SseEvent {
    SseEvent {
        event: Some(name.to_owned().into()),
        data: d.into(),
        ..SseEvent::default()
    }
}

#[test]
fn blocks_are_the_exact_bytes_with_their_events_at_any_chunking() {
    let input: &[u8] = b"event: a\ndata: 1\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\nevent: b\rdata: 2\r\rdata: tail";
    let expected: Vec<(&[u8], Option<SseEvent>)> = vec![
        (b"event: a\ndata: 1\n\n", Some(named("a", "1"))),
        (b": comment\n\n", None),
        (b"data: x\r\ndata: y\r\n\r\n", Some(data("x\ny"))),
        (b"event: b\rdata: 2\r\r", Some(named("b", "2"))),
        (b"data: tail", Some(data("tail"))),
    ];
    for chunk in 1..=input.len() {
        let got = blocks_of(input, chunk);
        let got: Vec<(&[u8], Option<SseEvent>)> =
            got.iter().map(|(r, e)| (&r[..], e.clone())).collect();
        assert_eq!(got, expected, "chunk size {chunk}");
    }
}

#[test]
fn a_crlf_split_between_chunks_is_one_terminator_of_the_block() {
    let mut parser = SseParser::new();
    parser.feed(b"data: 1\r\n\r");
    assert_eq!(
        parser.next_block(),
        Ok(None),
        "the CR may be half of a CR LF"
    );
    parser.feed(b"\ndata: 2\n\n");
    let first = parser.next_block().unwrap().unwrap();
    assert_eq!(
        (&first.raw[..], first.event),
        (&b"data: 1\r\n\r\n"[..], Some(data("1")))
    );
    let second = parser.next_block().unwrap().unwrap();
    assert_eq!(&second.raw[..], b"data: 2\n\n");
    assert_eq!(parser.finish_block(), Ok(None));
    // At end of input a final CR is a whole terminator.
    let mut parser = SseParser::new();
    parser.feed(b"data: 1\r\r");
    assert_eq!(parser.next_block(), Ok(None));
    let last = parser.finish_block().unwrap().unwrap();
    assert!(last.terminated);
    assert_eq!(
        (&last.raw[..], last.event),
        (&b"data: 1\r\r"[..], Some(data("1")))
    );
}

#[test]
fn every_blank_line_ends_a_block_and_the_bom_stays_in_the_first() {
    let blocks = blocks_of(b"\xEF\xBB\xBFdata: a\n\n\n: c\n\n\nid: 4\n\n", 64);
    let raws: Vec<&[u8]> = blocks.iter().map(|(r, _)| &r[..]).collect();
    assert_eq!(
        raws,
        [
            &b"\xEF\xBB\xBFdata: a\n\n"[..],
            b"\n",
            b": c\n\n",
            b"\n",
            b"id: 4\n\n"
        ]
    );
    assert_eq!(blocks[0].1, Some(data("a")));
    assert!(blocks[1..].iter().all(|(_, e)| e.is_none()));
}

#[test]
fn the_end_of_input_gives_the_rest_as_a_last_block() {
    // A last event without its blank line, then nothing more.
    let mut parser = SseParser::new();
    parser.feed(b"data: a\n\ndata: [DONE]\n");
    assert_eq!(
        &parser.next_block().unwrap().unwrap().raw[..],
        b"data: a\n\n"
    );
    assert_eq!(parser.next_block(), Ok(None));
    let last = parser.finish_block().unwrap().unwrap();
    assert!(!last.terminated, "the input stopped before the blank line");
    assert_eq!(
        (&last.raw[..], last.event),
        (&b"data: [DONE]\n"[..], Some(data("[DONE]")))
    );
    assert_eq!(parser.finish_block(), Ok(None));
    assert_eq!(parser.finish_block(), Ok(None));
    // A fragment that holds no event is a block too (its bytes are not lost).
    assert_eq!(
        blocks_of(b": partial comm", 4),
        [(b": partial comm".to_vec(), None)]
    );
    assert_eq!(blocks_of(b"", 1), []);
    // Blocks still buffered at the end come out one by one.
    let mut parser = SseParser::new();
    parser.feed(b"data: a\n\ndata: b\n\ndata: c");
    let raws: Vec<Bytes> = std::iter::from_fn(|| parser.finish_block().unwrap())
        .map(|b| b.raw)
        .collect();
    assert_eq!(raws, [&b"data: a\n\n"[..], b"data: b\n\n", b"data: c"]);
}

#[test]
fn blocks_are_slices_of_the_buffer_not_copies() {
    let mut parser = SseParser::new();
    parser.feed(b"data: a\n\ndata: b\n\n");
    let a = parser.next_block().unwrap().unwrap().raw;
    let b = parser.next_block().unwrap().unwrap().raw;
    assert_eq!(a.as_ptr().wrapping_add(a.len()), b.as_ptr());
}

#[test]
fn an_oversized_block_is_refused_even_when_its_lines_are_short() {
    let mut parser = SseParser::new().with_max_block(16);
    parser.feed(b": 0123456\n: 0123456\n");
    assert_eq!(
        parser.next_block(),
        Err(SseError::BlockTooLarge { max: 16 })
    );
    assert_eq!(
        parser.next_block(),
        Err(SseError::BlockTooLarge { max: 16 })
    );
    // An endless line, before any terminator arrives.
    let mut parser = SseParser::new().with_max_block(16);
    parser.feed(&[b'x'; 17]);
    assert_eq!(
        parser.next_block(),
        Err(SseError::BlockTooLarge { max: 16 })
    );
    // A block of exactly the limit passes, and the count restarts after it.
    let mut parser = SseParser::new().with_max_block(16);
    parser.feed(b"data: 01234567\n\ndata: 01234567\n\n");
    assert_eq!(parser.next_block().unwrap().unwrap().raw.len(), 16);
    assert_eq!(parser.next_block().unwrap().unwrap().raw.len(), 16);
    // The events API has the same limit.
    let mut parser = SseParser::new().with_max_block(16);
    parser.feed(b": 0123456\n: 0123456\n");
    assert_eq!(
        parser.next_event(),
        Err(SseError::BlockTooLarge { max: 16 })
    );
}

#[test]
fn raw_mode_keeps_the_other_limits_and_errors() {
    let mut parser = SseParser::with_limits(10, 100);
    parser.feed(b"data: 01234\n\n");
    assert_eq!(parser.next_block(), Err(SseError::LineTooLong { max: 10 }));
    let mut parser = SseParser::with_limits(100, 4);
    parser.feed(b"data: 01234\n\n");
    assert_eq!(parser.next_block(), Err(SseError::EventTooLarge { max: 4 }));
    let mut parser = SseParser::new();
    parser.feed(b"data: \xff\n\n");
    assert_eq!(parser.next_block(), Err(SseError::InvalidUtf8));
    assert_eq!(parser.finish_block(), Err(SseError::InvalidUtf8));
}

/// Found by fuzzing (`fuzz/run.sh`, target `sse`): a line that broke both the
/// line and the block limit was reported as whichever check ran first, which
/// depended on where the chunks were cut.
#[test]
fn the_limit_crossed_first_is_reported_at_any_chunking() {
    // (input, limits, error): the second line crosses the block limit at
    // byte 16 and its own limit at byte 21; then the reverse.
    let cases: [(&[u8], usize, SseError); 2] = [
        (
            b": 1234567\n: 123456789012\n\n",
            15,
            SseError::BlockTooLarge { max: 15 },
        ),
        (
            b": 1234567\n: 123456789012\n\n",
            22,
            SseError::LineTooLong { max: 10 },
        ),
    ];
    for (input, max_block, want) in cases {
        for chunk in 1..=input.len() {
            let parser = || SseParser::with_limits(10, 100).with_max_block(max_block);
            let mut events = parser();
            let mut blocks = parser();
            let (mut got_event, mut got_block) = (None, None);
            for piece in input.chunks(chunk) {
                events.feed(piece);
                blocks.feed(piece);
                got_event = got_event.or(events.next_event().err());
                got_block = got_block.or(blocks.next_block().err());
            }
            assert_eq!(got_event.as_ref(), Some(&want), "events, chunk {chunk}");
            assert_eq!(got_block.as_ref(), Some(&want), "blocks, chunk {chunk}");
        }
    }
}

/// The LF of a CR LF cut right after a block that `next_event` ended counts
/// in no block, so the block limit does not depend on the chunking.
#[test]
fn a_split_crlf_after_an_event_counts_in_no_block() {
    let input = b"data: 01\r\n\r\ndata: 0123456\r\n\r\n"; // blocks of 12 and 17 bytes
    for chunk in 1..=input.len() {
        let mut parser = SseParser::new().with_max_block(15);
        let mut got = Vec::new();
        for piece in input.chunks(chunk) {
            parser.feed(piece);
            while let Some(e) = parser.next_event().unwrap() {
                got.push(e);
            }
        }
        assert_eq!(parser.finish(), Ok(None));
        assert_eq!(got, [data("01"), data("0123456")], "chunk {chunk}");
    }
}
