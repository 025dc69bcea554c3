use serde_json::{json, Value};
use wire::openai::ChatCompletionRequest;

use super::*;
use crate::model::{
    ChatRequest, ContentPart, ImageSource, Message, Role, SystemBlock, ThinkingConfig, Tool,
    ToolChoice, ToolResultContent,
};
use crate::TranslateError;

fn wire(v: Value) -> ChatCompletionRequest {
    serde_json::from_value(v).unwrap()
}

fn text(t: &str) -> ContentPart {
    ContentPart::Text {
        text: t.into(),
        cache_control: None,
    }
}

fn tool_use(id: &str, name: &str, args: &str) -> ContentPart {
    ContentPart::ToolUse {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    }
}

fn result(id: &str, t: &str) -> ContentPart {
    ContentPart::ToolResult {
        tool_use_id: id.into(),
        content: vec![ToolResultContent::Text(t.into())],
        is_error: false,
    }
}

#[test]
fn multi_turn_with_system_prompts_and_parallel_tool_calls() {
    let req = wire(json!({
        "model": "claude-sonnet-4.5",
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "developer", "content": [{"type": "text", "text": "Use metric units.", "cache_control": {"type": "ephemeral"}}]},
            {"role": "user", "content": "Weather in Paris and Tokyo?", "name": "ann"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_p", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_t", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Tokyo\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_p", "content": "18°C, cloudy"},
            {"role": "tool", "tool_call_id": "call_t", "content": [{"type": "text", "text": "25°C, sunny ☀️"}]},
            {"role": "user", "content": "And in Fahrenheit?"},
            {"role": "system", "content": "Answer briefly."},
            {"role": "assistant", "content": "Paris 64°F, Tokyo 77°F."},
            {"role": "user", "content": "Thanks 🙏"}
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "description": "Current weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "max_tokens": 300,
        "temperature": 0.2,
        "stop": "\n\n",
        "stream": true,
        "user": "user-7",
        "reasoning_effort": "high",
        "seed": 42,
        "response_format": {"type": "text"},
        "logprobs": false
    }));
    let c = into_chat_request(req).unwrap();
    assert_eq!(
        c.system,
        vec![
            SystemBlock {
                text: "You are a weather bot.".into(),
                cache_control: None
            },
            SystemBlock {
                text: "Use metric units.".into(),
                cache_control: Some(json!({"type": "ephemeral"}))
            },
            SystemBlock {
                text: "Answer briefly.".into(),
                cache_control: None
            },
        ]
    );
    assert_eq!(
        c.messages,
        vec![
            Message {
                role: Role::User,
                content: vec![text("Weather in Paris and Tokyo?")],
                name: Some("ann".into())
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    tool_use("call_p", "weather", "{\"city\":\"Paris\"}"),
                    tool_use("call_t", "weather", "{\"city\":\"Tokyo\"}"),
                ],
                name: None
            },
            Message {
                role: Role::User,
                content: vec![
                    result("call_p", "18°C, cloudy"),
                    result("call_t", "25°C, sunny ☀️"),
                    text("And in Fahrenheit?"),
                ],
                name: None
            },
            Message {
                role: Role::Assistant,
                content: vec![text("Paris 64°F, Tokyo 77°F.")],
                name: None
            },
            Message {
                role: Role::User,
                content: vec![text("Thanks 🙏")],
                name: None
            },
        ]
    );
    assert_eq!(
        c.tools,
        vec![Tool {
            name: "weather".into(),
            description: Some("Current weather".into()),
            input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            cache_control: None
        }]
    );
    assert_eq!(c.tool_choice, Some(ToolChoice::Auto));
    assert_eq!(c.parallel_tool_calls, Some(true));
    assert_eq!(c.max_tokens, Some(300));
    assert_eq!(c.stop_sequences, vec!["\n\n".to_string()]);
    assert!(c.stream);
    assert!(c.include_usage, "include_usage defaults to true");
    assert_eq!(c.user.as_deref(), Some("user-7"));
    assert_eq!(c.reasoning_effort.as_deref(), Some("high"));
    assert_eq!(c.thinking, None);
    assert_eq!(c.temperature, Some(0.2));
    assert_eq!(
        Value::Object(c.extra),
        json!({"logprobs": false, "response_format": {"type": "text"}, "seed": 42})
    );
}

