use super::*;
use crate::primary::models::default_models;
use serde_json::json;

fn settings() -> ApiSettings {
    ApiSettings {
        models: ModelCatalog::new(default_models()),
        max_input_bytes: 10_000,
        require_profile_arn: false,
    }
}

fn check(body: &Value) -> Result<(), ApiError> {
    validate(Some(body), body.to_string().len(), &settings()).map(|_| ())
}

fn reason(body: &Value) -> Option<String> {
    let e = check(body).unwrap_err();
    assert_eq!(e.status, 400);
    e.reason
}

fn tool(name: &str) -> Value {
    json!({"toolSpecification": {"name": name, "description": "Read a file",
        "inputSchema": {"json": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}})
}

/// The example body of the protocol reference, tools and all.
fn full() -> Value {
    json!({
      "conversationState": {
        "chatTriggerType": "MANUAL",
        "conversationId": "5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90",
        "history": [
          {"userInputMessage": {"content": "sys\n\nList the files.", "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR"}},
          {"assistantResponseMessage": {"content": "Checking.",
            "toolUses": [{"toolUseId": "tooluse_A1", "name": "list_dir", "input": {"path": "."}}]}},
          {"userInputMessage": {"content": "(empty)", "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR",
            "userInputMessageContext": {"toolResults": [{"toolUseId": "tooluse_A1", "status": "success",
              "content": [{"text": "README.md\nsrc/"}]}]}}},
          {"assistantResponseMessage": {"content": "There are two entries."}}
        ],
        "currentMessage": {"userInputMessage": {
          "content": "Now open README.md", "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR",
          "images": [{"format": "png", "source": {"bytes": "iVBORw0KGgo="}}],
          "userInputMessageContext": {"tools": [tool("read_file")]}}}
      },
      "profileArn": "arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE"
    })
}

fn simple(content: &str) -> Value {
    json!({"conversationState": {"chatTriggerType": "MANUAL", "conversationId": "c",
        "currentMessage": {"userInputMessage": {"content": content, "modelId": "auto", "origin": "AI_EDITOR"}}}})
}

#[test]
fn the_reference_example_is_valid_and_viewed() {
    let body = full();
    let view = validate(Some(&body), 1234, &settings()).unwrap();
    assert_eq!(view.model_id, "claude-sonnet-4.5");
    assert_eq!(view.content, "Now open README.md");
    assert_eq!(view.tools.len(), 1);
    assert_eq!(view.tools[0].name, "read_file");
    assert_eq!(view.body_len, 1234);
}

#[test]
fn model_defaults_to_auto() {
    let mut body = simple("hi");
    body["conversationState"]["currentMessage"]["userInputMessage"]
        .as_object_mut()
        .unwrap()
        .remove("modelId");
    let view = validate(Some(&body), 10, &settings()).unwrap();
    assert_eq!(view.model_id, "auto");
}

#[test]
fn system_prompt_is_request_body_invalid() {
    let mut body = simple("hi");
    body["systemPrompt"] = json!("be nice");
    assert_eq!(reason(&body).as_deref(), Some("REQUEST_BODY_INVALID"));
}

type Mutation = Box<dyn Fn(&mut Value)>;

#[test]
fn shape_errors_are_improperly_formed_without_reason() {
    let mutations: Vec<(&str, Mutation)> = vec![
        (
            "no conversationState",
            Box::new(|b| {
                b.as_object_mut().unwrap().remove("conversationState");
            }),
        ),
        (
            "no trigger",
            Box::new(|b| {
                b["conversationState"]
                    .as_object_mut()
                    .unwrap()
                    .remove("chatTriggerType");
            }),
        ),
        (
            "bad trigger",
            Box::new(|b| b["conversationState"]["chatTriggerType"] = json!("AUTO")),
        ),
        (
            "no current",
            Box::new(|b| {
                b["conversationState"]
                    .as_object_mut()
                    .unwrap()
                    .remove("currentMessage");
            }),
        ),
        (
            "empty content",
            Box::new(|b| {
                b["conversationState"]["currentMessage"]["userInputMessage"]["content"] = json!("")
            }),
        ),
        (
            "history not array",
            Box::new(|b| b["conversationState"]["history"] = json!({})),
        ),
        (
            "history ends with user",
            Box::new(|b| {
                b["conversationState"]["history"] = json!([
            {"userInputMessage": {"content": "a"}}])
            }),
        ),
        (
            "history starts with assistant",
            Box::new(|b| {
                b["conversationState"]["history"] = json!([
            {"assistantResponseMessage": {"content": "a"}}, {"userInputMessage": {"content": "b"}}])
            }),
        ),
        (
            "two users in a row",
            Box::new(|b| {
                b["conversationState"]["history"] = json!([
            {"userInputMessage": {"content": "a"}}, {"userInputMessage": {"content": "b"}}])
            }),
        ),
        (
            "entry with two keys",
            Box::new(|b| {
                b["conversationState"]["history"] = json!([
            {"userInputMessage": {"content": "a"}, "assistantResponseMessage": {"content": "b"}},
            {"assistantResponseMessage": {"content": "b"}}])
            }),
        ),
        (
            "empty assistant",
            Box::new(|b| {
                b["conversationState"]["history"] = json!([
            {"userInputMessage": {"content": "a"}}, {"assistantResponseMessage": {"content": ""}}])
            }),
        ),
        (
            "bad image format",
            Box::new(|b| {
                b["conversationState"]["currentMessage"]["userInputMessage"]["images"] =
                    json!([{"format": "jpg", "source": {"bytes": "AAAA"}}])
            }),
        ),
        (
            "data url image",
            Box::new(|b| {
                b["conversationState"]["currentMessage"]["userInputMessage"]["images"] =
                    json!([{"format": "png", "source": {"bytes": "data:image/png;base64,AAAA"}}])
            }),
        ),
    ];
    for (what, mutate) in mutations {
        let mut body = simple("hi");
        mutate(&mut body);
        let e = check(&body).expect_err(what);
        assert_eq!(e.message, "Improperly formed request.", "{what}");
        assert_eq!(e.reason, None, "{what}");
    }
}

#[test]
fn tool_rules() {
    // Tool results and uses without tools on the current message.
    let mut body = full();
    body["conversationState"]["currentMessage"]["userInputMessage"]
        .as_object_mut()
        .unwrap()
        .remove("userInputMessageContext");
    assert_eq!(reason(&body), None);

    // A tool result whose id is not in the preceding assistant entry.
    let mut body = full();
    body["conversationState"]["history"][2]["userInputMessage"]["userInputMessageContext"]
        ["toolResults"][0]["toolUseId"] = json!("tooluse_ZZ");
    assert!(check(&body).is_err());

    // Tool results on the current message pair with the last history entry.
    let mut body = full();
    body["conversationState"]["history"][3]["assistantResponseMessage"]["toolUses"] =
        json!([{"toolUseId": "t2", "name": "read_file", "input": {"path": "x"}}]);
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"]
        ["toolResults"] =
        json!([{"toolUseId": "t2", "status": "error", "content": [{"json": {"e": 1}}]}]);
    check(&body).unwrap();
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"]
        ["toolResults"][0]["status"] = json!("failed");
    assert!(check(&body).is_err());

    let cases: Vec<Value> = vec![
        tool(&"x".repeat(65)),
        tool("bad name"),
        json!({"toolSpecification": {"name": "t", "description": "", "inputSchema": {"json": {"type": "object"}}}}),
        json!({"toolSpecification": {"name": "t", "description": "d".repeat(10_001), "inputSchema": {"json": {}}}}),
        json!({"toolSpecification": {"name": "t", "description": "d", "inputSchema": {"json": {"type": "object", "additionalProperties": false}}}}),
        json!({"toolSpecification": {"name": "t", "description": "d", "inputSchema": {"json": {"type": "object", "required": []}}}}),
        json!({"toolSpecification": {"name": "t", "description": "d",
            "inputSchema": {"json": {"properties": {"a": {"type": "object", "additionalProperties": {}}}}}}}),
        json!({"toolSpecification": {"name": "t", "description": "d"}}),
    ];
    for t in cases {
        let mut body = simple("hi");
        body["conversationState"]["currentMessage"]["userInputMessage"]
            ["userInputMessageContext"] = json!({"tools": [t.clone()]});
        assert!(check(&body).is_err(), "{t}");
    }
    let mut body = simple("hi");
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"] =
        json!({"tools": [tool("a"), tool("a")]});
    assert!(check(&body).is_err(), "duplicate tool names");
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"] =
        json!({"tools": [tool("a"), tool(&"b".repeat(64))]});
    check(&body).unwrap();
}

#[test]
fn size_model_profile_and_non_json() {
    let body = simple("hi");
    let e = validate(Some(&body), 10_001, &settings()).unwrap_err();
    assert_eq!(e.message, "Input is too long.");
    assert_eq!(
        e.reason.as_deref(),
        Some("CONTENT_LENGTH_EXCEEDS_THRESHOLD")
    );

    let mut body = simple("hi");
    body["conversationState"]["currentMessage"]["userInputMessage"]["modelId"] = json!("gpt-4o");
    assert_eq!(reason(&body).as_deref(), Some("INVALID_MODEL_ID"));

    let strict = ApiSettings {
        require_profile_arn: true,
        ..settings()
    };
    let e = validate(Some(&simple("hi")), 10, &strict).unwrap_err();
    assert_eq!(e.message, "profileArn is required");
    validate(Some(&full()), 10, &strict).unwrap();

    let e = validate(None, 10, &settings()).unwrap_err();
    assert_eq!(e.message, "Improperly formed request.");
    assert!(validate(Some(&json!([1])), 3, &settings()).is_err());
}

#[test]
fn base64_check() {
    assert!(is_base64("iVBORw0KGgo="));
    assert!(is_base64("AAAA"));
    assert!(!is_base64("A A"));
    assert!(!is_base64("===="));
    assert!(!is_base64("AA==="));
}
