use bytes::BytesMut;
use serde_json::json;
use wire::openai::ChatCompletionResponse;
use wire::sse::{SseEvent, SseParser};

use super::*;
use crate::collect::Collector;
use crate::model::{ChatEvent, ContentPart, StopReason, StreamError, Usage};
use crate::{ResponseMeta, TranslateError};

/// Runs raw SSE bytes through the SSE parser and the stream parser.
fn parse_stream(raw: &str, finish: bool) -> Vec<ChatEvent> {
    let mut sse = SseParser::new();
    sse.feed(raw.as_bytes());
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    while let Some(ev) = sse.next_event().unwrap() {
        parser.push(&ev, &mut out).unwrap();
    }
    if finish {
        parser.finish(&mut out);
    }
    out
}

fn data(d: &str) -> SseEvent {
    SseEvent {
        event: None,
        data: d.to_owned(),
        id: None,
        retry: None,
    }
}

/// Written after a real `gpt-4o` stream with `include_usage`: role chunk,
/// content, two parallel tool calls with fragmented arguments, finish, usage.
const RECORDED: &str = concat!(
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"both 🌍.\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_P\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"ci\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ty\\\": \\\"Paris\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_T\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"city\\\": \"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"Tokyo\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-B9\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":48,\"total_tokens\":168,\"prompt_tokens_details\":{\"cached_tokens\":64,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n\n",
    "data: [DONE]\n\n",
);

#[test]
fn a_recorded_openai_stream_gives_the_expected_events() {
    let events = parse_stream(RECORDED, true);
    assert_eq!(
        events,
        vec![
            ChatEvent::Start {
                id: Some("chatcmpl-B9".into()),
                model: Some("gpt-4o-2024-08-06".into())
            },
            ChatEvent::TextDelta("Checking ".into()),
            ChatEvent::TextDelta("both 🌍.".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "call_P".into(),
                name: "get_weather".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"ci".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "ty\": \"Paris\"}".into()
            },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "call_T".into(),
                name: "get_weather".into()
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"city\": ".into()
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "\"Tokyo\"}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::ToolCallEnd { index: 1 },
            ChatEvent::Usage(Usage {
                input_tokens: Some(56),
                output_tokens: Some(48),
                cache_read_tokens: Some(64),
                cache_write_tokens: None
            }),
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );
}

#[test]
fn the_stream_split_at_every_byte_gives_the_same_events() {
    let whole = parse_stream(RECORDED, true);
    let mut sse = SseParser::new();
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    for b in RECORDED.as_bytes() {
        sse.feed(std::slice::from_ref(b));
        while let Some(ev) = sse.next_event().unwrap() {
            parser.push(&ev, &mut out).unwrap();
        }
    }
    parser.finish(&mut out);
    assert_eq!(out, whole);
}

#[test]
fn usage_precedes_stop_and_collects_with_the_usage_chunk() {
    let events = parse_stream(RECORDED, true);
    let mut c = Collector::new();
    for e in events {
        c.push(e);
    }
    let r = c.finish().unwrap();
    assert_eq!(r.text(), "Checking both 🌍.");
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        r.content[2],
        ContentPart::ToolUse {
            id: "call_T".into(),
            name: "get_weather".into(),
            arguments: "{\"city\": \"Tokyo\"}".into()
        }
    );
    // And back out to an OpenAI client: prompt tokens include the cached ones.
    let resp = render_response(
        &r,
        &ResponseMeta {
            id: "chatcmpl-gw".into(),
            model: "gpt-4o".into(),
            created: 5,
        },
    );
    let usage = resp.usage.unwrap();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (120, 48, 168)
    );
    assert_eq!(usage.prompt_tokens_details.unwrap().cached_tokens, Some(64));
}

#[test]
fn reasoning_in_both_spellings_becomes_thinking() {
    let raw = concat!(
        "data: {\"id\":\"a\",\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"Think\"}}]}\n\n",
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ing.\"}}]}\n\n",
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6,\"total_tokens\":11}}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(
        parse_stream(raw, true),
        vec![
            ChatEvent::Start {
                id: Some("a".into()),
                model: Some("deepseek-reasoner".into())
            },
            ChatEvent::ThinkingDelta("Think".into()),
            ChatEvent::ThinkingDelta("ing.".into()),
            ChatEvent::TextDelta("Done".into()),
            ChatEvent::Usage(Usage {
                input_tokens: Some(5),
                output_tokens: Some(6),
                cache_read_tokens: None,
                cache_write_tokens: None
            }),
            ChatEvent::Stop {
                reason: StopReason::EndTurn,
                stop_sequence: None
            },
        ]
    );
}

