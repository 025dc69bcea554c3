use serde_json::{json, Value};

use super::*;

fn parse(v: Value) -> ChatCompletionRequest {
    serde_json::from_value(v).unwrap()
}

fn parse_err(v: Value) -> String {
    serde_json::from_value::<ChatCompletionRequest>(v)
        .unwrap_err()
        .to_string()
}

fn full_request() -> Value {
    json!({
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Be terse."},
            {"role": "system", "content": [{"type": "text", "text": "Cached", "cache_control": {"type": "ephemeral"}}]},
            {"role": "user", "name": "ann", "content": [
                {"type": "text", "text": "What is in this picture? 🐈"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "high"}},
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "look", "arguments": "{\"q\":1}"}}
            ], "refusal": null},
            {"role": "tool", "tool_call_id": "call_1", "content": "a cat"}
        ],
        "stream": true,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 100,
        "max_completion_tokens": 200,
        "stop": ["END", "STOP"],
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "tools": [{"type": "function", "function": {
            "name": "look", "description": "Look closer",
            "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]},
            "strict": true
        }}],
        "tool_choice": {"type": "function", "function": {"name": "look"}},
        "stream_options": {"include_usage": false, "include_obfuscation": false},
        "n": 1,
        "user": "u-42",
        "seed": 7,
        "parallel_tool_calls": false,
        "reasoning_effort": "low",
        "response_format": {"type": "json_object"},
        "logprobs": true,
        "service_tier": "flex",
        "metadata": {"k": "v"}
    })
}

#[test]
fn a_full_request_round_trips_including_unknown_fields() {
    let original = full_request();
    let req = parse(original.clone());
    assert_eq!(req.extra.len(), 3);
    assert_eq!(req.extra["service_tier"], "flex");
    assert_eq!(req.messages[3].extra["refusal"], Value::Null);
    assert_eq!(
        req.stop,
        Some(Stop::Many(vec!["END".into(), "STOP".into()]))
    );
    assert_eq!(
        req.tool_choice,
        Some(ToolChoice::Function {
            name: "look".into()
        })
    );
    assert!(matches!(
        &req.messages[2].content,
        Some(MessageContent::Parts(parts)) if parts.len() == 3 && parts[2].kind() == "input_audio"
    ));
    let back = serde_json::to_value(&req).unwrap();
    assert_eq!(back, original);
}

#[test]
fn unknown_fields_keep_their_order_after_known_ones() {
    let req = parse(
        json!({"model": "m", "zeta": 1, "messages": [{"role": "user", "content": "hi"}], "alpha": 2}),
    );
    let text = serde_json::to_string(&req).unwrap();
    assert_eq!(
        text,
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"zeta":1,"alpha":2}"#
    );
}

#[test]
fn assistant_content_null_or_absent_is_accepted_and_written_as_null() {
    let req = parse(json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "assistant", "content": null, "tool_calls": null}
    ]}));
    assert_eq!(req.messages[1].content, None);
    assert_eq!(req.messages[1].tool_calls[0].kind, "function");
    assert!(req.messages[2].tool_calls.is_empty());
    let back = serde_json::to_value(&req.messages[1]).unwrap();
    assert_eq!(
        back,
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]})
    );
}

#[test]
fn wrong_shapes_are_serde_errors() {
    let err = parse_err(json!({"model": "m", "messages": [{"role": "robot", "content": "x"}]}));
    assert!(err.contains("unknown variant `robot`"), "{err}");
    let err = parse_err(json!({"model": "m", "messages": [{"role": "user", "content": 5}]}));
    assert!(
        err.contains("a string or an array of content parts"),
        "{err}"
    );
    let err = parse_err(json!({"model": "m", "messages": [], "stop": 3}));
    assert!(err.contains("a string or an array of strings"), "{err}");
    let err = parse_err(json!({"model": "m", "messages": [], "tool_choice": "always"}));
    assert!(err.contains("unknown variant `always`"), "{err}");
    let err = parse_err(
        json!({"model": "m", "messages": [], "tool_choice": {"type": "web", "function": {"name": "x"}}}),
    );
    assert!(err.contains("type \"function\""), "{err}");
    let err = parse_err(
        json!({"model": "m", "messages": [{"role": "user", "content": [{"text": "no type"}]}]}),
    );
    assert!(err.contains("missing field `type`"), "{err}");
    let err = parse_err(
        json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}),
    );
    assert!(err.contains("`text` must be a string"), "{err}");
    let err = parse_err(json!({"model": "m", "messages": [], "temperature": "hot"}));
    assert!(err.contains("invalid type"), "{err}");
    let err = parse_err(json!({"messages": []}));
    assert!(err.contains("missing field `model`"), "{err}");
}

