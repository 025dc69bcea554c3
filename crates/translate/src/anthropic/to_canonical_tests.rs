use serde_json::{json, Map, Value};

use super::*;
use crate::model::ThinkingConfig;

fn parse(v: Value) -> w::MessagesRequest {
    serde_json::from_value(v).unwrap()
}

fn convert(v: Value) -> ChatRequest {
    into_chat_request(parse(v)).unwrap()
}

fn ephemeral() -> Option<Value> {
    Some(json!({"type": "ephemeral"}))
}

fn text(s: &str) -> ContentPart {
    ContentPart::Text {
        text: s.into(),
        cache_control: None,
    }
}

/// A Claude-Code-like conversation: cached system blocks, images, thinking
/// with signatures, redacted thinking, parallel tool calls and their results
/// (one an error, one with block content), emoji.
fn conversation() -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "system": [
            {"type": "text", "text": "You are Claude Code."},
            {"type": "text", "text": "Project rules…", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Compare these 🖼️", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/b.webp"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two lookups needed.", "signature": "EqQBsig"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "Looking both up."},
                {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "a.rs", "lines": [1, 20]}},
                {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_A", "content": "fn main() {}"},
                {"type": "tool_result", "tool_use_id": "toolu_B", "is_error": true, "content": [
                    {"type": "text", "text": "not found"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
                    {"type": "search_result", "source": "s", "title": "t", "content": []}
                ]},
                {"type": "text", "text": "Now explain."}
            ]},
            {"role": "assistant", "content": "Sure"}
        ],
        "stream": true,
        "stop_sequences": ["###"],
        "tools": [
            {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, "cache_control": {"type": "ephemeral"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": false},
        "thinking": {"type": "enabled", "budget_tokens": 4000},
        "metadata": {"user_id": "user_abc_account_1_session_2"},
        "context_management": {"edits": []}
    })
}

#[test]
fn converts_a_realistic_conversation() {
    let req = convert(conversation());
    let mut extra = Map::new();
    extra.insert("context_management".into(), json!({"edits": []}));
    let want = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: vec![
            SystemBlock {
                text: "You are Claude Code.".into(),
                cache_control: None,
            },
            SystemBlock {
                text: "Project rules…".into(),
                cache_control: ephemeral(),
            },
        ],
        messages: vec![
            Message {
                role: Role::User,
                content: vec![
                    ContentPart::Text {
                        text: "Compare these 🖼️".into(),
                        cache_control: ephemeral(),
                    },
                    ContentPart::Image(ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    }),
                    ContentPart::Image(ImageSource::Url("https://example.com/b.webp".into())),
                ],
                name: None,
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentPart::Thinking {
                        thinking: "Two lookups needed.".into(),
                        signature: Some("EqQBsig".into()),
                    },
                    ContentPart::RedactedThinking {
                        data: "EmwKAhgBEgy3va3pzix".into(),
                    },
                    text("Looking both up."),
                    ContentPart::ToolUse {
                        id: "toolu_A".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.rs","lines":[1,20]}"#.into(),
                    },
                    ContentPart::ToolUse {
                        id: "toolu_B".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    },
                ],
                name: None,
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentPart::ToolResult {
                        tool_use_id: "toolu_A".into(),
                        content: vec![ToolResultContent::Text("fn main() {}".into())],
                        is_error: false,
                    },
                    ContentPart::ToolResult {
                        tool_use_id: "toolu_B".into(),
                        content: vec![
                            ToolResultContent::Text("not found".into()),
                            ToolResultContent::Image(ImageSource::Base64 {
                                media_type: "image/jpeg".into(),
                                data: "/9j/".into(),
                            }),
                            ToolResultContent::Json(
                                json!({"type": "search_result", "source": "s", "title": "t", "content": []}),
                            ),
                        ],
                        is_error: true,
                    },
                    text("Now explain."),
                ],
                name: None,
            },
            Message {
                role: Role::Assistant,
                content: vec![text("Sure")],
                name: None,
            },
        ],
        tools: vec![Tool {
            name: "read_file".into(),
            description: Some("Read a file".into()),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            cache_control: ephemeral(),
        }],
        tool_choice: Some(ToolChoice::Auto),
        parallel_tool_calls: Some(true),
        max_tokens: Some(8192),
        temperature: None,
        top_p: None,
        top_k: None,
        presence_penalty: None,
        frequency_penalty: None,
        stop_sequences: vec!["###".into()],
        stream: true,
        include_usage: true,
        thinking: Some(ThinkingConfig {
            budget_tokens: Some(4000),
        }),
        reasoning_effort: None,
        user: Some("user_abc_account_1_session_2".into()),
        extra,
    };
    assert_eq!(req, want);
}

