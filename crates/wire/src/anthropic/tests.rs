use serde_json::{json, Value};

use super::*;
use crate::validate::ValidationError;

fn parse(v: Value) -> MessagesRequest {
    serde_json::from_value(v).unwrap()
}

fn full_request() -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "system": [
            {"type": "text", "text": "You are terse."},
            {"type": "text", "text": "Big context", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "What is here? 🦀", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig=="},
                {"type": "redacted_thinking", "data": "ENCRYPTED"},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x", "n": 2}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                    {"type": "text", "text": "found"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}}
                ], "is_error": false, "cache_control": {"type": "ephemeral"}}
            ]}
        ],
        "stream": true,
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 40,
        "stop_sequences": ["\n\nHuman:"],
        "tools": [
            {"name": "lookup", "description": "Look up", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}, "cache_control": {"type": "ephemeral"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1", "session": "s"},
        "service_tier": "auto",
        "container": {"id": "c1"}
    })
}

#[test]
fn parses_every_field_and_block_kind() {
    let req = parse(full_request());
    assert_eq!(req.model, "claude-sonnet-4-5");
    assert_eq!(req.max_tokens, Some(2048));
    let Some(SystemPrompt::Blocks(system)) = &req.system else {
        panic!("system blocks")
    };
    assert_eq!(system[1].cache_control, Some(json!({"type": "ephemeral"})));
    let MessageContent::Blocks(first) = &req.messages[0].content else {
        panic!()
    };
    assert!(
        matches!(&first[0], ContentBlock::Text(t) if t.text == "What is here? 🦀" && t.cache_control.is_some())
    );
    assert!(
        matches!(&first[1], ContentBlock::Image(ImageBlock { source: ImageSource::Base64 { media_type, .. }, .. }) if media_type == "image/png")
    );
    assert!(
        matches!(&first[2], ContentBlock::Image(ImageBlock { source: ImageSource::Url { url }, .. }) if url == "https://example.com/a.jpg")
    );
    assert!(matches!(&first[3], ContentBlock::Other(m) if m["type"] == "document"));
    assert_eq!(first[3].type_name(), "document");
    let MessageContent::Blocks(second) = &req.messages[1].content else {
        panic!()
    };
    assert!(
        matches!(&second[0], ContentBlock::Thinking(t) if t.signature.as_deref() == Some("sig=="))
    );
    assert!(matches!(&second[1], ContentBlock::RedactedThinking(r) if r.data == "ENCRYPTED"));
    assert!(matches!(&second[2], ContentBlock::ToolUse(t) if t.input == json!({"q": "x", "n": 2})));
    let MessageContent::Blocks(third) = &req.messages[2].content else {
        panic!()
    };
    let ContentBlock::ToolResult(result) = &third[0] else {
        panic!()
    };
    assert_eq!(result.is_error, Some(false));
    assert!(matches!(&result.content, Some(ToolResultContent::Blocks(b)) if b.len() == 2));
    assert!(
        matches!(&req.tools[0], Tool::Custom(t) if t.name == "lookup" && t.cache_control.is_some())
    );
    assert!(matches!(&req.tools[1], Tool::Server(m) if m["max_uses"] == 3));
    let choice = req.tool_choice.as_ref().unwrap();
    assert_eq!(choice.kind, ToolChoiceKind::Auto);
    assert_eq!(choice.disable_parallel_tool_use, Some(true));
    assert_eq!(req.thinking.unwrap().budget_tokens, Some(1024));
    assert_eq!(
        req.metadata.as_ref().unwrap().user_id.as_deref(),
        Some("u-1")
    );
    assert_eq!(
        req.extra.keys().collect::<Vec<_>>(),
        vec!["service_tier", "container"]
    );
    assert_eq!(validate(&req), Ok(()));
}

#[test]
fn serializing_a_parsed_request_gives_the_same_json() {
    let original = full_request();
    let req = parse(original.clone());
    assert_eq!(serde_json::to_value(&req).unwrap(), original);
}

#[test]
fn string_content_and_string_system() {
    let req = parse(json!({
        "model": "m", "max_tokens": 10, "system": "be nice",
        "messages": [{"role": "user", "content": "hi"}]
    }));
    assert_eq!(req.system, Some(SystemPrompt::Text("be nice".into())));
    assert_eq!(req.messages[0].content, MessageContent::Text("hi".into()));
    let back = serde_json::to_string(&req).unwrap();
    assert_eq!(
        back,
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":10,"system":"be nice"}"#
    );
}

