use super::*;

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "msg_1".into(),
        model: "claude-x".into(),
        created: 1,
    }
}

fn encode(usage_hint: Usage, events: &[ChatEvent]) -> String {
    let mut enc = StreamEncoder::new(meta(), usage_hint);
    let mut out = BytesMut::new();
    for e in events {
        enc.push(e, &mut out);
    }
    enc.finish(&mut out);
    String::from_utf8(out.to_vec()).unwrap()
}

fn text(s: &str) -> ChatEvent {
    ChatEvent::TextDelta(s.into())
}

fn tool_start(index: u32, id: &str, name: &str) -> ChatEvent {
    ChatEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
    }
}

fn tool_delta(index: u32, arguments: &str) -> ChatEvent {
    ChatEvent::ToolCallDelta {
        index,
        arguments: arguments.into(),
    }
}

fn usage(input: Option<u32>, output: Option<u32>) -> ChatEvent {
    ChatEvent::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    })
}

/// Splits a stream into (event name, data JSON) pairs, checking the framing.
fn events_of(stream: &str) -> Vec<(String, serde_json::Value)> {
    assert!(stream.ends_with("\n\n"));
    stream
        .trim_end_matches('\n')
        .split("\n\n")
        .map(|frame| {
            let (event, data) = frame.split_once('\n').unwrap();
            let event = event.strip_prefix("event: ").unwrap();
            let data: serde_json::Value =
                serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(data["type"], event, "event name repeats the data type");
            (event.to_owned(), data)
        })
        .collect()
}

#[test]
fn text_stream_bytes() {
    let got = encode(
        Usage {
            input_tokens: Some(12),
            ..Usage::default()
        },
        &[
            ChatEvent::Start {
                id: Some("provider-id".into()),
                model: Some("provider-model".into()),
            },
            text("Hello"),
            text(""),
            text(", \"world\"\n🦀"),
            usage(None, Some(7)),
            ChatEvent::Stop {
                reason: StopReason::EndTurn,
                stop_sequence: None,
            },
        ],
    );
    let want = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":0}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\", \\\"world\\\"\\n🦀\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(got, want);
}

#[test]
fn thinking_text_and_two_tool_calls_bytes() {
    let got = encode(
        Usage::default(),
        &[
            ChatEvent::Usage(Usage {
                input_tokens: Some(100),
                cache_read_tokens: Some(80),
                cache_write_tokens: Some(20),
                ..Usage::default()
            }),
            ChatEvent::ThinkingDelta("Plan: ".into()),
            ChatEvent::ThinkingDelta("call both.".into()),
            ChatEvent::ThinkingSignature("c2ln".into()),
            ChatEvent::RedactedThinking("RED".into()),
            text("Checking."),
            tool_start(0, "toolu_a", "weather"),
            tool_delta(0, "{\"city\":"),
            tool_delta(0, "\"Paris\"}"),
            ChatEvent::ToolCallEnd { index: 0 },
            tool_start(1, "toolu_b", "time"),
            tool_delta(1, "{}"),
            ChatEvent::ToolCallEnd { index: 1 },
            usage(None, Some(42)),
            ChatEvent::Stop {
                reason: StopReason::EndTurn,
                stop_sequence: None,
            },
        ],
    );
    let want = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":100,\"cache_creation_input_tokens\":20,\"cache_read_input_tokens\":80,\"output_tokens\":0}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Plan: \"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"call both.\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2ln\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"RED\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Checking.\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"weather\",\"input\":{}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":3}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":4,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_b\",\"name\":\"time\",\"input\":{}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":4}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":42}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(got, want);
}

#[test]
fn error_mid_stream_bytes_and_nothing_after() {
    let mut enc = StreamEncoder::new(meta(), Usage::default());
    let mut out = BytesMut::new();
    enc.begin(&mut out);
    enc.push(&text("partial"), &mut out);
    enc.push(
        &ChatEvent::Error(StreamError {
            status: 529,
            kind: crate::StreamErrorKind::Overloaded,
            message: "Overloaded \"now\"".into(),
        }),
        &mut out,
    );
    let len = out.len();
    enc.push(&text("more"), &mut out);
    enc.push(&tool_start(0, "t", "f"), &mut out);
    enc.finish(&mut out);
    enc.begin(&mut out);
    assert_eq!(out.len(), len, "nothing is written after an error");
    let want = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial\"}}\n\n",
        "event: error\n",
        "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded \\\"now\\\"\"}}\n\n",
    );
    assert_eq!(String::from_utf8(out.to_vec()).unwrap(), want);
}