#[test]
fn tool_choice_kinds_and_the_parallel_switch() {
    let with_choice = |choice: Value| {
        let mut v =
            json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]});
        v["tool_choice"] = choice;
        let req = convert(v);
        (req.tool_choice, req.parallel_tool_calls)
    };
    assert_eq!(
        with_choice(json!({"type": "any"})),
        (Some(ToolChoice::Required), None)
    );
    assert_eq!(
        with_choice(json!({"type": "tool", "name": "f", "disable_parallel_tool_use": true})),
        (Some(ToolChoice::Tool("f".into())), Some(false))
    );
    assert_eq!(
        with_choice(json!({"type": "none"})),
        (Some(ToolChoice::None), None)
    );
    assert_eq!(
        with_choice(json!({"type": "auto"})),
        (Some(ToolChoice::Auto), None)
    );
    let err = into_chat_request(parse(json!({
        "model": "m", "max_tokens": 5, "messages": [], "tool_choice": {"type": "tool"}
    })))
    .unwrap_err();
    assert_eq!(
        err,
        TranslateError::invalid("tool_choice.name", "required when type is `tool`")
    );
}

#[test]
fn defaults_for_a_minimal_request() {
    let req = convert(json!({
        "model": "m", "max_tokens": 1,
        "messages": [{"role": "user", "content": ""}],
        "thinking": {"type": "disabled"},
        "system": ""
    }));
    assert!(req.system.is_empty());
    assert_eq!(req.messages[0].content, vec![text("")]);
    assert!(!req.stream);
    assert!(req.include_usage);
    assert_eq!(req.thinking, None);
    assert_eq!(req.user, None);
    assert!(req.extra.is_empty());
}

#[test]
fn string_system_and_empty_signature() {
    let req = convert(json!({
        "model": "m", "max_tokens": 1, "system": "Be brief.",
        "messages": [{"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": ""},
            {"type": "thinking", "thinking": "u"}
        ]}]
    }));
    assert_eq!(
        req.system,
        vec![SystemBlock {
            text: "Be brief.".into(),
            cache_control: None
        }]
    );
    assert_eq!(
        req.messages[0].content,
        vec![
            ContentPart::Thinking {
                thinking: "t".into(),
                signature: None
            },
            ContentPart::Thinking {
                thinking: "u".into(),
                signature: None
            },
        ]
    );
}

#[test]
fn an_unsupported_block_is_refused_with_its_path() {
    let err = into_chat_request(parse(json!({
        "model": "m", "max_tokens": 1,
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "user", "content": [
                {"type": "text", "text": "see"},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}
            ]}
        ]
    })))
    .unwrap_err();
    assert_eq!(
        err,
        TranslateError::invalid(
            "messages[1].content[1].type",
            "unsupported content block type `document`"
        )
    );
}

#[test]
fn a_bad_role_is_refused_without_panicking() {
    let req = w::MessagesRequest {
        model: "m".into(),
        messages: vec![w::InputMessage {
            role: "system".into(),
            content: w::MessageContent::Text("x".into()),
        }],
        ..w::MessagesRequest::default()
    };
    assert!(matches!(
        into_chat_request(req),
        Err(TranslateError::Invalid { field, .. }) if field == "messages[0].role"
    ));
}

#[test]
fn huge_content_is_carried_whole() {
    let big = "🦀 lorem ipsum \"quoted\"\n".repeat(40_000);
    let req = convert(json!({
        "model": "m", "max_tokens": 1,
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": big},
            {"type": "tool_result", "tool_use_id": "t", "content": big}
        ]}]
    }));
    assert_eq!(req.messages[0].content[0], text(&big));
    assert!(matches!(
        &req.messages[0].content[1],
        ContentPart::ToolResult { content, .. } if content == &vec![ToolResultContent::Text(big.clone())]
    ));
}
