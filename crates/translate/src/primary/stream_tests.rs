use super::*;
use crate::collect::Collector;
use crate::model::ContentPart;
use bytes::BytesMut;

fn ev<'a>(event_type: &'a str, payload: &'a str) -> Message<'a> {
    Message::Event {
        event_type,
        payload: payload.as_bytes(),
    }
}

fn run(opts: ParserOptions, msgs: &[Message<'_>]) -> (Vec<ChatEvent>, StreamSummary) {
    let mut p = StreamParser::new(opts);
    let mut out = Vec::new();
    for m in msgs {
        p.push(m, &mut out);
    }
    let summary = p.finish(&mut out);
    (out, summary)
}

fn text(s: &str) -> String {
    format!(r#"{{"content":{}}}"#, serde_json::to_string(s).unwrap())
}

const METERING: &str = r#"{"unit":"credit","unitPlural":"credits","usage":0.021}"#;

#[test]
fn the_documented_example_stream() {
    let msgs = [
        ev("assistantResponseEvent", r#"{"content":"Let me "}"#),
        ev("assistantResponseEvent", r#"{"content":"check."}"#),
        ev(
            "toolUseEvent",
            r#"{"name":"read_file","toolUseId":"tooluse_B7"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"input":"{\"pa","name":"read_file","toolUseId":"tooluse_B7"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"input":"th\":\"README.md\"}","name":"read_file","toolUseId":"tooluse_B7"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"name":"read_file","stop":true,"toolUseId":"tooluse_B7"}"#,
        ),
        ev("meteringEvent", METERING),
        ev("contextUsageEvent", r#"{"contextUsagePercentage":3.2}"#),
    ];
    let opts = ParserOptions {
        extract_thinking: true,
        context_window: Some(200_000),
        claude_tokens: false,
    };
    let (events, summary) = run(opts, &msgs);
    let output = crate::tokens::count_text("Let me check.{\"path\":\"README.md\"}");
    let usage = Usage {
        input_tokens: Some(6_400 - output),
        output_tokens: Some(output),
        ..Usage::default()
    };
    assert_eq!(
        events,
        vec![
            ChatEvent::TextDelta("Let me ".into()),
            ChatEvent::TextDelta("check.".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "tooluse_B7".into(),
                name: "read_file".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"pa".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "th\":\"README.md\"}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::Usage(usage),
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );
    assert!(summary.completion_signal);
    assert_eq!(summary.truncation, None);
    assert_eq!(summary.credits, Some(0.021));
    assert_eq!(summary.context_usage_percentage, Some(3.2));
    assert_eq!(summary.tool_calls, 1);
    assert_eq!(summary.stop_reason, Some(StopReason::ToolUse));
    assert!(!summary.usage_exact);

    let mut c = Collector::new();
    events.into_iter().for_each(|e| c.push(e));
    let resp = c.finish().unwrap();
    assert_eq!(resp.text(), "Let me check.");
    assert_eq!(
        resp.content[1],
        ContentPart::ToolUse {
            id: "tooluse_B7".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"README.md"}"#.into()
        }
    );
}

/// Thinking tags split between two events at every char boundary.
#[test]
fn thinking_split_at_every_position() {
    let answer = "<thinking>\nPlan: read → edit.\n</thinking>\n\nDone ✅";
    for at in (0..=answer.len()).filter(|&i| answer.is_char_boundary(i)) {
        let (a, b) = (text(&answer[..at]), text(&answer[at..]));
        let msgs = [
            ev("assistantResponseEvent", &a),
            ev("assistantResponseEvent", &b),
            ev("meteringEvent", METERING),
        ];
        let (events, summary) = run(
            ParserOptions {
                extract_thinking: true,
                context_window: None,
                claude_tokens: false,
            },
            &msgs,
        );
        let mut c = Collector::new();
        events.into_iter().for_each(|e| c.push(e));
        let resp = c.finish().unwrap();
        assert_eq!(resp.thinking(), "Plan: read → edit.", "split at {at}");
        assert_eq!(resp.text(), "Done ✅", "split at {at}");
        assert_eq!(resp.stop_reason, Some(StopReason::EndTurn));
        assert!(summary.truncation.is_none());
    }
    // With extraction off the tags are plain text.
    let whole = text(answer);
    let msgs = [ev("assistantResponseEvent", &whole)];
    let (events, _) = run(ParserOptions::default(), &msgs);
    assert_eq!(events[0], ChatEvent::TextDelta(answer.into()));
}

#[test]
fn exceptions_end_the_stream_with_a_mapped_status() {
    for (kind, status) in [
        ("ThrottlingException", 429),
        ("ValidationException", 400),
        ("internalServerException", 500),
        ("AccessDeniedException", 403),
        ("ServiceQuotaExceededException", 402),
        ("com.amazon.aws.codewhisperer#ThrottlingException", 429),
        ("SomethingNew", 500),
    ] {
        let msgs = [
            ev("assistantResponseEvent", r#"{"content":"partial"}"#),
            Message::Exception {
                exception_type: kind,
                payload: br#"{"message":"Too many requests","reason":"X"}"#,
            },
            ev("assistantResponseEvent", r#"{"content":"ignored"}"#),
        ];
        let (events, summary) = run(ParserOptions::default(), &msgs);
        let err = StreamError {
            status,
            kind: crate::StreamErrorKind::UpstreamApi,
            message: format!("{kind}: Too many requests (reason: X)"),
        };
        assert_eq!(
            events,
            vec![
                ChatEvent::TextDelta("partial".into()),
                ChatEvent::Error(err.clone())
            ],
            "{kind}"
        );
        assert_eq!(summary.error, Some(err));
        assert_eq!(summary.stop_reason, None);
        assert_eq!(summary.truncation, None);
    }
}

#[test]
fn error_frames_bad_payloads_and_invalid_state_are_errors() {
    let (events, _) = run(
        ParserOptions::default(),
        &[Message::Error {
            code: "InternalFailure",
            message: "boom",
        }],
    );
    assert_eq!(
        events,
        vec![ChatEvent::Error(StreamError {
            status: 500,
            kind: ERROR_KIND,
            message: "InternalFailure: boom".into()
        })]
    );

    let (events, _) = run(
        ParserOptions::default(),
        &[ev("assistantResponseEvent", r#"{"content":"#)],
    );
    assert!(
        matches!(&events[..], [ChatEvent::Error(e)] if e.status == 502
        && e.message.starts_with("malformed assistantResponseEvent payload"))
    );

    let (events, _) = run(
        ParserOptions::default(),
        &[ev(
            "invalidStateEvent",
            r#"{"reason":"INVALID_TASK","message":"cannot continue"}"#,
        )],
    );
    assert!(
        matches!(&events[..], [ChatEvent::Error(e)] if e.status == 500
        && e.message == "invalid state (INVALID_TASK): cannot continue")
    );

    // Held-back text is flushed before the error.
    let (events, _) = run(
        ParserOptions {
            extract_thinking: true,
            context_window: None,
            claude_tokens: false,
        },
        &[
            ev("assistantResponseEvent", r#"{"content":"<thin"}"#),
            Message::Exception {
                exception_type: "ThrottlingException",
                payload: b"not json",
            },
        ],
    );
    assert_eq!(events[0], ChatEvent::TextDelta("<thin".into()));
    assert!(
        matches!(&events[1], ChatEvent::Error(e) if e.message == "ThrottlingException: not json")
    );
    let (events, _) = run(
        ParserOptions::default(),
        &[Message::Exception {
            exception_type: "ThrottlingException",
            payload: b"{}",
        }],
    );
    assert!(
        matches!(&events[0], ChatEvent::Error(e) if e.message == "ThrottlingException: no message" && e.status == 429)
    );
    let (events, _) = run(
        ParserOptions::default(),
        &[Message::Exception {
            exception_type: "X",
            payload: b"",
        }],
    );
    assert!(matches!(&events[0], ChatEvent::Error(e) if e.message == "X: no message"));
}

#[test]
fn tool_calls_duplicates_objects_and_open_calls() {
    let msgs = [
        ev(
            "toolUseEvent",
            r#"{"name":"a","toolUseId":"t1","input":""}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"name":"a","toolUseId":"t1","stop":true}"#,
        ),
        // A repeat of the finished call is ignored.
        ev(
            "toolUseEvent",
            r#"{"name":"a","toolUseId":"t1","input":"{\"x\":1}"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"name":"b","toolUseId":"t2","input":{"path":"src"}}"#,
        ),
        // A new id ends the open call.
        ev(
            "toolUseEvent",
            r#"{"name":"c","toolUseId":"t3","input":"{\"q\":"}"#,
        ),
        // No id: continues the open call.
        ev("toolUseEvent", r#"{"input":"2}"}"#),
        ev(
            "metadataEvent",
            r#"{"tokenUsage":{"uncachedInputTokens":50,"outputTokens":7,"totalTokens":57,"cacheReadInputTokens":900}}"#,
        ),
    ];
    let (events, summary) = run(ParserOptions::default(), &msgs);
    let start = |index, id: &str, name: &str| ChatEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
    };
    let delta = |index, a: &str| ChatEvent::ToolCallDelta {
        index,
        arguments: a.into(),
    };
    assert_eq!(
        events,
        vec![
            start(0, "t1", "a"),
            delta(0, "{}"),
            ChatEvent::ToolCallEnd { index: 0 },
            start(1, "t2", "b"),
            delta(1, r#"{"path":"src"}"#),
            ChatEvent::ToolCallEnd { index: 1 },
            start(2, "t3", "c"),
            delta(2, r#"{"q":"#),
            delta(2, "2}"),
            ChatEvent::ToolCallEnd { index: 2 },
            ChatEvent::Usage(Usage {
                input_tokens: Some(50),
                output_tokens: Some(7),
                cache_read_tokens: Some(900),
                cache_write_tokens: None
            }),
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );
    assert!(summary.usage_exact);
    assert_eq!(summary.tool_calls, 3);
}

#[test]
fn native_reasoning_bypasses_the_tag_splitter() {
    let msgs = [
        ev("reasoningContentEvent", r#"{"text":"Thinking natively."}"#),
        ev("reasoningContentEvent", r#"{"signature":"sig-1"}"#),
        ev("reasoningContentEvent", r#"{"redactedContent":"b64=="}"#),
        ev(
            "assistantResponseEvent",
            r#"{"content":"<thinking>not a block</thinking>"}"#,
        ),
        ev("meteringEvent", METERING),
    ];
    let (events, summary) = run(
        ParserOptions {
            extract_thinking: true,
            context_window: None,
            claude_tokens: false,
        },
        &msgs,
    );
    assert_eq!(
        &events[..4],
        &[
            ChatEvent::ThinkingDelta("Thinking natively.".into()),
            ChatEvent::ThinkingSignature("sig-1".into()),
            ChatEvent::RedactedThinking("b64==".into()),
            ChatEvent::TextDelta("<thinking>not a block</thinking>".into()),
        ]
    );
    assert_eq!(
        events[5],
        ChatEvent::Stop {
            reason: StopReason::EndTurn,
            stop_sequence: None
        }
    );
    assert!(summary.has_text_output);
}

#[test]
fn a_stream_without_completion_signal_is_truncated() {
    let (events, summary) = run(
        ParserOptions::default(),
        &[ev("assistantResponseEvent", r#"{"content":"Once upon a"}"#)],
    );
    assert_eq!(
        events.last(),
        Some(&ChatEvent::Stop {
            reason: StopReason::MaxTokens,
            stop_sequence: None
        })
    );
    assert!(summary.truncation.unwrap().content);
    assert!(!summary.completion_signal);

    // Each completion signal alone is enough.
    for signal in [
        ev("meteringEvent", METERING),
        ev("contextUsageEvent", r#"{"contextUsagePercentage":1.0}"#),
        ev("metadataEvent", r#"{}"#),
        ev(
            "messageMetadataEvent",
            r#"{"tokenUsage":{"outputTokens":3}}"#,
        ),
    ] {
        let (events, summary) = run(
            ParserOptions::default(),
            &[
                ev("assistantResponseEvent", r#"{"content":"Whole."}"#),
                signal,
            ],
        );
        assert!(summary.completion_signal);
        assert_eq!(summary.truncation, None);
        assert!(matches!(
            events.last(),
            Some(ChatEvent::Stop {
                reason: StopReason::EndTurn,
                ..
            })
        ));
    }
    // A metadata event without token usage is not a signal.
    let (_, summary) = run(
        ParserOptions::default(),
        &[
            ev("assistantResponseEvent", r#"{"content":"x"}"#),
            ev("messageMetadataEvent", r#"{"conversationId":"c"}"#),
        ],
    );
    assert!(!summary.completion_signal);
}

#[test]
fn cut_tool_arguments_are_truncation_even_with_a_signal() {
    let msgs = [
        ev(
            "toolUseEvent",
            r#"{"name":"write","toolUseId":"t1","input":"{\"content\":\"abc"}"#,
        ),
        ev("meteringEvent", METERING),
    ];
    let (events, summary) = run(ParserOptions::default(), &msgs);
    let t = summary.truncation.unwrap();
    assert!(!t.content);
    assert_eq!(t.tools[0].id, "t1");
    assert_eq!(t.tools[0].name, "write");
    assert!(matches!(
        events.last(),
        Some(ChatEvent::Stop {
            reason: StopReason::MaxTokens,
            ..
        })
    ));
}

#[test]
fn empty_stream_and_second_finish() {
    let mut p = StreamParser::new(ParserOptions::default());
    let mut out = Vec::new();
    let s = p.finish(&mut out);
    assert_eq!(s.truncation, None);
    assert_eq!(s.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(out.len(), 2);
    let again = p.finish(&mut out);
    assert_eq!(out.len(), 2, "a second finish emits nothing");
    assert_eq!(again.stop_reason, None);
    p.push(
        &ev("assistantResponseEvent", r#"{"content":"late"}"#),
        &mut out,
    );
    assert_eq!(out.len(), 2);
}

#[test]
fn unknown_events_are_ignored() {
    let (events, _) = run(
        ParserOptions::default(),
        &[
            ev(
                "followupPromptEvent",
                r#"{"followupPrompt":{"content":"more?"}}"#,
            ),
            ev("codeReferenceEvent", r#"{"references":[]}"#),
            ev("initial-response", "{}"),
            ev(
                "assistantResponseEvent",
                r#"{"content":"hi","somethingNew":1}"#,
            ),
            ev("meteringEvent", METERING),
        ],
    );
    assert_eq!(events[0], ChatEvent::TextDelta("hi".into()));
    assert_eq!(events.len(), 3);
}

/// Deltas as the upstream escapes them (newlines, quotes, backslashes,
/// `\u` escapes and surrogate pairs), with extraction on and off.
#[test]
fn escaped_content_is_decoded() {
    let msgs = [
        ev(
            "assistantResponseEvent",
            r#"{"content":"<thinking>\nA \"plan\"\n"}"#,
        ),
        ev("assistantResponseEvent", r#"{"content":"</thinking>\n\n"}"#),
        ev(
            "assistantResponseEvent",
            r#"{"content":"C:\\dir\t\u00e9\ud83d\ude42\/"}"#,
        ),
        ev("assistantResponseEvent", r#"{"content":"plain"}"#),
        ev("meteringEvent", METERING),
    ];
    let on = ParserOptions {
        extract_thinking: true,
        context_window: None,
        claude_tokens: false,
    };
    let (events, summary) = run(on, &msgs);
    assert_eq!(
        events[..3],
        [
            ChatEvent::ThinkingDelta("A \"plan\"".into()),
            ChatEvent::TextDelta("C:\\dir\té🙂/".into()),
            ChatEvent::TextDelta("plain".into()),
        ]
    );
    let output = crate::tokens::count_text("A \"plan\"C:\\dir\té🙂/plain");
    assert_eq!(summary.usage.output_tokens, Some(output));

    let (events, _) = run(ParserOptions::default(), &msgs);
    assert_eq!(
        events[0],
        ChatEvent::TextDelta("<thinking>\nA \"plan\"\n".into())
    );
    assert_eq!(events[2], ChatEvent::TextDelta("C:\\dir\té🙂/".into()));
}

/// Members the parser does not know, of any JSON type and with escapes, are
/// skipped in every hot payload.
#[test]
fn unknown_fields_in_hot_payloads_are_ignored() {
    let msgs = [
        ev(
            "assistantResponseEvent",
            r#"{"citations":[{"u":"a\"b"}],"content":"Hi","modelId":"m","n":1.5}"#,
        ),
        ev(
            "reasoningContentEvent",
            r#"{"new":{"x":[null]},"text":"why","signature":"s"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"toolUseId":"t1","name":"f","input":"{\"a\":","extra":"}"}"#,
        ),
        ev(
            "toolUseEvent",
            r#"{"toolUseId":"t1","input":"1}","stop":true,"x":[]}"#,
        ),
        ev("meteringEvent", METERING),
    ];
    let (events, _) = run(ParserOptions::default(), &msgs);
    assert_eq!(
        events[..7],
        [
            ChatEvent::TextDelta("Hi".into()),
            ChatEvent::ThinkingDelta("why".into()),
            ChatEvent::ThinkingSignature("s".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "t1".into(),
                name: "f".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"a\":".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "1}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
        ]
    );
}

/// Empty or missing strings emit nothing, through the splitter or not, and
/// do not count as text output.
#[test]
fn empty_content_emits_nothing() {
    let msgs = [
        ev("assistantResponseEvent", r#"{"content":""}"#),
        ev("assistantResponseEvent", "{}"),
        ev("assistantResponseEvent", r#"{"modelId":"m"}"#),
        ev("reasoningContentEvent", r#"{"text":"","signature":""}"#),
        ev("toolUseEvent", r#"{"toolUseId":"t","name":"f","input":""}"#),
        ev(
            "toolUseEvent",
            r#"{"toolUseId":"t","input":null,"stop":true}"#,
        ),
        ev("meteringEvent", METERING),
    ];
    for extract_thinking in [false, true] {
        let opts = ParserOptions {
            extract_thinking,
            context_window: None,
            claude_tokens: false,
        };
        let (events, summary) = run(opts, &msgs);
        assert_eq!(
            events[..3],
            [
                ChatEvent::ToolCallStart {
                    index: 0,
                    id: "t".into(),
                    name: "f".into()
                },
                ChatEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{}".into()
                },
                ChatEvent::ToolCallEnd { index: 0 },
            ]
        );
        assert_eq!(events.len(), 5, "{events:?}");
        assert!(!summary.has_text_output);
    }
}

/// Real frames through the wire decoder, fed in small byte chunks that split
/// multi-byte characters.
#[test]
fn end_to_end_through_the_event_stream_decoder() {
    use wire::eventstream::{encode_event, Decoder};
    let mut bytes = BytesMut::new();
    encode_event(
        "assistantResponseEvent",
        text("<think>日本語で考える</think>\n\n答えは 42 🎉").as_bytes(),
        &mut bytes,
    );
    encode_event("meteringEvent", METERING.as_bytes(), &mut bytes);
    encode_event(
        "metadataEvent",
        br#"{"tokenUsage":{"uncachedInputTokens":10,"outputTokens":5}}"#,
        &mut bytes,
    );
    let wire_bytes = bytes.freeze();
    for chunk in [1usize, 3, 7, 64] {
        let mut decoder = Decoder::new();
        let mut buf = BytesMut::new();
        let mut parser = StreamParser::new(ParserOptions {
            extract_thinking: true,
            context_window: None,
            claude_tokens: false,
        });
        let mut out = Vec::new();
        for piece in wire_bytes.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(frame) = decoder.decode(&mut buf).unwrap() {
                parser.push(&frame.message().unwrap(), &mut out);
            }
        }
        let summary = parser.finish(&mut out);
        let mut c = Collector::new();
        out.into_iter().for_each(|e| c.push(e));
        let resp = c.finish().unwrap();
        assert_eq!(resp.thinking(), "日本語で考える");
        assert_eq!(resp.text(), "答えは 42 🎉");
        assert_eq!(resp.usage.input_tokens, Some(10));
        assert_eq!(resp.usage.output_tokens, Some(5));
        assert!(summary.completion_signal && summary.usage_exact);
    }
}

#[test]
fn exception_status_table() {
    assert_eq!(exception_status("ThrottlingException"), 429);
    assert_eq!(exception_status("ThrottlingError"), 429);
    assert_eq!(exception_status("ValidationException:http://internal"), 400);
    assert_eq!(exception_status("ServiceUnavailableException"), 503);
    assert_eq!(exception_status("ResourceNotFoundException"), 404);
    assert_eq!(exception_status("ConflictException"), 409);
    assert_eq!(exception_status("error"), 500);
    assert_eq!(exception_status(""), 500);
}

#[test]
fn a_long_answer_to_a_short_prompt_leaves_the_input_to_the_estimate() {
    // 0.1 % of 200,000 = 200 tokens in all, less than the answer's output:
    // the derived input would be 0, so none is reported.
    let long = "word ".repeat(400);
    let text = format!(r#"{{"content":"{long}"}}"#);
    let msgs = vec![
        ev("assistantResponseEvent", &text),
        ev("meteringEvent", METERING),
        ev("contextUsageEvent", r#"{"contextUsagePercentage":0.1}"#),
    ];
    let opts = ParserOptions {
        extract_thinking: false,
        context_window: Some(200_000),
        claude_tokens: false,
    };
    let (events, summary) = run(opts, &msgs);
    let usage = events
        .iter()
        .find_map(|e| match e {
            ChatEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .expect("a usage event");
    assert!(usage.output_tokens.is_some_and(|o| o > 200));
    assert_eq!(usage.input_tokens, None, "no input figure rather than 0");
    assert_eq!(summary.usage.input_tokens, None);
}

/// A Claude-family model's output estimate is scaled as its prompt's is
/// (`tokens::CLAUDE_CORRECTION`), and the input derived from the context
/// share is what is left of the total; another model's count stays raw.
#[test]
fn a_claude_models_output_estimate_is_scaled_like_its_prompt() {
    let text = "The answer, counted without an exact figure from the upstream. ".repeat(8);
    let payload = serde_json::json!({ "content": text }).to_string();
    let msgs = vec![
        ev("assistantResponseEvent", &payload),
        ev("meteringEvent", METERING),
        ev("contextUsageEvent", r#"{"contextUsagePercentage":3.2}"#),
    ];
    let raw = crate::tokens::count_text(&text);
    let scaled = crate::tokens::estimate_output(true, &text);
    assert!(scaled > raw, "{scaled} > {raw}");
    for (claude_tokens, output) in [(false, raw), (true, scaled)] {
        let opts = ParserOptions {
            extract_thinking: false,
            context_window: Some(200_000),
            claude_tokens,
        };
        let (_, summary) = run(opts, &msgs);
        assert_eq!(summary.usage.output_tokens, Some(output), "{claude_tokens}");
        assert_eq!(
            summary.usage.input_tokens,
            Some(6_400 - output),
            "{claude_tokens}"
        );
    }
}
