use bytes::BytesMut;
use proptest::prelude::*;
use wire::openai::ChatCompletionChunk;
use wire::sse::SseParser;

use super::*;
use crate::model::{ChatEvent, StopReason, StreamError, Usage};
use crate::ResponseMeta;

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "chatcmpl-1".into(),
        model: "m".into(),
        created: 1_700_000_000,
    }
}

fn encode(include_usage: bool, events: &[ChatEvent]) -> String {
    let mut enc = StreamEncoder::new(meta(), include_usage);
    let mut out = BytesMut::new();
    for e in events {
        enc.push(e, &mut out);
    }
    enc.finish(&mut out);
    String::from_utf8(out.to_vec()).unwrap()
}

const HEAD: &str =
    r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m""#;

/// One content chunk with `finish_reason: null`.
fn chunk(delta: &str) -> String {
    format!("{HEAD},\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n")
}

fn finish_chunk(reason: &str) -> String {
    format!(
        "{HEAD},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{reason}\"}}]}}\n\n"
    )
}

fn usage_chunk(usage: &str) -> String {
    format!("{HEAD},\"choices\":[],\"usage\":{usage}}}\n\n")
}

const ROLE: &str = r#"{"role":"assistant","content":""}"#;
const DONE: &str = "data: [DONE]\n\n";

fn usage(input: u32, output: u32) -> ChatEvent {
    ChatEvent::Usage(Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        ..Usage::default()
    })
}

fn stop(reason: StopReason) -> ChatEvent {
    ChatEvent::Stop {
        reason,
        stop_sequence: None,
    }
}

