use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::answer_strategies;
use crate::model::{ImageSource, StopReason};
use crate::Collector;

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "msg_gw_1".into(),
        model: "claude-sonnet-4-5".into(),
        created: 1_700_000_000,
    }
}

fn collected() -> ChatResponse {
    ChatResponse {
        id: Some("provider-id".into()),
        model: Some("provider-model".into()),
        content: vec![
            ContentPart::Thinking {
                thinking: "Think 🤔".into(),
                signature: Some("sig".into()),
            },
            ContentPart::Thinking {
                thinking: "unsigned".into(),
                signature: None,
            },
            ContentPart::RedactedThinking { data: "RED".into() },
            ContentPart::Text {
                text: String::new(),
                cache_control: None,
            },
            ContentPart::Text {
                text: "Answer \"quoted\"".into(),
                cache_control: None,
            },
            ContentPart::ToolUse {
                id: "toolu_1".into(),
                name: "f".into(),
                arguments: "{\"x\":1}".into(),
            },
            ContentPart::ToolUse {
                id: "toolu_2".into(),
                name: "g".into(),
                arguments: "{\"trunc".into(),
            },
            ContentPart::Image(ImageSource::Url("u".into())),
        ],
        stop_reason: Some(StopReason::EndTurn),
        stop_sequence: None,
        usage: Usage {
            input_tokens: Some(11),
            output_tokens: Some(22),
            cache_read_tokens: Some(5),
            cache_write_tokens: None,
        },
    }
}

#[test]
fn renders_the_exact_body() {
    let body = serde_json::to_value(render_response(&collected(), &meta())).unwrap();
    assert_eq!(
        body,
        json!({
            "id": "msg_gw_1",
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Think 🤔", "signature": "sig"},
                {"type": "thinking", "thinking": "unsigned", "signature": ""},
                {"type": "redacted_thinking", "data": "RED"},
                {"type": "text", "text": "Answer \"quoted\""},
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}},
                {"type": "tool_use", "id": "toolu_2", "name": "g", "input": {}}
            ],
            "model": "claude-sonnet-4-5",
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": 11, "cache_read_input_tokens": 5, "output_tokens": 22}
        })
    );
}

#[test]
fn renders_stop_sequences_and_unknown_usage_as_zero() {
    let resp = ChatResponse {
        content: vec![ContentPart::Text {
            text: "a".into(),
            cache_control: None,
        }],
        stop_reason: Some(StopReason::StopSequence),
        stop_sequence: Some("END".into()),
        ..ChatResponse::default()
    };
    let body = serde_json::to_string(&render_response(&resp, &meta())).unwrap();
    assert_eq!(
        body,
        r#"{"id":"msg_gw_1","type":"message","role":"assistant","content":[{"type":"text","text":"a"}],"model":"claude-sonnet-4-5","stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":0,"output_tokens":0}}"#
    );
}

#[test]
fn a_provider_response_becomes_events() {
    let resp: w::MessagesResponse = serde_json::from_value(json!({
        "id": "msg_p", "type": "message", "role": "assistant", "model": "claude-p",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s1"},
            {"type": "text", "text": "Calling.", "citations": null},
            {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {"k": "v"}},
            {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "g", "input": {}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 1, "output_tokens": 4}
    }))
    .unwrap();
    assert_eq!(
        response_events(&resp),
        vec![
            ChatEvent::Start {
                id: Some("msg_p".into()),
                model: Some("claude-p".into())
            },
            ChatEvent::Usage(Usage {
                input_tokens: Some(3),
                output_tokens: Some(4),
                cache_read_tokens: None,
                cache_write_tokens: Some(1),
            }),
            ChatEvent::ThinkingDelta("hm".into()),
            ChatEvent::ThinkingSignature("s1".into()),
            ChatEvent::TextDelta("Calling.".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "toolu_a".into(),
                name: "f".into()
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"k\":\"v\"}".into()
            },
            ChatEvent::ToolCallEnd { index: 0 },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "toolu_b".into(),
                name: "g".into()
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "{}".into()
            },
            ChatEvent::ToolCallEnd { index: 1 },
            ChatEvent::Stop {
                reason: StopReason::ToolUse,
                stop_sequence: None
            },
        ]
    );
}

#[test]
fn a_provider_response_renders_back_unchanged() {
    let body = json!({
        "id": "msg_gw_1", "type": "message", "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "a", "signature": "b"},
            {"type": "redacted_thinking", "data": "c"},
            {"type": "text", "text": "d 🦀"},
            {"type": "tool_use", "id": "e", "name": "f", "input": {"g": [1, 2]}}
        ],
        "model": "claude-sonnet-4-5",
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 1, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3, "output_tokens": 4}
    });
    let resp: w::MessagesResponse = serde_json::from_value(body.clone()).unwrap();
    let mut collector = Collector::new();
    for e in response_events(&resp) {
        collector.push(e);
    }
    let rendered = render_response(&collector.finish().unwrap(), &meta());
    assert_eq!(serde_json::to_value(rendered).unwrap(), body);
}

#[test]
fn a_response_without_stop_reason_has_no_stop_event() {
    let resp: w::MessagesResponse =
        serde_json::from_value(json!({"id": "", "content": [], "model": ""})).unwrap();
    let events = response_events(&resp);
    assert_eq!(
        events[0],
        ChatEvent::Start {
            id: None,
            model: None
        }
    );
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Stop { .. })));
}

#[test]
fn the_written_body_of_every_kind_of_block_is_the_typed_objects() {
    let typed = serde_json::to_string(&render_response(&collected(), &meta())).unwrap();
    let mut written = Vec::new();
    write_response(&collected(), &meta(), &mut written);
    assert_eq!(String::from_utf8(written).unwrap(), typed);
}

proptest! {
    /// The hand-written body is byte for byte the typed object's.
    #[test]
    fn the_written_body_is_the_typed_objects(
        resp in answer_strategies::response(),
        meta in answer_strategies::meta(),
    ) {
        let typed = serde_json::to_string(&render_response(&resp, &meta)).unwrap();
        let mut written = Vec::new();
        write_response(&resp, &meta, &mut written);
        prop_assert_eq!(String::from_utf8(written).unwrap(), typed);
    }
}
