use bytes::BytesMut;
use wire::sse::SseParser;

use super::*;
use crate::anthropic::StreamEncoder;
use crate::model::StopReason;
use crate::{Collector, ResponseMeta};

/// A stream as Anthropic sends it, written by hand: cache usage, a thinking
/// block with its signature, text, two tool calls with fragmented input, a
/// ping, and a CR LF line ending here and there.
const RECORDED: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_creation_input_tokens\":1024,\"cache_read_input_tokens\":2048,\"cache_creation\":{\"ephemeral_5m_input_tokens\":1024,\"ephemeral_1h_input_tokens\":0},\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n\n",
    "event: ping\n",
    "data: {\"type\": \"ping\"}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The user wants weather \"}}\n\n",
    "event: content_block_delta\r\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"in two cities.\"}}\r\n\r\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds==\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Checking both \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"cities ☀️.\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01A\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\": \\\"Par\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"is\\\"}\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01B\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\":\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"Tokyo\\\"}\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":3}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

/// Feeds `stream` in chunks of `chunk` bytes through the SSE parser and ours.
fn parse_stream(stream: &[u8], chunk: usize) -> Result<Vec<ChatEvent>, TranslateError> {
    let mut sse = SseParser::new();
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    for piece in stream.chunks(chunk.max(1)) {
        sse.feed(piece);
        while let Some(event) = sse.next_event().unwrap() {
            parser.push(&event, &mut out)?;
        }
    }
    while let Some(event) = sse.finish().unwrap() {
        parser.push(&event, &mut out)?;
    }
    parser.finish(&mut out);
    Ok(out)
}

fn recorded_events() -> Vec<ChatEvent> {
    vec![
        ChatEvent::Start {
            id: Some("msg_01XFDUDYJgAACzvnptvVoYEL".into()),
            model: Some("claude-sonnet-4-5-20250929".into()),
        },
        ChatEvent::Usage(Usage {
            input_tokens: Some(472),
            output_tokens: None,
            cache_read_tokens: Some(2048),
            cache_write_tokens: Some(1024),
        }),
        ChatEvent::ThinkingDelta("The user wants weather ".into()),
        ChatEvent::ThinkingDelta("in two cities.".into()),
        ChatEvent::ThinkingSignature(
            "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds==".into(),
        ),
        ChatEvent::TextDelta("Checking both ".into()),
        ChatEvent::TextDelta("cities ☀️.".into()),
        ChatEvent::ToolCallStart {
            index: 0,
            id: "toolu_01A".into(),
            name: "get_weather".into(),
        },
        ChatEvent::ToolCallDelta {
            index: 0,
            arguments: "{\"location\": \"Par".into(),
        },
        ChatEvent::ToolCallDelta {
            index: 0,
            arguments: "is\"}".into(),
        },
        ChatEvent::ToolCallEnd { index: 0 },
        ChatEvent::ToolCallStart {
            index: 1,
            id: "toolu_01B".into(),
            name: "get_weather".into(),
        },
        ChatEvent::ToolCallDelta {
            index: 1,
            arguments: "{\"location\":".into(),
        },
        ChatEvent::ToolCallDelta {
            index: 1,
            arguments: " \"Tokyo\"}".into(),
        },
        ChatEvent::ToolCallEnd { index: 1 },
        ChatEvent::Usage(Usage {
            output_tokens: Some(89),
            ..Usage::default()
        }),
        ChatEvent::Stop {
            reason: StopReason::ToolUse,
            stop_sequence: None,
        },
    ]
}

#[test]
fn parses_a_recorded_stream() {
    assert_eq!(
        parse_stream(RECORDED.as_bytes(), RECORDED.len()).unwrap(),
        recorded_events()
    );
}

#[test]
fn chunk_boundaries_do_not_matter() {
    for chunk in [1, 2, 3, 7, 64, 1000] {
        assert_eq!(
            parse_stream(RECORDED.as_bytes(), chunk).unwrap(),
            recorded_events(),
            "chunk size {chunk}"
        );
    }
}

#[test]
fn the_collected_answer_is_complete() {
    let mut collector = Collector::new();
    for e in recorded_events() {
        collector.push(e);
    }
    let answer = collector.finish().unwrap();
    assert_eq!(answer.text(), "Checking both cities ☀️.");
    assert_eq!(answer.thinking(), "The user wants weather in two cities.");
    assert_eq!(answer.usage.cache_read_tokens, Some(2048));
    assert_eq!(answer.usage.output_tokens, Some(89));
    assert_eq!(answer.content.len(), 4);
}

fn sse(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: Some(event.to_owned().into()),
        data: data.into(),
        ..SseEvent::default()
    }
}

#[test]
fn an_error_event_ends_the_stream() {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    parser
        .push(
            &sse(
                "message_start",
                r#"{"type":"message_start","message":{"id":"m"}}"#,
            ),
            &mut out,
        )
        .unwrap();
    parser
        .push(
            &sse(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            &mut out,
        )
        .unwrap();
    parser
        .push(
            &sse(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}"#,
            ),
            &mut out,
        )
        .unwrap();
    parser.finish(&mut out);
    assert_eq!(
        out,
        vec![
            ChatEvent::Start {
                id: Some("m".into()),
                model: None
            },
            ChatEvent::Error(StreamError {
                status: 529,
                kind: crate::StreamErrorKind::Overloaded,
                message: "Overloaded".into(),
            }),
        ]
    );
}