#[test]
fn text_stream_exact_bytes() {
    let out = encode(
        true,
        &[
            ChatEvent::Start {
                id: Some("msg_x".into()),
                model: Some("provider-model".into()),
            },
            ChatEvent::TextDelta("Hel".into()),
            ChatEvent::Usage(Usage {
                input_tokens: Some(10),
                ..Usage::default()
            }),
            ChatEvent::TextDelta("lo \"wörld\" 👋\n".into()),
            ChatEvent::TextDelta(String::new()),
            stop(StopReason::EndTurn),
            ChatEvent::Usage(Usage {
                output_tokens: Some(5),
                cache_read_tokens: Some(90),
                ..Usage::default()
            }),
        ],
    );
    let expected = concat!(
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \\\"wörld\\\" 👋\\n\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"total_tokens\":105,\"prompt_tokens_details\":{\"cached_tokens\":90}}}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(out, expected);
}

#[test]
fn parallel_tool_call_stream_exact_bytes() {
    let out = encode(
        true,
        &[
            ChatEvent::TextDelta("Checking both.".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "call_a".into(),
                name: "weather".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"city\":".into(),
            },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "call_b".into(),
                name: "time".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "\"Paris\"}".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "{}".into(),
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::ToolCallEnd { index: 1 },
            usage(20, 30),
            // The provider said end_turn; a turn with tool calls still reports tool_calls.
            stop(StopReason::EndTurn),
        ],
    );
    let expected = [
        chunk(ROLE),
        chunk(r#"{"content":"Checking both."}"#),
        chunk(r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}]}"#),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}"#),
        chunk(r#"{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"time","arguments":""}}]}"#),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}"#),
        chunk(r#"{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}"#),
        finish_chunk("tool_calls"),
        usage_chunk(r#"{"prompt_tokens":20,"completion_tokens":30,"total_tokens":50}"#),
        DONE.to_string(),
    ]
    .concat();
    assert_eq!(out, expected);
}

#[test]
fn thinking_stream_uses_reasoning_content_and_skips_signatures() {
    let out = encode(
        true,
        &[
            ChatEvent::ThinkingDelta("Let me think".into()),
            ChatEvent::ThinkingDelta("…".into()),
            ChatEvent::ThinkingSignature("EqQBCgIYAhIM".into()),
            ChatEvent::RedactedThinking("opaque".into()),
            ChatEvent::TextDelta("42".into()),
            usage(3, 4),
            stop(StopReason::MaxTokens),
        ],
    );
    let expected = [
        chunk(ROLE),
        chunk(r#"{"reasoning_content":"Let me think"}"#),
        chunk(r#"{"reasoning_content":"…"}"#),
        chunk(r#"{"content":"42"}"#),
        finish_chunk("length"),
        usage_chunk(r#"{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}"#),
        DONE.to_string(),
    ]
    .concat();
    assert_eq!(out, expected);
}

#[test]
fn an_error_mid_stream_is_the_last_thing_written() {
    let mut enc = StreamEncoder::new(meta(), true);
    let mut out = BytesMut::new();
    enc.push(&ChatEvent::TextDelta("partial".into()), &mut out);
    enc.push(
        &ChatEvent::Error(StreamError {
            status: 529,
            kind: crate::StreamErrorKind::Overloaded,
            message: "Upstream is \"overloaded\"".into(),
        }),
        &mut out,
    );
    let after_error = out.len();
    enc.push(&ChatEvent::TextDelta("more".into()), &mut out);
    enc.push(&stop(StopReason::EndTurn), &mut out);
    enc.finish(&mut out);
    enc.finish(&mut out);
    assert_eq!(out.len(), after_error, "nothing after the error");
    let expected = [
        chunk(ROLE),
        chunk(r#"{"content":"partial"}"#),
        "data: {\"error\":{\"message\":\"Upstream is \\\"overloaded\\\"\",\"type\":\"overloaded_error\"}}\n\n"
            .to_string(),
    ]
    .concat();
    assert_eq!(String::from_utf8(out.to_vec()).unwrap(), expected);
}

#[test]
fn an_error_before_anything_writes_only_the_error() {
    let mut out = BytesMut::new();
    error_event(
        &StreamError {
            status: 500,
            kind: crate::StreamErrorKind::UpstreamApi,
            message: "boom".into(),
        },
        &mut out,
    );
    assert_eq!(
        &out[..],
        b"data: {\"error\":{\"message\":\"boom\",\"type\":\"upstream_api_error\"}}\n\n"
    );
}

#[test]
fn include_usage_false_writes_no_usage_chunk() {
    let out = encode(false, &[ChatEvent::TextDelta("hi".into()), usage(1, 1)]);
    let expected = [
        chunk(ROLE),
        chunk(r#"{"content":"hi"}"#),
        finish_chunk("stop"),
        DONE.to_string(),
    ]
    .concat();
    assert_eq!(out, expected);
}

#[test]
fn finish_without_stop_still_ends_properly() {
    // Tool calls and no Stop: finish reason tool_calls; unknown usage is 0.
    let out = encode(
        true,
        &[ChatEvent::ToolCallStart {
            index: 0,
            id: "c".into(),
            name: "f".into(),
        }],
    );
    let expected = [
        chunk(ROLE),
        chunk(r#"{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}"#),
        finish_chunk("tool_calls"),
        usage_chunk(r#"{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}"#),
        DONE.to_string(),
    ]
    .concat();
    assert_eq!(out, expected);

    // Nothing at all: role chunk, finish chunk, usage, done.
    let out = encode(false, &[]);
    assert_eq!(
        out,
        [chunk(ROLE), finish_chunk("stop"), DONE.to_string()].concat()
    );
}

#[test]
fn stop_reasons_map_to_finish_reasons() {
    for (reason, word) in [
        (StopReason::EndTurn, "stop"),
        (StopReason::StopSequence, "stop"),
        (StopReason::MaxTokens, "length"),
        (StopReason::ToolUse, "tool_calls"),
        (StopReason::ContentFilter, "content_filter"),
        (StopReason::Refusal, "content_filter"),
    ] {
        let out = encode(false, &[stop(reason)]);
        assert!(out.contains(&finish_chunk(word)), "{out}");
    }
}

#[test]
fn meta_with_special_characters_is_escaped() {
    let mut enc = StreamEncoder::new(
        ResponseMeta {
            id: "id\"1".into(),
            model: "a\\b".into(),
            created: 0,
        },
        false,
    );
    let mut out = BytesMut::new();
    enc.finish(&mut out);
    let text = String::from_utf8(out.to_vec()).unwrap();
    assert!(text.starts_with(
        r#"data: {"id":"id\"1","object":"chat.completion.chunk","created":0,"model":"a\\b","#
    ));
}

/// Parses the encoder's output with the SSE parser and serde, as a client would.
fn decode(bytes: &[u8]) -> (Vec<ChatCompletionChunk>, bool) {
    let mut parser = SseParser::new();
    parser.feed(bytes);
    let mut chunks = Vec::new();
    let mut done = false;
    while let Some(ev) = parser.next_event().unwrap() {
        if ev.data == "[DONE]" {
            done = true;
        } else {
            chunks.push(serde_json::from_str::<ChatCompletionChunk>(&ev.data).unwrap());
        }
    }
    (chunks, done)
}

proptest! {
    #[test]
    fn any_text_and_arguments_survive_a_client_parse(
        texts in proptest::collection::vec(any::<String>(), 0..8),
        args in proptest::collection::vec(any::<String>(), 0..4),
    ) {
        let mut events: Vec<ChatEvent> = texts.iter().cloned().map(ChatEvent::ThinkingDelta).collect();
        events.extend(texts.iter().cloned().map(ChatEvent::TextDelta));
        events.push(ChatEvent::ToolCallStart { index: 0, id: "i".into(), name: "n".into() });
        events.extend(args.iter().map(|a| ChatEvent::ToolCallDelta { index: 0, arguments: a.clone() }));
        let mut enc = StreamEncoder::new(meta(), true);
        let mut out = BytesMut::new();
        for e in &events {
            enc.push(e, &mut out);
        }
        enc.finish(&mut out);
        let (chunks, done) = decode(&out);
        prop_assert!(done);
        let mut text = String::new();
        let mut thinking = String::new();
        let mut arguments = String::new();
        for c in &chunks {
            prop_assert_eq!(&c.object, "chat.completion.chunk");
            if let Some(choice) = c.choices.first() {
                text.push_str(choice.delta.content.as_deref().unwrap_or_default());
                thinking.push_str(choice.delta.reasoning_content.as_deref().unwrap_or_default());
                for t in &choice.delta.tool_calls {
                    if let Some(f) = &t.function {
                        arguments.push_str(f.arguments.as_deref().unwrap_or_default());
                    }
                }
            }
        }
        prop_assert_eq!(text, texts.concat());
        prop_assert_eq!(thinking, texts.concat());
        prop_assert_eq!(arguments, args.concat());
        let last = chunks.last().unwrap();
        prop_assert!(last.choices.is_empty() && last.usage.is_some());
        let finish = &chunks[chunks.len() - 2].choices[0];
        prop_assert_eq!(finish.finish_reason.as_deref(), Some("tool_calls"));
    }
}