#[test]
fn an_error_object_in_the_stream_is_an_error_event_and_ends_it() {
    let raw = concat!(
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
        "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}\n\n",
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tial\"}}]}\n\n",
    );
    assert_eq!(
        parse_stream(raw, true),
        vec![
            ChatEvent::Start {
                id: Some("a".into()),
                model: None
            },
            ChatEvent::TextDelta("par".into()),
            ChatEvent::Error(StreamError {
                status: 429,
                kind: crate::StreamErrorKind::UpstreamApi,
                message: "Rate limit reached".into()
            }),
        ]
    );

    let raw = "event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"overloaded_error\"}}\n\n";
    assert_eq!(
        parse_stream(raw, true),
        vec![ChatEvent::Error(StreamError {
            status: 529,
            kind: crate::StreamErrorKind::UpstreamApi,
            message: "overloaded".into()
        })]
    );

    let raw = "data: {\"error\":{\"message\":\"bad\",\"code\":400}}\n\n";
    assert!(matches!(&parse_stream(raw, true)[0], ChatEvent::Error(e) if e.status == 400));
}

#[test]
fn a_cut_stream_is_an_error_not_a_clean_end() {
    let raw =
        "data: {\"id\":\"a\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n";
    let events = parse_stream(raw, true);
    assert!(matches!(events.last(), Some(ChatEvent::Error(e)) if e.status == 502));

    // finish_reason without [DONE] is a clean end (some servers omit it).
    let raw = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n";
    let events = parse_stream(raw, true);
    assert_eq!(
        events.last(),
        Some(&ChatEvent::Stop {
            reason: StopReason::MaxTokens,
            stop_sequence: None
        })
    );
}