#[test]
fn provider_error_types_map_to_statuses() {
    let detail = |kind: &str| w::ErrorDetail {
        kind: kind.into(),
        message: "m".into(),
    };
    assert_eq!(provider_error(&detail("rate_limit_error")).status, 429);
    assert_eq!(
        provider_error(&detail("rate_limit_error")).kind,
        "upstream_api_error"
    );
    assert_eq!(provider_error(&detail("api_error")).status, 500);
    assert_eq!(provider_error(&detail("authentication_error")).status, 401);
    assert_eq!(provider_error(&detail("brand_new_error")).status, 500);
}

#[test]
fn a_cut_stream_ends_with_an_error() {
    let cut = &RECORDED[..RECORDED.find("event: content_block_stop").unwrap()];
    let events = parse_stream(cut.as_bytes(), 100).unwrap();
    let Some(ChatEvent::Error(err)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(err.status, 502);
    assert_eq!(err.kind, "upstream_api_error");
}

#[test]
fn a_stream_cut_after_its_stop_reason_is_complete() {
    let cut = &RECORDED[..RECORDED.find("event: message_stop").unwrap()];
    assert_eq!(
        parse_stream(cut.as_bytes(), 100).unwrap(),
        recorded_events()
    );
}

#[test]
fn ping_unknown_events_and_comment_only_events_are_ignored() {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    for (name, data) in [
        ("ping", r#"{"type":"ping"}"#),
        ("future_event", r#"{"type":"future_event","x":[1,2]}"#),
        ("message", ""),
    ] {
        parser.push(&sse(name, data), &mut out).unwrap();
    }
    assert!(out.is_empty());
}

#[test]
fn invalid_json_is_an_upstream_error() {
    let mut parser = StreamParser::new();
    let err = parser
        .push(&sse("content_block_delta", "{not json"), &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, TranslateError::Upstream(m) if m.contains("content_block_delta")));
}

#[test]
fn input_json_for_a_block_that_is_not_a_tool_is_an_error() {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    let err = parser
        .push(
            &sse(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
            &mut out,
        )
        .unwrap_err();
    assert!(matches!(err, TranslateError::Upstream(_)));
}

#[test]
fn content_inside_block_starts_is_not_lost() {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    for data in [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"whole thought","signature":"sig"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"ENC"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"whole text"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":1}}}"#,
        r#"{"type":"content_block_stop","index":3}"#,
        r#"{"type":"content_block_start","index":4,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}"#,
        r#"{"type":"content_block_stop","index":4}"#,
        r#"{"type":"content_block_delta","index":5,"delta":{"type":"citations_delta","citation":{}}}"#,
    ] {
        parser.push(&sse("x", data), &mut out).unwrap();
    }
    assert_eq!(
        out,
        vec![
            ChatEvent::ThinkingDelta("whole thought".into()),
            ChatEvent::ThinkingSignature("sig".into()),
            ChatEvent::RedactedThinking("ENC".into()),
            ChatEvent::TextDelta("whole text".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "t".into(),
                name: "f".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"a\":1}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
        ]
    );
}

#[test]
fn message_delta_with_full_usage_and_stop_sequence() {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    parser
        .push(
            &sse(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"input_tokens":10,"cache_read_input_tokens":0,"output_tokens":3}}"#,
            ),
            &mut out,
        )
        .unwrap();
    assert_eq!(
        out,
        vec![
            ChatEvent::Usage(Usage {
                input_tokens: Some(10),
                output_tokens: Some(3),
                cache_read_tokens: Some(0),
                cache_write_tokens: None,
            }),
            ChatEvent::Stop {
                reason: StopReason::StopSequence,
                stop_sequence: Some("END".into()),
            },
        ]
    );
}

/// Our encoder's output read back by our parser gives the same answer.
#[test]
fn encoder_output_parses_back_to_the_same_answer() {
    let mut reference = recorded_events();
    reference.push(ChatEvent::RedactedThinking("R".into()));
    // An empty delta writes nothing (and so creates no block).
    let mut events = reference.clone();
    events.insert(8, ChatEvent::TextDelta(String::new()));
    let mut encoder = StreamEncoder::new(
        ResponseMeta {
            id: "msg_x".into(),
            model: "m".into(),
            created: 0,
        },
        Usage::default(),
    );
    let mut bytes = BytesMut::new();
    for e in &events {
        encoder.push(e, &mut bytes);
    }
    encoder.finish(&mut bytes);
    let parsed = parse_stream(&bytes, 17).unwrap();

    let collect = |events: Vec<ChatEvent>| {
        let mut c = Collector::new();
        for e in events {
            if !matches!(e, ChatEvent::Start { .. }) {
                c.push(e);
            }
        }
        c.finish().unwrap()
    };
    let (want, got) = (collect(reference), collect(parsed));
    assert_eq!(got.content, want.content);
    assert_eq!(got.usage, want.usage);
    assert_eq!(got.stop_reason, want.stop_reason);
}
