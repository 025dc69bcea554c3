use serde_json::json;

use super::*;
use crate::anthropic::into_chat_request;
use crate::model::{Message, SystemBlock, ThinkingConfig, Tool};

fn round_trip(original: Value) -> Value {
    let parsed: w::MessagesRequest = serde_json::from_value(original).unwrap();
    let canonical = into_chat_request(parsed).unwrap();
    serde_json::to_value(from_chat_request(&canonical)).unwrap()
}

#[test]
fn round_trip_with_thinking_keeps_every_field() {
    let original = json!({
        "model": "claude-opus-4-1",
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Hi 👋", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGOD"}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/x.png"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig1"},
                {"type": "redacted_thinking", "data": "RED"},
                {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {"b": 2, "a": [1, {"z": null}]}},
                {"type": "tool_use", "id": "toolu_2", "name": "calc", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [
                    {"type": "text", "text": "bad"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}}
                ]},
                {"type": "tool_result", "tool_use_id": "toolu_3"},
                {"type": "text", "text": "go on"}
            ]},
            {"role": "assistant", "content": "Prefill"}
        ],
        "max_tokens": 16000,
        "system": [
            {"type": "text", "text": "sys one"},
            {"type": "text", "text": "sys two", "cache_control": {"type": "ephemeral"}}
        ],
        "stream": true,
        "top_p": 0.97,
        "stop_sequences": ["STOP", "\n\nEND"],
        "tools": [
            {"name": "calc", "description": "Adds", "input_schema": {"type": "object", "properties": {"a": {"type": "number"}}}, "cache_control": {"type": "ephemeral"}},
            {"name": "noop", "input_schema": {"type": "object"}}
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 10000},
        "service_tier": "standard_only",
        "container": {"id": "cntr_1", "skills": []},
        "mcp_servers": [{"type": "url", "url": "https://mcp.example.com", "name": "m"}]
    });
    assert_eq!(round_trip(original.clone()), original);
}

#[test]
fn round_trip_with_sampling_parameters() {
    let original = json!({
        "model": "claude-haiku-4-5",
        "messages": [{"role": "user", "content": "Hello"}],
        "max_tokens": 100,
        "system": "Be brief.",
        "stream": false,
        "temperature": 0.2,
        "top_p": 0.5,
        "top_k": 7,
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "f"}
    });
    assert_eq!(round_trip(original.clone()), original);
}

#[test]
fn round_trip_of_huge_and_empty_content() {
    let big = "x\u{1F980}\"".repeat(100_000);
    let original = json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": big},
            {"role": "assistant", "content": "ok"}
        ],
        "max_tokens": 5,
        "stream": false
    });
    assert_eq!(round_trip(original.clone()), original);
}

#[test]
fn metadata_is_not_forwarded() {
    let out = round_trip(json!({
        "model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
        "metadata": {"user_id": "u1"}
    }));
    assert!(out.get("metadata").is_none());
}

fn user(parts: Vec<ContentPart>) -> Message {
    Message {
        role: Role::User,
        content: parts,
        name: None,
    }
}

fn assistant(parts: Vec<ContentPart>) -> Message {
    Message {
        role: Role::Assistant,
        content: parts,
        name: Some("bot".into()),
    }
}

fn text(s: &str) -> ContentPart {
    ContentPart::Text {
        text: s.into(),
        cache_control: None,
    }
}

fn result(id: &str, content: &str) -> ContentPart {
    ContentPart::ToolResult {
        tool_use_id: id.into(),
        content: vec![ToolResultContent::Text(content.into())],
        is_error: false,
    }
}

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: None,
        input_schema: json!({"type": "object"}),
        cache_control: None,
    }
}

/// What an OpenAI-format client typically becomes.
fn openai_like() -> ChatRequest {
    let mut extra = Map::new();
    extra.insert("seed".into(), json!(7));
    extra.insert("response_format".into(), json!({"type": "text"}));
    extra.insert("service_tier".into(), json!("flex"));
    extra.insert("model".into(), json!("shadow"));
    extra.insert("custom_field".into(), json!(true));
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: vec![
            SystemBlock {
                text: "Be helpful.".into(),
                cache_control: None,
            },
            SystemBlock {
                text: String::new(),
                cache_control: None,
            },
        ],
        messages: vec![
            user(vec![text("Weather in Paris and Rome?")]),
            assistant(vec![
                text(""),
                ContentPart::Thinking {
                    thinking: "unsigned reasoning".into(),
                    signature: None,
                },
                ContentPart::ToolUse {
                    id: "call_1".into(),
                    name: "weather".into(),
                    arguments: "{\"city\":\"Paris\"}".into(),
                },
                ContentPart::ToolUse {
                    id: "call_2".into(),
                    name: "weather".into(),
                    arguments: "{\"city\":\"Ro".into(),
                },
            ]),
            user(vec![result("call_1", "sunny")]),
            user(vec![result("call_2", "rain")]),
            user(vec![
                text("Thanks!"),
                ContentPart::Image(ImageSource::Url("https://example.com/map.png".into())),
            ]),
            user(vec![text("")]),
        ],
        tools: vec![tool("weather")],
        tool_choice: None,
        parallel_tool_calls: Some(false),
        max_tokens: None,
        temperature: Some(0.7),
        top_p: Some(0.9),
        top_k: None,
        presence_penalty: Some(0.5),
        frequency_penalty: Some(0.5),
        stop_sequences: vec!["END".into()],
        stream: true,
        include_usage: true,
        thinking: None,
        reasoning_effort: None,
        user: Some("end-user".into()),
        extra,
    }
}