#[test]
fn odd_tool_call_streams_are_assembled() {
    // Every call at index 0 with its own id, whole in one fragment (some
    // servers); a fragment without index continues the last call.
    let raw = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let events = parse_stream(raw, false);
    assert_eq!(
        &events[1..],
        &[
            ChatEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "f".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "b".into(),
                name: "g".into()
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"x\"".into()
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: ":1}".into()
            },
            ChatEvent::ToolCallEnd { index: 1 },
            // "stop" after tool calls reads as tool use.
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );

    // The name arrives after the first fragment: arguments wait for it.
    let mut p = StreamParser::new();
    let mut out = Vec::new();
    for d in [
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"late","function":{"arguments":"{\"a\""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"h","arguments":":2}"}}]}}]}"#,
        "[DONE]",
    ] {
        p.push(&data(d), &mut out).unwrap();
    }
    assert_eq!(
        &out[1..],
        &[
            ChatEvent::ToolCallStart {
                index: 0,
                id: "late".into(),
                name: "h".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"a\"".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: ":2}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );
}

#[test]
fn invalid_json_is_an_upstream_protocol_error_and_nothing_follows_done() {
    let mut p = StreamParser::new();
    let mut out = Vec::new();
    let err = p.push(&data("{not json"), &mut out).unwrap_err();
    assert!(matches!(err, TranslateError::Upstream(_)));
    p.push(&data("[DONE]"), &mut out).unwrap();
    p.push(
        &data(r#"{"choices":[{"index":0,"delta":{"content":"late"}}]}"#),
        &mut out,
    )
    .unwrap();
    p.finish(&mut out);
    assert_eq!(
        out,
        vec![ChatEvent::Stop {
            reason: StopReason::EndTurn,
            stop_sequence: None
        }]
    );
}

#[test]
fn other_choices_than_the_first_are_ignored() {
    let mut p = StreamParser::new();
    let mut out = Vec::new();
    p.push(
        &data(r#"{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}"#),
        &mut out,
    )
    .unwrap();
    assert_eq!(out[1], ChatEvent::TextDelta("mine".into()));
    assert_eq!(out.len(), 2);
}

#[test]
fn a_non_streaming_response_gives_the_same_events() {
    let resp: ChatCompletionResponse = serde_json::from_value(json!({
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {
            "role": "assistant", "content": "Sure.", "reasoning_content": "plan",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{\"x\":1}"}},
                {"id": "c2", "type": "function", "function": {"name": "b", "arguments": ""}}
            ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    }))
    .unwrap();
    assert_eq!(
        response_events(&resp),
        vec![
            ChatEvent::Start {
                id: Some("chatcmpl-9".into()),
                model: Some("gpt-4o".into())
            },
            ChatEvent::ThinkingDelta("plan".into()),
            ChatEvent::TextDelta("Sure.".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "c1".into(),
                name: "a".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"x\":1}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "c2".into(),
                name: "b".into()
            },
            ChatEvent::ToolCallEnd { index: 1 },
            ChatEvent::Usage(Usage {
                input_tokens: Some(9),
                output_tokens: Some(3),
                cache_read_tokens: None,
                cache_write_tokens: None
            }),
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );

    let refusal: ChatCompletionResponse = serde_json::from_value(json!({
        "choices": [{"message": {"content": null, "refusal": "No."}, "finish_reason": "stop"}]
    }))
    .unwrap();
    let events = response_events(&refusal);
    assert_eq!(
        events[0],
        ChatEvent::Start {
            id: None,
            model: None
        }
    );
    assert_eq!(events[1], ChatEvent::TextDelta("No.".into()));
    assert_eq!(
        events[2],
        ChatEvent::Stop {
            reason: StopReason::Refusal,
            stop_sequence: None
        }
    );
}

#[test]
fn render_response_shapes() {
    let meta = ResponseMeta {
        id: "chatcmpl-r".into(),
        model: "claude-sonnet-4.5".into(),
        created: 1_700_000_000,
    };
    let mut c = Collector::new();
    for e in [
        ChatEvent::ThinkingDelta("why".into()),
        ChatEvent::ThinkingSignature("sig".into()),
        ChatEvent::TextDelta("Hi ".into()),
        ChatEvent::TextDelta("there".into()),
        ChatEvent::Usage(Usage {
            input_tokens: Some(7),
            output_tokens: Some(2),
            cache_read_tokens: None,
            cache_write_tokens: Some(3),
        }),
        ChatEvent::Stop {
            reason: StopReason::EndTurn,
            stop_sequence: None,
        },
    ] {
        c.push(e);
    }
    let resp = render_response(&c.finish().unwrap(), &meta);
    assert_eq!(
        serde_json::to_value(&resp).unwrap(),
        json!({
            "id": "chatcmpl-r", "object": "chat.completion", "created": 1_700_000_000u64,
            "model": "claude-sonnet-4.5",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi there", "reasoning_content": "why"},
                "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        })
    );

    let mut c = Collector::new();
    c.push(ChatEvent::ToolCallStart {
        index: 0,
        id: "t".into(),
        name: "f".into(),
    });
    c.push(ChatEvent::ToolCallDelta {
        index: 0,
        arguments: "{}".into(),
    });
    c.push(ChatEvent::Stop {
        reason: StopReason::EndTurn,
        stop_sequence: None,
    });
    let resp = render_response(&c.finish().unwrap(), &meta);
    assert_eq!(
        serde_json::to_value(&resp.choices[0]).unwrap(),
        json!({"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]}, "finish_reason": "tool_calls"})
    );
}

#[test]
fn error_body_has_the_spec_shape() {
    let body = error_body(&StreamError {
        status: 400,
        kind: crate::StreamErrorKind::Overloaded,
        message: "messages: must not be empty".into(),
    });
    assert_eq!(
        serde_json::to_string(&body).unwrap(),
        r#"{"error":{"message":"messages: must not be empty","type":"overloaded_error"}}"#
    );
}

/// Provider stream -> events -> client stream: what a relay does end to end.
#[test]
fn parser_and_encoder_compose() {
    let events = parse_stream(RECORDED, true);
    let mut enc = StreamEncoder::new(
        ResponseMeta {
            id: "chatcmpl-gw".into(),
            model: "gpt-4o".into(),
            created: 9,
        },
        true,
    );
    let mut out = BytesMut::new();
    for e in &events {
        enc.push(e, &mut out);
    }
    enc.finish(&mut out);
    let text = String::from_utf8(out.to_vec()).unwrap();
    assert!(text.ends_with(
        "\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":48,\"total_tokens\":168,\"prompt_tokens_details\":{\"cached_tokens\":64}}}\n\ndata: [DONE]\n\n"
    ));
    assert!(text.contains("\"delta\":{},\"finish_reason\":\"tool_calls\""));
}
