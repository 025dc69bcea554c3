use super::*;
use serde_json::json;

fn check(body: Value) -> Result<(), String> {
    validate(Some(&body), 100, Endpoint::Messages)
        .map(|_| ())
        .map_err(|e| e.message)
}

fn base() -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 1024,
           "messages": [{"role": "user", "content": "hi"}]})
}

fn with(mut body: Value, key: &str, v: Value) -> Value {
    body[key] = v;
    body
}

#[test]
fn a_minimal_request_is_valid_and_unknown_fields_pass() {
    let body = with(base(), "vendor_future_field", json!({"x": 1}));
    let view = validate(Some(&body), 42, Endpoint::Messages).unwrap();
    assert_eq!(view.model, "claude-sonnet-4-5");
    assert!(!view.stream);
    assert_eq!(view.info.user_text, "hi");
    assert_eq!(view.info.body_len, 42);
    assert!(!view.info.cache_control);
}

#[test]
fn required_fields() {
    let mut b = base();
    b.as_object_mut().unwrap().remove("model");
    assert_eq!(check(b).unwrap_err(), "model: Field required");
    let mut b = base();
    b.as_object_mut().unwrap().remove("max_tokens");
    assert_eq!(check(b).unwrap_err(), "max_tokens: Field required");
    assert!(check(with(base(), "max_tokens", json!(0)))
        .unwrap_err()
        .contains("greater than or equal to 1"));
    assert!(check(with(base(), "max_tokens", json!("9")))
        .unwrap_err()
        .contains("valid integer"));
    assert_eq!(
        check(with(base(), "messages", json!([]))).unwrap_err(),
        "messages: at least one message is required"
    );
    assert!(validate(None, 0, Endpoint::Messages).is_err());
}

#[test]
fn count_tokens_needs_no_max_tokens() {
    let mut b = base();
    b.as_object_mut().unwrap().remove("max_tokens");
    assert!(validate(Some(&b), 10, Endpoint::CountTokens).is_ok());
}

#[test]
fn roles_alternate_from_user() {
    let two_users = json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]);
    assert!(check(with(base(), "messages", two_users))
        .unwrap_err()
        .contains("multiple \"user\" roles in a row"));
    let first_assistant = json!([{"role": "assistant", "content": "a"}]);
    assert!(check(with(base(), "messages", first_assistant))
        .unwrap_err()
        .contains("first message must use the \"user\" role"));
    let system = json!([{"role": "system", "content": "a"}]);
    assert!(check(with(base(), "messages", system))
        .unwrap_err()
        .contains("top-level `system` parameter"));
    // A final empty assistant message (prefill) is fine; an empty user one is not.
    let prefill = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}]);
    assert!(check(with(base(), "messages", prefill)).is_ok());
    let empty = json!([{"role": "user", "content": ""}]);
    assert!(check(with(base(), "messages", empty))
        .unwrap_err()
        .contains("non-empty content"));
}

#[test]
fn tool_results_follow_tool_uses() {
    let use_block = json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}});
    let ok = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use_block]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}]}
    ]);
    assert!(check(with(base(), "messages", ok)).is_ok());
    let stray = json!([
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "r"}]}
    ]);
    let e = check(with(base(), "messages", stray)).unwrap_err();
    assert!(
        e.starts_with("messages.0.content.0: unexpected `tool_use_id`"),
        "{e}"
    );
    let unanswered = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use_block]},
        {"role": "user", "content": "no result"}
    ]);
    let e = check(with(base(), "messages", unanswered)).unwrap_err();
    assert!(
        e.contains("without `tool_result` blocks immediately after: toolu_1"),
        "{e}"
    );
}

#[test]
fn blocks_need_their_fields() {
    let msgs = |block: Value| json!([{"role": "user", "content": [block]}]);
    let cases = [
        (
            json!({"type": "text", "text": ""}),
            "text content blocks must be non-empty",
        ),
        (
            json!({"type": "image_url", "image_url": {}}),
            "Input tag 'image_url'",
        ),
        (
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "x"}}),
            "media_type",
        ),
        (
            json!({"type": "thinking", "thinking": "t"}),
            "signature: Field required",
        ),
        (json!({"text": "x"}), "type: Field required"),
    ];
    for (block, expected) in cases {
        let e = check(with(base(), "messages", msgs(block))).unwrap_err();
        assert!(e.contains(expected), "{e}");
    }
}

#[test]
fn tools_choice_and_thinking() {
    assert!(check(with(base(), "tools", json!([{"name": "f"}])))
        .unwrap_err()
        .contains("input_schema"));
    assert!(check(with(
        base(),
        "tools",
        json!([{"type": "web_search_20250305", "name": "web_search"}])
    ))
    .is_ok());
    assert!(check(with(base(), "tool_choice", json!({"type": "tool"})))
        .unwrap_err()
        .contains("tool_choice.tool.name"));
    assert!(
        check(with(base(), "disable_parallel_tool_use", json!(true)))
            .unwrap_err()
            .contains("Extra inputs are not permitted")
    );
    let think = |budget: u64| json!({"type": "enabled", "budget_tokens": budget});
    assert!(check(with(base(), "thinking", think(1000)))
        .unwrap_err()
        .contains("1024"));
    assert!(check(with(base(), "thinking", think(1024)))
        .unwrap_err()
        .contains("`max_tokens` must be greater"));
    let mut b = with(
        with(base(), "max_tokens", json!(4096)),
        "thinking",
        think(2048),
    );
    assert!(check(b.clone()).is_ok());
    b["temperature"] = json!(0.5);
    assert!(check(b).unwrap_err().contains("temperature"));
}

#[test]
fn view_reads_tools_text_and_cache_control() {
    let body = json!({
        "model": "m", "max_tokens": 10, "stream": true,
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
        ]
    });
    let view = validate(Some(&body), 10, Endpoint::Messages).unwrap();
    assert!(view.stream && view.info.cache_control);
    assert_eq!(view.info.user_text, "a\nb");
    assert_eq!(view.info.tools[0].name, "read_file");
}