#[test]
fn an_openai_like_request_meets_anthropic_rules() {
    let out = serde_json::to_value(from_chat_request(&openai_like())).unwrap();
    let want = json!({
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_2", "name": "weather", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "rain"},
                {"type": "text", "text": "Thanks!"},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/map.png"}}
            ]}
        ],
        "max_tokens": 4096,
        "system": "Be helpful.",
        "stream": true,
        "temperature": 0.7,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
        "custom_field": true
    });
    assert_eq!(out, want);
}

#[test]
fn tool_results_open_the_user_turn() {
    let mut req = openai_like();
    req.messages = vec![
        assistant(vec![ContentPart::ToolUse {
            id: "a".into(),
            name: "f".into(),
            arguments: "{}".into(),
        }]),
        user(vec![text("first"), result("a", "r"), text("last")]),
    ];
    let out = from_chat_request(&req);
    let w::MessageContent::Blocks(blocks) = &out.messages[1].content else {
        panic!()
    };
    let kinds: Vec<_> = blocks.iter().map(|b| b.type_name()).collect();
    assert_eq!(kinds, ["tool_result", "text", "text"]);
}

#[test]
fn reasoning_effort_becomes_a_thinking_budget() {
    let mut req = openai_like();
    req.reasoning_effort = Some("low".into());
    req.top_k = Some(5);
    let out = from_chat_request(&req);
    assert_eq!(
        out.thinking,
        Some(w::ThinkingParam {
            kind: w::ThinkingKind::Enabled,
            budget_tokens: Some(2048)
        })
    );
    assert_eq!(out.max_tokens, Some(4096));
    assert_eq!(out.temperature, None, "thinking forbids temperature");
    assert_eq!(out.top_k, None);
    assert_eq!(out.top_p, None, "top_p below 0.95 is dropped with thinking");

    req.reasoning_effort = Some("high".into());
    req.max_tokens = Some(4000);
    let out = from_chat_request(&req);
    assert_eq!(out.thinking.unwrap().budget_tokens, Some(8192));
    assert_eq!(out.max_tokens, Some(12192), "the budget is added on top");

    req.reasoning_effort = Some("none".into());
    assert_eq!(from_chat_request(&req).thinking, None);

    for (effort, budget) in [("minimal", 1024), ("medium", 4096), ("xhigh", 4096)] {
        assert_eq!(effort_budget(effort), Some(budget));
    }
}

#[test]
fn forced_tool_use_turns_effort_thinking_off() {
    let mut req = openai_like();
    req.reasoning_effort = Some("high".into());
    req.tool_choice = Some(ToolChoice::Required);
    let out = from_chat_request(&req);
    assert_eq!(out.thinking, None);
    assert_eq!(out.temperature, Some(0.7));
    assert_eq!(
        out.tool_choice,
        Some(w::ToolChoice {
            kind: w::ToolChoiceKind::Any,
            name: None,
            disable_parallel_tool_use: Some(true)
        })
    );
}

#[test]
fn an_explicit_thinking_config_is_kept_and_made_valid() {
    let mut req = openai_like();
    req.thinking = Some(ThinkingConfig {
        budget_tokens: Some(500),
    });
    req.max_tokens = Some(1000);
    let out = from_chat_request(&req);
    assert_eq!(out.thinking.unwrap().budget_tokens, Some(1024));
    assert_eq!(out.max_tokens, Some(2024));

    req.thinking = Some(ThinkingConfig {
        budget_tokens: None,
    });
    req.max_tokens = None;
    let out = from_chat_request(&req);
    assert_eq!(out.thinking.unwrap().budget_tokens, Some(4096));
    assert_eq!(out.max_tokens, Some(8192));
}

#[test]
fn tool_choice_needs_tools_and_none_has_no_parallel_flag() {
    let mut req = openai_like();
    req.tool_choice = Some(ToolChoice::None);
    assert_eq!(
        from_chat_request(&req).tool_choice,
        Some(w::ToolChoice {
            kind: w::ToolChoiceKind::None,
            name: None,
            disable_parallel_tool_use: None
        })
    );
    req.tools.clear();
    req.tool_choice = Some(ToolChoice::Tool("weather".into()));
    assert_eq!(from_chat_request(&req).tool_choice, None);
    let mut req = openai_like();
    req.parallel_tool_calls = None;
    assert_eq!(from_chat_request(&req).tool_choice, None);
}

#[test]
fn tool_result_json_content_goes_back_as_blocks() {
    let mut req = openai_like();
    req.messages = vec![user(vec![ContentPart::ToolResult {
        tool_use_id: "t".into(),
        content: vec![
            ToolResultContent::Text(String::new()),
            ToolResultContent::Json(json!({"type": "search_result", "title": "x"})),
            ToolResultContent::Json(json!([1, 2])),
        ],
        is_error: false,
    }])];
    let out = serde_json::to_value(from_chat_request(&req)).unwrap();
    assert_eq!(
        out["messages"][0]["content"][0]["content"],
        json!([
            {"type": "search_result", "title": "x"},
            {"type": "text", "text": "[1,2]"}
        ])
    );
}

#[test]
fn adjacent_assistant_turns_merge() {
    let mut req = openai_like();
    req.messages = vec![
        user(vec![text("q")]),
        assistant(vec![text("a1")]),
        assistant(vec![text("a2")]),
    ];
    let out = from_chat_request(&req);
    assert_eq!(out.messages.len(), 2);
    assert!(matches!(&out.messages[1].content, w::MessageContent::Blocks(b) if b.len() == 2));
}