#[test]
fn limits_and_options_follow_the_documented_precedence() {
    let c = into_chat_request(wire(json!({
        "model": "m", "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 10, "max_completion_tokens": 20,
        "stream_options": {"include_usage": false},
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "stop": ["a", "b"], "n": 1
    })))
    .unwrap();
    assert_eq!(c.max_tokens, Some(20));
    assert!(!c.include_usage);
    assert!(!c.stream);
    assert_eq!(c.tool_choice, Some(ToolChoice::Tool("f".into())));
    assert_eq!(c.stop_sequences, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(c.extra.get("n"), Some(&json!(1)));
}

#[test]
fn images_become_base64_or_url_sources() {
    let c = into_chat_request(wire(json!({"model": "m", "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "Compare"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "HTTPS://example.com/b.jpg"}},
            {"type": "image_url", "image_url": {"url": "DATA:image/jpeg;charset=x;BASE64,/9j/4AAQ"}}
        ]}
    ]})))
    .unwrap();
    assert_eq!(
        c.messages[0].content,
        vec![
            text("Compare"),
            ContentPart::Image(ImageSource::Base64 {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into()
            }),
            ContentPart::Image(ImageSource::Url("HTTPS://example.com/b.jpg".into())),
            ContentPart::Image(ImageSource::Base64 {
                media_type: "image/jpeg".into(),
                data: "/9j/4AAQ".into()
            }),
        ]
    );
}

#[test]
fn unusable_parts_and_urls_are_errors_naming_the_field() {
    let err = |v: Value| into_chat_request(wire(v)).unwrap_err();
    let e = err(
        json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "x"}, {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}
        ]}]}),
    );
    assert_eq!(
        e,
        TranslateError::invalid(
            "messages[0].content[1].type",
            "content part `input_audio` is not supported in user messages"
        )
    );
    let e = err(
        json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/svg+xml,<svg/>"}}
        ]}]}),
    );
    assert!(
        matches!(e, TranslateError::Invalid { ref field, .. } if field == "messages[0].content[0].image_url.url")
    );
    let e = err(
        json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "ftp://host/a.png"}}
        ]}]}),
    );
    assert!(matches!(e, TranslateError::Invalid { .. }));
    let e = err(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]}));
    assert!(
        matches!(e, TranslateError::Invalid { ref field, .. } if field == "messages[0].tool_call_id")
    );
}

#[test]
fn unicode_empty_and_huge_content_survive_untouched() {
    let huge = "日本語 and emoji 👩‍👩‍👧 ".repeat(40_000);
    let c = into_chat_request(wire(json!({"model": "m", "messages": [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": huge},
        {"role": "user", "content": "\u{0}\u{1f}\"\\"}
    ]})))
    .unwrap();
    assert_eq!(c.messages[0].content, vec![text("")]);
    assert_eq!(c.messages[1].content, vec![text(&huge)]);
    assert_eq!(c.messages[2].content, vec![text("\u{0}\u{1f}\"\\")]);
    let back = serde_json::to_value(from_chat_request(&c)).unwrap();
    assert_eq!(back["messages"][1]["content"], json!(huge));
    assert_eq!(back["messages"][0]["content"], json!(""));
}