#[test]
fn either_or_fields_read_both_spellings() {
    let req = parse(
        json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": "data:image/png;base64,AAAA"}
    ]}], "stop": "\n", "tool_choice": "required"}),
    );
    assert_eq!(req.stop, Some(Stop::One("\n".into())));
    assert_eq!(req.tool_choice, Some(ToolChoice::Required));
    assert_eq!(
        req.messages[0].content,
        Some(MessageContent::Parts(vec![ContentPart::ImageUrl(
            ImageUrl {
                url: "data:image/png;base64,AAAA".into(),
                detail: None
            }
        )]))
    );
    for (choice, text) in [
        (ToolChoice::Auto, "\"auto\""),
        (ToolChoice::None, "\"none\""),
        (ToolChoice::Required, "\"required\""),
        (
            ToolChoice::Function { name: "f".into() },
            r#"{"type":"function","function":{"name":"f"}}"#,
        ),
    ] {
        assert_eq!(serde_json::to_string(&choice).unwrap(), text);
        assert_eq!(serde_json::from_str::<ToolChoice>(text).unwrap(), choice);
    }
}

fn valid() -> ChatCompletionRequest {
    parse(full_request())
}

fn rule(req: &ChatCompletionRequest) -> (String, String) {
    let e = validate(req).unwrap_err();
    (e.field, e.rule)
}

#[test]
fn a_realistic_request_is_valid() {
    validate(&valid()).unwrap();
    let minimal = parse(json!({"model": "m", "messages": [{"role": "user", "content": ""}]}));
    validate(&minimal).unwrap();
}

#[test]
fn validation_names_the_field_and_rule() {
    let mut r = valid();
    r.model = " ".into();
    assert_eq!(rule(&r).0, "model");

    let mut r = valid();
    r.messages.clear();
    assert_eq!(rule(&r), ("messages".into(), "must not be empty".into()));

    for (t, ok) in [
        (0.0, true),
        (2.0, true),
        (2.01, false),
        (-0.1, false),
        (f64::NAN, false),
    ] {
        let mut r = valid();
        r.temperature = Some(t);
        assert_eq!(validate(&r).is_ok(), ok, "temperature {t}");
    }
    let mut r = valid();
    r.temperature = Some(3.0);
    assert_eq!(
        rule(&r),
        ("temperature".into(), "must be between 0.0 and 2.0".into())
    );

    let mut r = valid();
    r.top_p = Some(1.5);
    assert_eq!(rule(&r).0, "top_p");
    let mut r = valid();
    r.presence_penalty = Some(-2.5);
    assert_eq!(rule(&r).0, "presence_penalty");
    let mut r = valid();
    r.frequency_penalty = Some(2.5);
    assert_eq!(rule(&r).0, "frequency_penalty");

    let mut r = valid();
    r.n = Some(2);
    assert_eq!(rule(&r), ("n".into(), "only 1 is supported".into()));
    r.n = None;
    validate(&r).unwrap();

    let mut r = valid();
    r.max_tokens = Some(0);
    assert_eq!(rule(&r).0, "max_tokens");
    let mut r = valid();
    r.max_completion_tokens = Some(0);
    assert_eq!(rule(&r).0, "max_completion_tokens");
}

#[test]
fn validation_of_tools_and_tool_choice() {
    let mut r = valid();
    r.tools[0].kind = "retrieval".into();
    assert_eq!(rule(&r).0, "tools[0].type");

    let mut r = valid();
    r.tools[0].function = None;
    assert_eq!(rule(&r).0, "tools[0].function");

    let mut r = valid();
    if let Some(f) = r.tools[0].function.as_mut() {
        f.name.clear();
    }
    assert_eq!(rule(&r).0, "tools[0].function.name");

    let mut r = valid();
    r.tool_choice = Some(ToolChoice::Function {
        name: "other".into(),
    });
    assert_eq!(rule(&r).0, "tool_choice.function.name");

    let mut r = valid();
    r.tools.clear();
    r.tool_choice = Some(ToolChoice::Required);
    assert_eq!(rule(&r).0, "tool_choice");
    r.tool_choice = Some(ToolChoice::Auto);
    validate(&r).unwrap();
}

