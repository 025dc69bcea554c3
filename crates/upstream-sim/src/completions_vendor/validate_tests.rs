use super::*;
use serde_json::json;

fn check(body: Value) -> Result<ChatView<'static>, OpenAiError> {
    // Tests keep the body alive for the view's lifetime by leaking it.
    let body: &'static Value = Box::leak(Box::new(body));
    validate(Some(body), 100)
}

fn err(body: Value) -> OpenAiError {
    check(body).unwrap_err()
}

fn base() -> Value {
    json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
}

fn with(mut body: Value, key: &str, v: Value) -> Value {
    body[key] = v;
    body
}

#[test]
fn minimal_and_unknown_fields() {
    let view = check(with(base(), "vendor_future_field", json!(1))).unwrap();
    assert_eq!(view.model, "gpt-4o");
    assert!(!view.stream && !view.include_usage);
    assert_eq!(view.info.user_text, "hi");
}

#[test]
fn required_fields() {
    let mut b = base();
    b.as_object_mut().unwrap().remove("model");
    assert_eq!(err(b).message, "you must provide a model parameter");
    let mut b = base();
    b.as_object_mut().unwrap().remove("messages");
    let e = err(b);
    assert_eq!(e.message, "Missing required parameter: 'messages'.");
    assert_eq!(e.code.as_deref(), Some("missing_required_parameter"));
    let e = err(with(base(), "messages", json!([])));
    assert_eq!(e.code.as_deref(), Some("empty_array"));
    assert!(validate(None, 0).is_err());
}

#[test]
fn roles_and_content() {
    let e = err(with(
        base(),
        "messages",
        json!([{"role": "robot", "content": "x"}]),
    ));
    assert_eq!(e.param.as_deref(), Some("messages[0].role"));
    assert_eq!(e.code.as_deref(), Some("invalid_value"));
    let e = err(with(base(), "messages", json!([{"role": "user"}])));
    assert_eq!(e.param.as_deref(), Some("messages[0].content"));
    let e = err(with(
        base(),
        "messages",
        json!([{"role": "user", "content": [{"type": "image", "source": {}}]}]),
    ));
    assert_eq!(e.param.as_deref(), Some("messages[0].content[0].type"));
    let parts = json!([{"role": "user", "content": [
        {"type": "text", "text": "a"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
        {"type": "text", "text": "b"}]}]);
    let view = check(with(base(), "messages", parts)).unwrap();
    assert_eq!(view.info.user_text, "a\nb");
    assert!(view.images);
    assert!(!check(base()).unwrap().images);
}

#[test]
fn tool_messages_pair_with_calls() {
    let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}});
    let ok = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [call("call_1"), call("call_2")]},
        {"role": "tool", "tool_call_id": "call_2", "content": "r2"},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
        {"role": "user", "content": "thanks"}
    ]);
    assert!(check(with(base(), "messages", ok)).is_ok());
    let missing_one = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call("call_1"), call("call_2")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
        {"role": "user", "content": "next"}
    ]);
    let e = err(with(base(), "messages", missing_one));
    assert!(
        e.message
            .ends_with("did not have response messages: call_2"),
        "{}",
        e.message
    );
    let stray = json!([
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"}
    ]);
    assert!(err(with(base(), "messages", stray))
        .message
        .contains("must be a response to a preceeding message"));
    let no_id = json!([{"role": "tool", "content": "r"}]);
    assert_eq!(
        err(with(base(), "messages", no_id)).param.as_deref(),
        Some("messages[0].tool_call_id")
    );
    let object_args = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]}
    ]);
    let e = err(with(base(), "messages", object_args));
    assert_eq!(e.code.as_deref(), Some("invalid_type"));
    assert!(e.message.contains("expected a string, but got an object"));
}

#[test]
fn stream_options_and_tools() {
    let e = err(with(
        base(),
        "stream_options",
        json!({"include_usage": true}),
    ));
    assert!(e.message.contains("only allowed when 'stream' is enabled"));
    let b = with(
        with(base(), "stream", json!(true)),
        "stream_options",
        json!({"include_usage": true}),
    );
    let view = check(b).unwrap();
    assert!(view.stream && view.include_usage);
    let tools = json!([{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]);
    let view = check(with(base(), "tools", tools)).unwrap();
    assert_eq!(view.info.tools[0].name, "read_file");
    assert!(err(with(
        base(),
        "tools",
        json!([{"type": "function", "function": {}}])
    ))
    .message
    .contains("tools[0].function.name"));
}