#[test]
fn assistant_empty_text_next_to_tool_calls_is_dropped_and_refusals_kept() {
    let c = into_chat_request(wire(json!({"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    ]})))
    .unwrap();
    assert_eq!(c.messages[1].content, vec![tool_use("c1", "f", "")]);
    assert_eq!(c.messages[2].content, vec![result("c1", "done")]);
    assert_eq!(c.messages[3].content, vec![text("I can't help with that.")]);
}

/// A request already in the form the reverse conversion writes comes back
/// identical, unknown fields included.
#[test]
fn round_trip_keeps_every_field() {
    let original = json!({
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be helpful."},
            {"role": "user", "name": "bob", "content": [
                {"type": "text", "text": "What's here? 🧐"},
                {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklGRg=="}}
            ]},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "zoom", "arguments": "{\"x\":1}"}},
                {"id": "call_2", "type": "function", "function": {"name": "zoom", "arguments": "{\"x\":2"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a cat"},
            {"role": "tool", "tool_call_id": "call_2", "content": "a dog"},
            {"role": "user", "content": "Which is cuter?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "zoom", "arguments": "{}"}}
            ]}
        ],
        "stream": true,
        "temperature": 1.0,
        "top_p": 0.5,
        "max_completion_tokens": 512,
        "stop": ["END", "FIN"],
        "presence_penalty": 0.1,
        "frequency_penalty": 0.2,
        "tools": [{"type": "function", "function": {"name": "zoom", "description": "Zoom in",
            "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}}],
        "tool_choice": "required",
        "stream_options": {"include_usage": true},
        "n": 1,
        "user": "u1",
        "seed": -3,
        "parallel_tool_calls": false,
        "reasoning_effort": "minimal",
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
        "logit_bias": {"50256": -100},
        "service_tier": "auto",
        "store": false,
        "prediction": {"type": "content", "content": "x"}
    });
    let canonical = into_chat_request(wire(original.clone())).unwrap();
    let back = serde_json::to_value(from_chat_request(&canonical)).unwrap();
    assert_eq!(back, original);
}

/// What a round trip normalizes, each for a documented reason.
#[test]
fn round_trip_normalizations() {
    let canonical = into_chat_request(wire(json!({
        "model": "m",
        "messages": [
            {"role": "developer", "content": "A"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "B"}
        ],
        "max_tokens": 64,
        "stream": true,
        "stream_options": {"include_usage": false},
        "stop": "x",
        "parallel_tool_calls": true,
        "tool_choice": "none"
    })))
    .unwrap();
    let back = serde_json::to_value(from_chat_request(&canonical)).unwrap();
    assert_eq!(
        back,
        json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "A\n\nB"},
                {"role": "user", "content": "hi"}
            ],
            "stream": true,
            "max_completion_tokens": 64,
            "stop": "x",
            "stream_options": {"include_usage": true}
        })
    );
}

#[test]
fn canonical_requests_from_the_messages_format_relay_to_openai() {
    let canonical = ChatRequest {
        model: "gpt-4o".into(),
        system: vec![
            SystemBlock {
                text: "You are Claude Code.".into(),
                cache_control: None,
            },
            SystemBlock {
                text: "Project rules.".into(),
                cache_control: Some(json!({"type": "ephemeral"})),
            },
        ],
        messages: vec![
            Message {
                role: Role::User,
                content: vec![
                    text("Look at this"),
                    ContentPart::Image(ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "AAAA".into(),
                    }),
                ],
                name: None,
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentPart::Thinking {
                        thinking: "hmm".into(),
                        signature: Some("sig".into()),
                    },
                    ContentPart::RedactedThinking { data: "xx".into() },
                    text("Running tools."),
                    tool_use("toolu_1", "read", "{\"path\":\"a\"}"),
                    tool_use("toolu_2", "shot", "{}"),
                ],
                name: None,
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentPart::ToolResult {
                        tool_use_id: "toolu_1".into(),
                        content: vec![
                            ToolResultContent::Text("no such file".into()),
                            ToolResultContent::Json(json!({"errno": 2})),
                        ],
                        is_error: true,
                    },
                    ContentPart::ToolResult {
                        tool_use_id: "toolu_2".into(),
                        content: vec![ToolResultContent::Image(ImageSource::Url(
                            "https://x/s.png".into(),
                        ))],
                        is_error: false,
                    },
                    text("Continue."),
                ],
                name: None,
            },
        ],
        tools: vec![Tool {
            name: "read".into(),
            description: None,
            input_schema: json!({"type": "object"}),
            cache_control: Some(json!({"type": "ephemeral"})),
        }],
        tool_choice: Some(ToolChoice::Tool("read".into())),
        parallel_tool_calls: Some(false),
        max_tokens: Some(8192),
        temperature: None,
        top_p: None,
        top_k: Some(40),
        presence_penalty: None,
        frequency_penalty: None,
        stop_sequences: vec![],
        stream: true,
        include_usage: true,
        thinking: Some(ThinkingConfig {
            budget_tokens: Some(10_000),
        }),
        reasoning_effort: None,
        user: Some("user_abc".into()),
        extra: serde_json::from_value(json!({"service_tier": "auto", "model": "must not repeat"}))
            .unwrap(),
    };
    let out = serde_json::to_value(from_chat_request(&canonical)).unwrap();
    assert_eq!(
        out,
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are Claude Code.\n\nProject rules."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Look at this"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
                ]},
                {"role": "assistant", "content": "Running tools.", "tool_calls": [
                    {"id": "toolu_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
                    {"id": "toolu_2", "type": "function", "function": {"name": "shot", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "toolu_1", "content": [
                    {"type": "text", "text": "Error: no such file"},
                    {"type": "text", "text": "{\"errno\":2}"}
                ]},
                {"role": "tool", "tool_call_id": "toolu_2", "content": ""},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "https://x/s.png"}},
                    {"type": "text", "text": "Continue."}
                ]}
            ],
            "stream": true,
            "max_completion_tokens": 8192,
            "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}],
            "tool_choice": {"type": "function", "function": {"name": "read"}},
            "stream_options": {"include_usage": true},
            "user": "user_abc",
            "parallel_tool_calls": false,
            "reasoning_effort": "medium",
            "service_tier": "auto"
        })
    );
}