#[test]
fn a_malformed_known_block_is_an_error_naming_the_block() {
    let body =
        r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text"}]}]}"#;
    let err = serde_json::from_str::<MessagesRequest>(body)
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid `text` block"), "{err}");
    assert!(err.contains("missing field `text`"), "{err}");
    let body =
        r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"text":"x"}]}]}"#;
    assert!(serde_json::from_str::<MessagesRequest>(body).is_err());
    let body = r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":42}]}"#;
    let err = serde_json::from_str::<MessagesRequest>(body)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a string or an array of content blocks"),
        "{err}"
    );
}

#[test]
fn system_blocks_must_be_text() {
    let body =
        r#"{"model":"m","max_tokens":1,"system":[{"type":"image","text":"x"}],"messages":[]}"#;
    assert!(serde_json::from_str::<MessagesRequest>(body).is_err());
}

#[test]
fn missing_required_fields_are_left_to_the_validator() {
    let req: MessagesRequest = serde_json::from_str("{}").unwrap();
    assert_eq!(
        validate(&req),
        Err(ValidationError::new(
            "model",
            "required (a non-empty string)"
        ))
    );
    let req = parse(json!({"model": "m"}));
    assert_eq!(
        validate(&req).unwrap_err().to_string(),
        "messages: must not be empty"
    );
    let req = parse(json!({"model": "m", "messages": [{"role": "user", "content": "x"}]}));
    assert_eq!(
        validate(&req).unwrap_err().to_string(),
        "max_tokens: required"
    );
}

fn base() -> Value {
    json!({"model": "m", "max_tokens": 2000, "messages": [{"role": "user", "content": "x"}]})
}

fn field_of(patch: impl FnOnce(&mut Value)) -> String {
    let mut v = base();
    patch(&mut v);
    validate(&parse(v)).unwrap_err().field
}

#[test]
fn validation_rules_name_their_field() {
    assert_eq!(field_of(|v| v["max_tokens"] = json!(0)), "max_tokens");
    assert_eq!(field_of(|v| v["temperature"] = json!(1.5)), "temperature");
    assert_eq!(field_of(|v| v["temperature"] = json!(-0.1)), "temperature");
    assert_eq!(field_of(|v| v["top_p"] = json!(1.01)), "top_p");
    assert_eq!(
        field_of(|v| v["messages"][0]["role"] = json!("tool")),
        "messages[0].role"
    );
    assert_eq!(
        field_of(|v| v["tools"] = json!([{"name": "", "input_schema": {"type": "object"}}])),
        "tools[0].name"
    );
    assert_eq!(
        field_of(|v| v["tools"] = json!([{"name": "a"}])),
        "tools[0].input_schema"
    );
    assert_eq!(
        field_of(|v| v["tools"] = json!([
            {"name": "a", "input_schema": {}},
            {"name": "a", "input_schema": {}}
        ])),
        "tools[1].name"
    );
    assert_eq!(
        field_of(|v| v["tool_choice"] = json!({"type": "tool"})),
        "tool_choice.name"
    );
    assert_eq!(
        field_of(|v| v["thinking"] = json!({"type": "enabled", "budget_tokens": 1023})),
        "thinking.budget_tokens"
    );
    assert_eq!(
        field_of(|v| v["thinking"] = json!({"type": "enabled", "budget_tokens": 2000})),
        "thinking.budget_tokens"
    );
    assert_eq!(
        field_of(|v| v["thinking"] = json!({"type": "enabled"})),
        "thinking.budget_tokens"
    );
    assert_eq!(
        field_of(|v| v["messages"] = json!([
            {"role": "user", "content": "x"},
            {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
        ])),
        "messages[1].content[0].type"
    );
    assert_eq!(
        field_of(|v| v["messages"] = json!([
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
        ])),
        "messages[0].content[0].type"
    );
    assert_eq!(
        field_of(|v| v["messages"] = json!([
            {"role": "user", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}
        ])),
        "messages[0].content[0].type"
    );
}

#[test]
fn valid_edges_pass() {
    let mut v = base();
    v["temperature"] = json!(1.0);
    v["top_p"] = json!(0.0);
    v["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    v["tool_choice"] = json!({"type": "tool", "name": "f"});
    assert_eq!(validate(&parse(v)), Ok(()));
    let mut v = base();
    v["thinking"] = json!({"type": "disabled"});
    assert_eq!(validate(&parse(v)), Ok(()));
}

#[test]
fn a_system_role_points_to_the_system_field() {
    let mut v = base();
    v["messages"][0]["role"] = json!("system");
    let err = validate(&parse(v)).unwrap_err();
    assert_eq!(err.field, "messages[0].role");
    assert!(err.rule.contains("top-level `system`"));
}

#[test]
fn parses_every_stream_event() {
    let lines = [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"cited_text":"x"}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"brand_new_delta","x":1}}"#,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#"{"type":"something_new","foo":1}"#,
    ];
    let events: Vec<StreamEvent> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let StreamEvent::MessageStart { message } = &events[0] else {
        panic!()
    };
    assert_eq!(message.id.as_deref(), Some("msg_1"));
    let usage = message.usage.unwrap();
    assert_eq!(usage.input_tokens, Some(12));
    assert_eq!(usage.cache_creation_input_tokens, Some(3));
    assert_eq!(usage.cache_read_input_tokens, Some(4));
    assert!(
        matches!(&events[1], StreamEvent::ContentBlockStart { index: 0, content_block: ContentBlock::Thinking(t) } if t.signature.as_deref() == Some(""))
    );
    assert!(
        matches!(&events[2], StreamEvent::ContentBlockDelta { delta: BlockDelta::ThinkingDelta { thinking }, .. } if thinking == "hm")
    );
    assert!(
        matches!(&events[3], StreamEvent::ContentBlockDelta { delta: BlockDelta::SignatureDelta { signature }, .. } if signature == "sig")
    );
    assert!(
        matches!(&events[4], StreamEvent::ContentBlockStart { index: 1, content_block: ContentBlock::ToolUse(t) } if t.id == "toolu_1")
    );
    assert!(
        matches!(&events[5], StreamEvent::ContentBlockDelta { delta: BlockDelta::InputJsonDelta { partial_json }, .. } if partial_json == "{\"a\"")
    );
    assert!(matches!(
        &events[6],
        StreamEvent::ContentBlockDelta {
            delta: BlockDelta::CitationsDelta { .. },
            ..
        }
    ));
    assert!(matches!(
        &events[7],
        StreamEvent::ContentBlockDelta {
            delta: BlockDelta::Unknown,
            ..
        }
    ));
    assert!(
        matches!(&events[8], StreamEvent::ContentBlockStart { content_block: ContentBlock::Other(m), .. } if m["name"] == "web_search")
    );
    assert_eq!(events[9], StreamEvent::ContentBlockStop { index: 1 });
    let StreamEvent::MessageDelta { delta, usage } = &events[10] else {
        panic!()
    };
    assert_eq!(delta.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(delta.stop_sequence, None);
    assert_eq!(usage.output_tokens, Some(42));
    assert_eq!(events[11], StreamEvent::MessageStop);
    assert_eq!(events[12], StreamEvent::Ping);
    assert!(
        matches!(&events[13], StreamEvent::Error { error } if error.kind == "overloaded_error" && error.message == "Overloaded")
    );
    assert_eq!(events[14], StreamEvent::Unknown);
}