#[test]
fn error_event_alone() {
    let mut out = BytesMut::new();
    error_event(
        &StreamError {
            status: 500,
            kind: crate::StreamErrorKind::UpstreamApi,
            message: "boom\n".into(),
        },
        &mut out,
    );
    assert_eq!(
        &out[..],
        b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"upstream_api_error\",\"message\":\"boom\\n\"}}\n\n"
    );
}

#[test]
fn begin_is_idempotent_and_merges_early_usage() {
    let mut enc = StreamEncoder::new(
        meta(),
        Usage {
            input_tokens: Some(5),
            ..Usage::default()
        },
    );
    let mut out = BytesMut::new();
    enc.push(&usage(Some(9), Some(1)), &mut out);
    assert!(out.is_empty(), "usage alone writes nothing");
    enc.begin(&mut out);
    enc.begin(&mut out);
    enc.push(&text("x"), &mut out);
    let events = events_of(std::str::from_utf8(&out).unwrap());
    assert_eq!(events[0].0, "message_start");
    assert_eq!(
        events[0].1["message"]["usage"],
        serde_json::json!({"input_tokens": 9, "output_tokens": 1})
    );
    assert_eq!(events.iter().filter(|e| e.0 == "message_start").count(), 1);
}

#[test]
fn usage_known_only_at_the_end_is_repeated_in_message_delta() {
    let got = encode(
        Usage::default(),
        &[
            text("hi"),
            ChatEvent::Usage(Usage {
                input_tokens: Some(30),
                output_tokens: Some(2),
                cache_read_tokens: Some(10),
                cache_write_tokens: None,
            }),
        ],
    );
    let events = events_of(&got);
    let delta = &events[events.len() - 2];
    assert_eq!(delta.0, "message_delta");
    assert_eq!(
        delta.1["usage"],
        serde_json::json!({"input_tokens": 30, "cache_read_input_tokens": 10, "output_tokens": 2})
    );
    assert_eq!(delta.1["delta"]["stop_reason"], "end_turn");
}

#[test]
fn empty_stream_is_still_a_complete_message() {
    let events = events_of(&encode(Usage::default(), &[]));
    let names: Vec<_> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names, ["message_start", "message_delta", "message_stop"]);
}

#[test]
fn stop_sequence_and_max_tokens_are_reported() {
    let events = events_of(&encode(
        Usage::default(),
        &[
            text("a"),
            ChatEvent::Stop {
                reason: StopReason::StopSequence,
                stop_sequence: Some("\nEND".into()),
            },
        ],
    ));
    let delta = &events[events.len() - 2].1["delta"];
    assert_eq!(delta["stop_reason"], "stop_sequence");
    assert_eq!(delta["stop_sequence"], "\nEND");
    let events = events_of(&encode(
        Usage::default(),
        &[
            tool_start(0, "t", "f"),
            ChatEvent::Stop {
                reason: StopReason::MaxTokens,
                stop_sequence: None,
            },
        ],
    ));
    assert_eq!(
        events[events.len() - 2].1["delta"]["stop_reason"],
        "max_tokens",
        "a real stop reason is kept even with tool calls"
    );
}

/// Tool blocks in wire order with their joined `partial_json`.
fn tool_blocks(events: &[(String, serde_json::Value)]) -> Vec<(u64, String, String)> {
    let mut blocks: Vec<(u64, String, String)> = Vec::new();
    let mut open: Option<u64> = None;
    for (name, data) in events {
        match name.as_str() {
            "content_block_start" => {
                assert_eq!(open, None, "blocks never overlap");
                let index = data["index"].as_u64().unwrap();
                assert_eq!(index as usize, blocks.len(), "indices count from 0");
                open = Some(index);
                let block = &data["content_block"];
                let id = block["id"]
                    .as_str()
                    .unwrap_or(block["type"].as_str().unwrap());
                blocks.push((index, id.to_owned(), String::new()));
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap();
                assert_eq!(open, Some(index), "deltas go to the open block");
                if let Some(part) = data["delta"]["partial_json"].as_str() {
                    blocks[index as usize].2.push_str(part);
                }
            }
            "content_block_stop" => {
                assert_eq!(open, data["index"].as_u64());
                open = None;
            }
            _ => {}
        }
    }
    assert_eq!(open, None, "every block is closed");
    blocks
}

