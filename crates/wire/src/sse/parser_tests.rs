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