#[test]
fn tool_results_alone_make_no_empty_user_message() {
    let canonical = ChatRequest {
        model: "m".into(),
        messages: vec![
            Message {
                role: Role::Assistant,
                content: vec![tool_use("a", "f", "{}")],
                name: None,
            },
            Message {
                role: Role::User,
                content: vec![result("a", "ok")],
                name: None,
            },
        ],
        ..ChatRequest::default()
    };
    let out = serde_json::to_value(from_chat_request(&canonical)).unwrap();
    assert_eq!(
        out["messages"],
        json!([
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"}
        ])
    );
    assert!(out.get("stream").is_none());
    assert!(out.get("stream_options").is_none());
}

#[test]
fn thinking_budgets_map_to_efforts() {
    let effort = |b| effort_for_budget(ThinkingConfig { budget_tokens: b });
    assert_eq!(effort(None), "medium");
    assert_eq!(effort(Some(1_024)), "low");
    assert_eq!(effort(Some(4_095)), "low");
    assert_eq!(effort(Some(4_096)), "medium");
    assert_eq!(effort(Some(16_383)), "medium");
    assert_eq!(effort(Some(16_384)), "high");
    assert_eq!(effort(Some(31_999)), "high");

    let mut c = ChatRequest {
        model: "m".into(),
        thinking: Some(ThinkingConfig {
            budget_tokens: Some(2_000),
        }),
        ..ChatRequest::default()
    };
    assert_eq!(
        from_chat_request(&c).reasoning_effort.as_deref(),
        Some("low")
    );
    c.reasoning_effort = Some("high".into());
    assert_eq!(
        from_chat_request(&c).reasoning_effort.as_deref(),
        Some("high")
    );
}