#[test]
fn interleaved_parallel_tool_calls_are_serialized() {
    let got = encode(
        Usage::default(),
        &[
            text("Both:"),
            tool_start(0, "call_a", "f"),
            tool_start(1, "call_b", "g"),
            tool_start(2, "call_c", "h"),
            tool_delta(1, "{\"y\":"),
            tool_delta(0, "{\"x\":"),
            tool_delta(2, "{\"z\":3}"),
            tool_delta(1, "2}"),
            tool_delta(0, "1}"),
            ChatEvent::ToolCallEnd { index: 2 },
            ChatEvent::ToolCallEnd { index: 0 },
            tool_delta(1, ""),
            ChatEvent::ToolCallEnd { index: 1 },
        ],
    );
    let events = events_of(&got);
    assert_eq!(
        tool_blocks(&events),
        vec![
            (0, "text".to_owned(), String::new()),
            (1, "call_a".to_owned(), "{\"x\":1}".to_owned()),
            (2, "call_b".to_owned(), "{\"y\":2}".to_owned()),
            (3, "call_c".to_owned(), "{\"z\":3}".to_owned()),
        ]
    );
    assert_eq!(
        events[events.len() - 2].1["delta"]["stop_reason"],
        "tool_use"
    );
}

#[test]
fn a_queued_call_still_streaming_becomes_the_open_block() {
    let got = encode(
        Usage::default(),
        &[
            tool_start(0, "a", "f"),
            tool_start(1, "b", "g"),
            tool_delta(1, "{\"k\":"),
            ChatEvent::ToolCallEnd { index: 0 },
            // b is now the open block: its fragments stream straight through.
            tool_delta(1, "\"v\"}"),
            ChatEvent::ToolCallEnd { index: 1 },
        ],
    );
    let events = events_of(&got);
    assert_eq!(
        tool_blocks(&events),
        vec![
            (0, "a".to_owned(), String::new()),
            (1, "b".to_owned(), "{\"k\":\"v\"}".to_owned()),
        ]
    );
    let b_deltas = events
        .iter()
        .filter(|(n, d)| n == "content_block_delta" && d["index"] == 1)
        .count();
    assert_eq!(b_deltas, 2, "buffered part, then the live fragment");
}

#[test]
fn text_after_unfinished_tool_calls_flushes_them_first() {
    let got = encode(
        Usage::default(),
        &[
            tool_start(0, "a", "f"),
            tool_start(1, "b", "g"),
            tool_delta(1, "{}"),
            text("done"),
        ],
    );
    let events = events_of(&got);
    assert_eq!(
        tool_blocks(&events),
        vec![
            (0, "a".to_owned(), String::new()),
            (1, "b".to_owned(), "{}".to_owned()),
            (2, "text".to_owned(), String::new()),
        ]
    );
}

#[test]
fn finish_closes_calls_that_never_ended() {
    let got = encode(
        Usage::default(),
        &[
            tool_start(0, "a", "f"),
            tool_delta(0, "{\"a\""),
            tool_start(1, "b", "g"),
            tool_delta(1, "{\"b\":1}"),
        ],
    );
    let events = events_of(&got);
    assert_eq!(
        tool_blocks(&events),
        vec![
            (0, "a".to_owned(), "{\"a\"".to_owned()),
            (1, "b".to_owned(), "{\"b\":1}".to_owned()),
        ]
    );
}

#[test]
fn a_signature_without_thinking_text_is_its_own_block() {
    let events = events_of(&encode(
        Usage::default(),
        &[
            text("a"),
            ChatEvent::ThinkingSignature("sig".into()),
            ChatEvent::ThinkingDelta("again".into()),
        ],
    ));
    let kinds: Vec<_> = events
        .iter()
        .filter(|e| e.0 == "content_block_start")
        .map(|e| e.1["content_block"]["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["text", "thinking", "thinking"]);
}

#[test]
fn output_is_valid_for_arbitrary_text() {
    let nasty = "\u{0}\u{1f}\"\\\r\n\t</script> 🦀 \u{2028}";
    let events = events_of(&encode(Usage::default(), &[text(nasty), text(nasty)]));
    let joined: String = events
        .iter()
        .filter_map(|e| e.1["delta"]["text"].as_str())
        .collect();
    assert_eq!(joined, nasty.repeat(2));
}