#[test]
fn response_keeps_null_stop_fields_and_omits_unknown_cache_usage() {
    let resp = MessagesResponse {
        id: "msg_1".into(),
        kind: "message".into(),
        role: "assistant".into(),
        content: vec![
            ContentBlock::Thinking(ThinkingBlock {
                thinking: "t".into(),
                signature: Some("s".into()),
            }),
            ContentBlock::Text(TextBlock {
                text: "Hi \"there\"".into(),
                ..TextBlock::default()
            }),
            ContentBlock::ToolUse(ToolUseBlock {
                id: "toolu_1".into(),
                name: "f".into(),
                input: json!({"a": 1}),
                cache_control: None,
            }),
        ],
        model: "claude".into(),
        stop_reason: Some("tool_use".into()),
        stop_sequence: None,
        usage: Usage {
            input_tokens: 5,
            output_tokens: 7,
            ..Usage::default()
        },
    };
    assert_eq!(
        serde_json::to_string(&resp).unwrap(),
        r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"Hi \"there\""},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}],"model":"claude","stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}"#
    );
    let back: MessagesResponse =
        serde_json::from_str(&serde_json::to_string(&resp).unwrap()).unwrap();
    assert_eq!(back, resp);
}

#[test]
fn error_bodies_have_their_own_shapes() {
    assert_eq!(
        serde_json::to_string(&ErrorBody::new("validation_error", "max_tokens: required")).unwrap(),
        r#"{"error":{"message":"max_tokens: required","type":"validation_error"}}"#
    );
    let provider: ProviderErrorBody = serde_json::from_str(
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}"#,
    )
    .unwrap();
    assert_eq!(provider.error.kind, "rate_limit_error");
    assert_eq!(provider.request_id.as_deref(), Some("req_1"));
    assert_eq!(
        serde_json::to_string(&provider).unwrap(),
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}"#
    );
}
