use proptest::prelude::*;
use wire::sse::{SseEvent, SseParser};

use super::*;
use crate::model::{ChatEvent, StreamErrorKind};

fn ev(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(|name| name.to_owned().into()),
        data: data.to_owned(),
        ..SseEvent::default()
    }
}

#[test]
fn messages_format_usage_stop_and_errors() {
    let mut w = Watch::anthropic();
    let s = w.observe(&ev(
        Some("message_start"),
        r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,"cache_read_input_tokens":3,"output_tokens":1}}}"#,
    ));
    assert!(!s.substantive);
    assert!(
        !w.observe(&ev(Some("ping"), r#"{"type":"ping"}"#))
            .substantive
    );
    assert_eq!(w.ending(), Ending::Cut);
    assert!(
        w.observe(&ev(Some("vendor_extra"), r#"{"type":"vendor_extra"}"#))
            .substantive
    );
    w.observe(&ev(
        Some("message_delta"),
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
    ));
    assert_eq!(w.ending(), Ending::Complete);
    assert_eq!(
        w.usage(),
        Usage {
            input_tokens: Some(12),
            output_tokens: Some(7),
            cache_read_tokens: Some(3),
            cache_write_tokens: None
        }
    );
    let s = w.observe(&ev(
        Some("error"),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ));
    let err = s.error.unwrap();
    assert_eq!((err.status, err.message.as_str()), (529, "Overloaded"));
    assert_eq!(err.kind, StreamErrorKind::Overloaded);
    // An error event that is not the format's shape is still an error.
    let s = w.observe(&ev(Some("error"), "upstream exploded"));
    assert_eq!(
        s.error,
        Some(StreamError::upstream(502, "upstream exploded"))
    );
}

#[test]
fn chat_completions_usage_chunk_is_dropped_only_when_unwanted() {
    let usage_chunk = r#"{"id":"c","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":6}}}"#;
    let mut keep = Watch::openai(false);
    let mut strip = Watch::new(ClientFormat::OpenAi, true);
    let role = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
    assert!(
        !keep.observe(&ev(None, role)).substantive,
        "a role-only chunk starts nothing"
    );
    for w in [&mut keep, &mut strip] {
        w.observe(&ev(
            None,
            r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#,
        ));
        assert_eq!(w.ending(), Ending::Cut);
        w.observe(&ev(
            None,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ));
        assert_eq!(w.ending(), Ending::MissingDone);
    }
    assert!(!keep.observe(&ev(None, usage_chunk)).drop);
    assert!(strip.observe(&ev(None, usage_chunk)).drop);
    strip.observe(&ev(None, "[DONE]"));
    assert_eq!(strip.ending(), Ending::Complete);
    assert_eq!(strip.usage().input_tokens, Some(4));
    assert_eq!(strip.usage().cache_read_tokens, Some(6));
}

#[test]
fn chat_completions_errors_keep_their_status() {
    let mut w = Watch::openai(false);
    let s = w.observe(&ev(
        None,
        r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
    ));
    assert_eq!(s.error.unwrap().status, 429);
    let s = w.observe(&ev(Some("error"), r#"{"message":"boom","code":503}"#));
    assert_eq!(s.error.unwrap().status, 503);
}

/// The watch and the stream parser of a format classify an error the same
/// way: they share the format's one classifier.
#[test]
fn the_watch_reports_the_errors_the_parser_reports() {
    let cases: [(ClientFormat, Option<&str>, &str); 7] = [
        (
            ClientFormat::OpenAi,
            None,
            r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#,
        ),
        (
            ClientFormat::OpenAi,
            None,
            r#"{"error":{"message":"busy","type":"overloaded","code":null}}"#,
        ),
        (
            ClientFormat::OpenAi,
            Some("error"),
            r#"{"error":{"message":"m","code":"502"}}"#,
        ),
        (
            ClientFormat::OpenAi,
            Some("error"),
            r#"{"code":"insufficient_quota","message":""}"#,
        ),
        (ClientFormat::OpenAi, Some("error"), "not json at all"),
        (
            ClientFormat::Anthropic,
            Some("error"),
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"r"}}"#,
        ),
        (
            ClientFormat::Anthropic,
            Some("error"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"o"}}"#,
        ),
    ];
    for (format, name, data) in cases {
        let event = ev(name, data);
        let mut out = Vec::new();
        match format {
            ClientFormat::OpenAi => crate::openai::StreamParser::new().push(&event, &mut out),
            ClientFormat::Anthropic => crate::anthropic::StreamParser::new().push(&event, &mut out),
        }
        .unwrap();
        let parsed = out.into_iter().find_map(|e| match e {
            ChatEvent::Error(err) => Some(err),
            _ => None,
        });
        let seen = Watch::new(format, false).observe(&event);
        assert!(parsed.is_some(), "{data}");
        assert_eq!(seen.error, parsed, "{data}");
    }
}

/// The conformance fixtures: recorded provider streams of each format.
const FIXTURES: [(ClientFormat, &str); 7] = [
    (
        ClientFormat::OpenAi,
        include_str!("../tests/conformance/fixtures/openai/text.sse"),
    ),
    (
        ClientFormat::OpenAi,
        include_str!("../tests/conformance/fixtures/openai/thinking.sse"),
    ),
    (
        ClientFormat::OpenAi,
        include_str!("../tests/conformance/fixtures/openai/tools.sse"),
    ),
    (
        ClientFormat::OpenAi,
        include_str!("../tests/conformance/fixtures/openai/tools_interleaved.sse"),
    ),
    (
        ClientFormat::Anthropic,
        include_str!("../tests/conformance/fixtures/anthropic/text.sse"),
    ),
    (
        ClientFormat::Anthropic,
        include_str!("../tests/conformance/fixtures/anthropic/thinking.sse"),
    ),
    (
        ClientFormat::Anthropic,
        include_str!("../tests/conformance/fixtures/anthropic/tools.sse"),
    ),
];

/// What a relay makes of a stream: the bytes it forwards, each event's
/// verdict, the ending and the usage.
type Verdict = (Vec<u8>, Vec<Seen>, Ending, Usage);

fn relay(format: ClientFormat, strip_usage: bool, pieces: &[&[u8]]) -> Verdict {
    let mut parser = SseParser::new();
    let mut watch = Watch::new(format, strip_usage);
    let (mut forwarded, mut seen) = (Vec::new(), Vec::new());
    let mut take = |block: wire::sse::SseBlock, watch: &mut Watch| {
        let s = block
            .event
            .as_ref()
            .map(|e| watch.observe(e))
            .unwrap_or_default();
        if !s.drop {
            forwarded.extend_from_slice(&block.raw);
        }
        seen.push(s);
    };
    for piece in pieces {
        parser.feed(piece);
        while let Some(block) = parser.next_block().unwrap() {
            take(block, &mut watch);
        }
    }
    // A stream cut inside a multi-byte character ends with an unreadable
    // last block: the parser refuses it, whatever the chunking, and the
    // watch has seen everything before it.
    while let Ok(Some(block)) = parser.finish_block() {
        take(block, &mut watch);
    }
    (forwarded, seen, watch.ending(), watch.usage())
}

/// The usage a stream parser reports for the same stream.
fn parsed_usage(format: ClientFormat, stream: &str) -> Usage {
    let mut parser = SseParser::new();
    parser.feed(stream.as_bytes());
    let mut out = Vec::new();
    let (mut openai, mut anthropic) = (
        crate::openai::StreamParser::new(),
        crate::anthropic::StreamParser::new(),
    );
    while let Some(event) = parser.finish().unwrap() {
        match format {
            ClientFormat::OpenAi => openai.push(&event, &mut out).unwrap(),
            ClientFormat::Anthropic => anthropic.push(&event, &mut out).unwrap(),
        }
    }
    let mut usage = Usage::default();
    for e in &out {
        if let ChatEvent::Usage(u) = e {
            usage.merge(u);
        }
    }
    usage
}

#[test]
fn recorded_streams_complete_with_the_parsers_usage() {
    for (format, stream) in FIXTURES {
        let (forwarded, seen, ending, usage) = relay(format, false, &[stream.as_bytes()]);
        assert_eq!(
            forwarded,
            stream.as_bytes(),
            "nothing dropped when usage is wanted"
        );
        assert_eq!(ending, Ending::Complete);
        assert!(seen.iter().all(|s| s.error.is_none()));
        assert!(seen.iter().any(|s| s.substantive));
        let parsed = parsed_usage(format, stream);
        assert_eq!(usage.input_tokens, parsed.input_tokens);
        assert_eq!(usage.cache_read_tokens, parsed.cache_read_tokens);
        assert_eq!(usage.cache_write_tokens, parsed.cache_write_tokens);
        assert_eq!(usage.output_tokens, parsed.output_tokens);
    }
}

proptest! {
    /// However the provider's bytes are cut, the relay forwards the same
    /// bytes, and the watch gives the same verdicts, ending and usage; a
    /// stream cut anywhere gives the same verdict at any chunking too.
    #[test]
    fn the_verdict_does_not_depend_on_the_chunking(
        which in 0..FIXTURES.len(),
        strip in any::<bool>(),
        cut_at in any::<prop::sample::Index>(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let (format, stream) = FIXTURES[which];
        let full = stream.as_bytes();
        for input in [full, &full[..cut_at.index(full.len() + 1)]] {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
            at.extend([0, input.len()]);
            at.sort_unstable();
            let pieces: Vec<&[u8]> = at.windows(2).map(|w| &input[w[0]..w[1]]).collect();
            let whole = relay(format, strip, &[input]);
            prop_assert_eq!(relay(format, strip, &pieces), whole.clone());
            let dripped: Vec<&[u8]> = input.chunks(1).collect();
            prop_assert_eq!(relay(format, strip, &dripped), whole);
        }
    }
}