#[test]
fn validation_of_messages() {
    // content null without tool calls
    let mut r = valid();
    r.messages[3].tool_calls.clear();
    assert_eq!(rule(&r).0, "messages[3].content");

    // content missing on a user message
    let mut r = valid();
    r.messages[2].content = None;
    assert_eq!(
        rule(&r),
        ("messages[2].content".into(), "is required".into())
    );

    // tool message without tool_call_id
    let mut r = valid();
    r.messages[4].tool_call_id = None;
    assert_eq!(rule(&r).0, "messages[4].tool_call_id");
    r.messages[4].tool_call_id = Some(String::new());
    assert_eq!(rule(&r).0, "messages[4].tool_call_id");

    // images in a system message
    let mut r = valid();
    r.messages[1].content = Some(MessageContent::Parts(vec![ContentPart::ImageUrl(
        ImageUrl {
            url: "https://x/y.png".into(),
            detail: None,
        },
    )]));
    assert_eq!(rule(&r).0, "messages[1].content[0].type");

    // tool calls on a user message
    let mut r = valid();
    r.messages[2].tool_calls = r.messages[3].tool_calls.clone();
    assert_eq!(rule(&r).0, "messages[2].tool_calls");

    // a tool call without a name
    let mut r = valid();
    r.messages[3].tool_calls[0].function.name.clear();
    assert_eq!(rule(&r).0, "messages[3].tool_calls[0].function.name");

    // empty image URL
    let mut r = valid();
    if let Some(MessageContent::Parts(parts)) = r.messages[2].content.as_mut() {
        parts[1] = ContentPart::ImageUrl(ImageUrl {
            url: String::new(),
            detail: None,
        });
    }
    assert_eq!(rule(&r).0, "messages[2].content[1].image_url.url");
}

#[test]
fn responses_and_chunks_are_read_leniently() {
    let chunk: ChatCompletionChunk = serde_json::from_value(json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
        "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
            "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0}}
    }))
    .unwrap();
    let usage = chunk.usage.unwrap();
    assert_eq!(usage.prompt_tokens_details.unwrap().cached_tokens, Some(4));

    let chunk: ChatCompletionChunk = serde_json::from_value(json!({
        "id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "f", "arguments": ""}}
        ]}, "finish_reason": null, "logprobs": null}], "usage": null
    }))
    .unwrap();
    assert_eq!(chunk.object, "chat.completion.chunk");
    assert_eq!(
        chunk.choices[0].delta.tool_calls[0].id.as_deref(),
        Some("call_a")
    );
    assert!(chunk.usage.is_none());

    let resp: ChatCompletionResponse = serde_json::from_value(json!({
        "id": "r", "choices": [{"message": {"content": null, "tool_calls": null}, "finish_reason": "stop"}]
    }))
    .unwrap();
    assert_eq!(resp.choices[0].message.role, "assistant");
    assert_eq!(resp.object, "chat.completion");
}

#[test]
fn model_list_and_error_body_shapes() {
    let mut with_desc = Model::new("claude-sonnet-4.5", 1_700_000_000, "primary");
    with_desc.description = Some("Claude Sonnet 4.5".into());
    let list = ModelList::new(vec![Model::new("auto", 0, "primary"), with_desc]);
    assert_eq!(
        serde_json::to_string(&list).unwrap(),
        r#"{"object":"list","data":[{"id":"auto","object":"model","created":0,"owned_by":"primary"},{"id":"claude-sonnet-4.5","object":"model","created":1700000000,"owned_by":"primary","description":"Claude Sonnet 4.5"}]}"#
    );
    assert_eq!(
        serde_json::to_string(&ErrorBody::new(
            "validation_error",
            "messages: must not be empty"
        ))
        .unwrap(),
        r#"{"error":{"message":"messages: must not be empty","type":"validation_error"}}"#
    );
    let upstream: ErrorBody = serde_json::from_value(json!({"error": {
        "message": "Rate limit", "type": "requests", "param": null, "code": 429
    }}))
    .unwrap();
    assert_eq!(upstream.error.code.as_deref(), Some("429"));
    assert_eq!(upstream.error.param, None);
}
