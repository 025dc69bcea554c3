use super::*;
use crate::model::{
    ContentPart, ImageSource, Message, SystemBlock, ThinkingConfig, Tool, ToolChoice,
    ToolResultContent,
};
use crate::primary::sanitize_schema;
use serde_json::{json, Value};

const MODEL: &str = "claude-sonnet-4.5";

fn text(t: &str) -> ContentPart {
    ContentPart::Text {
        text: t.into(),
        cache_control: None,
    }
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
        name: None,
    }
}

fn tool_use(id: &str, name: &str, args: &str) -> ContentPart {
    ContentPart::ToolUse {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    }
}

fn tool_result(id: &str, content: Vec<ToolResultContent>, is_error: bool) -> ContentPart {
    ContentPart::ToolResult {
        tool_use_id: id.into(),
        content,
        is_error,
    }
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    Tool {
        name: name.into(),
        description: Some(description.into()),
        input_schema: schema,
        cache_control: None,
    }
}

fn system(t: &str) -> Vec<SystemBlock> {
    vec![SystemBlock {
        text: t.into(),
        cache_control: None,
    }]
}

fn png(data: &str) -> ContentPart {
    ContentPart::Image(ImageSource::Base64 {
        media_type: "image/png".into(),
        data: data.into(),
    })
}

fn opts() -> RequestOptions {
    RequestOptions::new("conv-1", MODEL)
}

fn build(req: &ChatRequest) -> Value {
    build_with(req, &opts())
}

fn build_with(req: &ChatRequest, o: &RequestOptions) -> Value {
    serde_json::to_value(build_request(req, o).unwrap()).unwrap()
}

fn u(content: &str) -> Value {
    json!({"content": content, "modelId": MODEL, "origin": "AI_EDITOR"})
}

fn body(history: Vec<Value>, current: Value) -> Value {
    let mut state = json!({"chatTriggerType": "MANUAL", "conversationId": "conv-1"});
    if !history.is_empty() {
        state["history"] = Value::Array(history);
    }
    state["currentMessage"] = json!({"userInputMessage": current});
    json!({"conversationState": state})
}

fn invalid_field(req: &ChatRequest) -> String {
    match build_request(req, &opts()) {
        Err(TranslateError::Invalid { field, .. }) => field,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn single_message_with_system_prompt() {
    let req = ChatRequest {
        system: system("Be brief."),
        messages: vec![user(vec![text("Hello")])],
        ..ChatRequest::default()
    };
    assert_eq!(build(&req), body(vec![], u("Be brief.\n\nHello")));
}

/// The protocol notes' example conversation, from canonical messages.
#[test]
fn documented_example_conversation() {
    let req = ChatRequest {
        system: system("<folded system prompt>"),
        messages: vec![
            user(vec![text("List the files in the repo.")]),
            assistant(vec![
                text("Checking."),
                tool_use("tooluse_A1", "list_dir", r#"{"path":"."}"#),
            ]),
            user(vec![tool_result(
                "tooluse_A1",
                vec![ToolResultContent::Text("README.md\nsrc/".into())],
                false,
            )]),
            assistant(vec![text("There are two entries.")]),
            user(vec![text("Now open README.md"), png("iVBORw0KGgo...")]),
        ],
        tools: vec![tool(
            "read_file",
            "Read a file",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                   "properties": {"path": {"type": "string"}}, "required": ["path"],
                   "additionalProperties": false}),
        )],
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.conversation_id = "5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90".into();
    o.profile_arn = Some("arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE".into());
    let expected: Value = serde_json::from_str(
        r#"{
  "conversationState": {
    "chatTriggerType": "MANUAL",
    "conversationId": "5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90",
    "history": [
      {"userInputMessage": {
        "content": "<folded system prompt>\n\nList the files in the repo.",
        "modelId": "claude-sonnet-4.5",
        "origin": "AI_EDITOR"}},
      {"assistantResponseMessage": {
        "content": "Checking.",
        "toolUses": [{"toolUseId": "tooluse_A1", "name": "list_dir", "input": {"path": "."}}]}},
      {"userInputMessage": {
        "content": "(empty)",
        "modelId": "claude-sonnet-4.5",
        "origin": "AI_EDITOR",
        "userInputMessageContext": {
          "toolResults": [{"toolUseId": "tooluse_A1", "status": "success",
                           "content": [{"text": "README.md\nsrc/"}]}]}}},
      {"assistantResponseMessage": {"content": "There are two entries."}}
    ],
    "currentMessage": {
      "userInputMessage": {
        "content": "Now open README.md",
        "modelId": "claude-sonnet-4.5",
        "origin": "AI_EDITOR",
        "images": [{"format": "png", "source": {"bytes": "iVBORw0KGgo..."}}],
        "userInputMessageContext": {
          "tools": [{"toolSpecification": {
            "name": "read_file",
            "description": "Read a file",
            "inputSchema": {"json": {"type": "object",
                                     "properties": {"path": {"type": "string"}},
                                     "required": ["path"]}}}}]}}}
  },
  "profileArn": "arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE"
}"#,
    )
    .unwrap();
    let got = build_request(&req, &o).unwrap();
    assert_eq!(serde_json::to_value(&got).unwrap(), expected);
    // Key order too, byte for byte.
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        serde_json::to_string(&expected).unwrap()
    );
}

#[test]
fn parallel_tool_calls_errors_json_images_duplicates_and_orphans() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let req = ChatRequest {
        messages: vec![
            user(vec![text("Check the weather and the time.")]),
            assistant(vec![
                tool_use("t1", "weather", r#"{"q":"Paris"}"#),
                tool_use("t2", "clock", ""),
                // The upstream's repeated call with fuller input wins, in place.
                tool_use("t1", "weather", r#"{"q":"Paris, FR"}"#),
            ]),
            user(vec![
                tool_result(
                    "t1",
                    vec![
                        ToolResultContent::Json(json!({"temp": 21})),
                        ToolResultContent::Image(ImageSource::Base64 {
                            media_type: "image/jpg".into(),
                            data: "/9j/AA".into(),
                        }),
                    ],
                    false,
                ),
                tool_result(
                    "t2",
                    vec![ToolResultContent::Text("clock offline".into())],
                    true,
                ),
                tool_result("t9", vec![ToolResultContent::Text("stray".into())], false),
                tool_result("t2", vec![], false),
            ]),
        ],
        tools: vec![
            tool("weather", "Weather", schema.clone()),
            tool(
                "clock",
                "Clock",
                json!({"type": "object", "properties": {}}),
            ),
        ],
        ..ChatRequest::default()
    };
    let expected = body(
        vec![
            json!({"userInputMessage": u("Check the weather and the time.")}),
            json!({"assistantResponseMessage": {"content": "(empty)", "toolUses": [
                {"toolUseId": "t1", "name": "weather", "input": {"q": "Paris, FR"}},
                {"toolUseId": "t2", "name": "clock", "input": {}}]}}),
        ],
        json!({
            "content": "[Tool Result (t9)]\nstray\n[Tool Result (t2)]\n(empty result)",
            "modelId": MODEL, "origin": "AI_EDITOR",
            "images": [{"format": "jpeg", "source": {"bytes": "/9j/AA"}}],
            "userInputMessageContext": {
                "tools": [
                    {"toolSpecification": {"name": "weather", "description": "Weather",
                        "inputSchema": {"json": schema}}},
                    {"toolSpecification": {"name": "clock", "description": "Clock",
                        "inputSchema": {"json": {"type": "object"}}}}],
                "toolResults": [
                    {"toolUseId": "t1", "status": "success", "content": [
                        {"json": {"temp": 21}}, {"text": "(image attached to this message)"}]},
                    {"toolUseId": "t2", "status": "error", "content": [{"text": "clock offline"}]}]}
        }),
    );
    assert_eq!(build(&req), expected);
}

#[test]
fn without_tools_the_tool_history_becomes_text() {
    let req = ChatRequest {
        messages: vec![
            user(vec![text("Summarise the log.")]),
            assistant(vec![
                text("Reading it."),
                tool_use("t1", "read", r#"{"f":"a.log"}"#),
            ]),
            user(vec![
                tool_result("t1", vec![ToolResultContent::Text("line 1".into())], false),
                tool_result("t2", vec![ToolResultContent::Json(json!([1]))], true),
            ]),
            assistant(vec![text("It has one line.")]),
            user(vec![text("Thanks")]),
        ],
        ..ChatRequest::default()
    };
    let expected = body(
        vec![
            json!({"userInputMessage": u("Summarise the log.")}),
            json!({"assistantResponseMessage": {
                "content": "Reading it.\n[Tool: read (t1)]\n{\"f\":\"a.log\"}"}}),
            json!({"userInputMessage": u("[Tool Result (t1)]\nline 1\n[Tool Result (t2), error]\n[1]")}),
            json!({"assistantResponseMessage": {"content": "It has one line."}}),
        ],
        u("Thanks"),
    );
    assert_eq!(build(&req), expected);
}

#[test]
fn a_last_assistant_message_closes_the_history() {
    let req = ChatRequest {
        system: system("S"),
        messages: vec![
            user(vec![text("Write a haiku.")]),
            assistant(vec![text("Autumn moon")]),
        ],
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.fake_reasoning = Some(4000);
    // No fake-reasoning prefix or addition: the current turn is not the user's.
    assert_eq!(
        build_with(&req, &o),
        body(
            vec![
                json!({"userInputMessage": u("S\n\nWrite a haiku.")}),
                json!({"assistantResponseMessage": {"content": "Autumn moon"}}),
            ],
            u("Continue"),
        )
    );
}

#[test]
fn a_leading_assistant_turn_gets_a_continued_user_turn() {
    let req = ChatRequest {
        system: system("S"),
        messages: vec![
            assistant(vec![text("Hi! How can I help?")]),
            user(vec![text("Hello")]),
        ],
        ..ChatRequest::default()
    };
    assert_eq!(
        build(&req),
        body(
            vec![
                json!({"userInputMessage": u("S\n\n(continued)")}),
                json!({"assistantResponseMessage": {"content": "Hi! How can I help?"}}),
            ],
            u("Hello"),
        )
    );
    // Only an assistant message: both ends need a synthetic user turn.
    let req = ChatRequest {
        messages: vec![assistant(vec![text("Hi")])],
        ..ChatRequest::default()
    };
    assert_eq!(
        build(&req),
        body(
            vec![
                json!({"userInputMessage": u("(continued)")}),
                json!({"assistantResponseMessage": {"content": "Hi"}}),
            ],
            u("Continue"),
        )
    );
}

#[test]
fn adjacent_turns_merge_and_empty_ones_get_placeholders() {
    let req = ChatRequest {
        messages: vec![
            user(vec![text("one")]),
            user(vec![text("two"), text("")]),
            assistant(vec![]),
            assistant(vec![ContentPart::Thinking {
                thinking: "hidden".into(),
                signature: Some("sig".into()),
            }]),
            user(vec![text("   ")]),
            assistant(vec![text("  ")]),
            user(vec![]),
        ],
        ..ChatRequest::default()
    };
    assert_eq!(
        build(&req),
        body(
            vec![
                json!({"userInputMessage": u("one\ntwo")}),
                json!({"assistantResponseMessage": {"content": "(empty)"}}),
                json!({"userInputMessage": u("(empty)")}),
                json!({"assistantResponseMessage": {"content": "(empty)"}}),
            ],
            u("Continue"),
        )
    );
}

#[test]
fn long_descriptions_move_to_the_system_prompt_and_empty_ones_are_filled() {
    let long = "x".repeat(30);
    let req = ChatRequest {
        system: system("Base."),
        messages: vec![user(vec![text("Go")])],
        tools: vec![
            tool("big", &long, json!({"type": "object"})),
            Tool {
                name: "bare".into(),
                description: None,
                input_schema: Value::Null,
                cache_control: None,
            },
        ],
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.tool_description_max_length = 20;
    let got = build_with(&req, &o);
    let current = &got["conversationState"]["currentMessage"]["userInputMessage"];
    assert_eq!(
        current["content"],
        json!(format!("Base.\n\n---\n## Tool: big\n\n{long}\n\nGo"))
    );
    let tools = &current["userInputMessageContext"]["tools"];
    assert_eq!(
        tools[0]["toolSpecification"]["description"],
        json!("The full description of this tool is in the system prompt, in the section \"## Tool: big\".")
    );
    assert_eq!(
        tools[1]["toolSpecification"]["description"],
        json!("Tool: bare")
    );
    assert_eq!(
        tools[1]["toolSpecification"]["inputSchema"],
        json!({"json": {"type": "object"}})
    );
}

#[test]
fn schemas_are_sanitised_recursively_without_touching_property_names() {
    let mut schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": false,
        "required": [],
        "properties": {
            "additionalProperties": {"type": "boolean"},
            "opts": {"type": "object", "properties": {}, "required": [],
                     "additionalProperties": {"type": "string"}},
            "list": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                     "properties": {"a": {"type": "string"}}, "required": ["a"]}},
            "choice": {"anyOf": [{"type": "object", "additionalProperties": true}, {"type": "null"}]},
            "lit": {"const": {"additionalProperties": 1}, "default": {"required": []}}
        },
        "$defs": {"x": {"type": "object", "$schema": "s", "additionalProperties": false}}
    });
    sanitize_schema(&mut schema);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "additionalProperties": {"type": "boolean"},
                "opts": {"type": "object"},
                "list": {"type": "array", "items": {"type": "object",
                         "properties": {"a": {"type": "string"}}, "required": ["a"]}},
                "choice": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                "lit": {"const": {"additionalProperties": 1}, "default": {"required": []}}
            },
            "$defs": {"x": {"type": "object"}}
        })
    );
}

#[test]
fn tool_names_are_checked_up_front() {
    let schema = json!({"type": "object"});
    let with_tools = |tools: Vec<Tool>| ChatRequest {
        messages: vec![user(vec![text("hi")])],
        tools,
        ..ChatRequest::default()
    };
    let ok = "a".repeat(64);
    assert!(build_request(&with_tools(vec![tool(&ok, "d", schema.clone())]), &opts()).is_ok());
    let long = "a".repeat(65);
    let req = with_tools(vec![
        tool("fine", "d", schema.clone()),
        tool(&long, "d", schema.clone()),
    ]);
    match build_request(&req, &opts()) {
        Err(TranslateError::Invalid { field, message }) => {
            assert_eq!(field, "tools[1].name");
            assert!(message.contains("64"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        invalid_field(&with_tools(vec![tool("has space", "d", schema.clone())])),
        "tools[0].name"
    );
    assert_eq!(
        invalid_field(&with_tools(vec![
            tool("dup", "d", schema.clone()),
            tool("dup", "d", schema.clone())
        ])),
        "tools[1].name"
    );
    assert_eq!(
        invalid_field(&with_tools(vec![tool("", "d", schema.clone())])),
        "tools[0].name"
    );
    assert_eq!(
        invalid_field(&with_tools(vec![tool("t", "d", json!("string"))])),
        "tools[0].input_schema"
    );
}

#[test]
fn unsupported_images_are_refused_with_the_field() {
    let with = |msgs: Vec<Message>| ChatRequest {
        messages: msgs,
        ..ChatRequest::default()
    };
    let bmp = ContentPart::Image(ImageSource::Base64 {
        media_type: "image/bmp".into(),
        data: "Qk0=".into(),
    });
    assert_eq!(
        invalid_field(&with(vec![user(vec![text("look"), bmp])])),
        "messages[0].content[1]"
    );
    let url = ContentPart::Image(ImageSource::Url("https://example.com/a.png".into()));
    assert_eq!(
        invalid_field(&with(vec![
            user(vec![text("a")]),
            assistant(vec![text("b")]),
            user(vec![url])
        ])),
        "messages[2].content[0]"
    );
    assert_eq!(
        invalid_field(&with(vec![
            user(vec![text("a")]),
            assistant(vec![png("AA")]),
            user(vec![text("c")])
        ])),
        "messages[1].content[0]"
    );
    assert_eq!(invalid_field(&with(vec![])), "messages");
    assert_eq!(
        invalid_field(&with(vec![user(vec![tool_use("t", "f", "{}")])])),
        "messages[0].content[0]"
    );
}

#[test]
fn tool_choice_is_expressed_or_refused() {
    let base = |choice: ToolChoice| ChatRequest {
        messages: vec![
            user(vec![text("Go")]),
            assistant(vec![tool_use("t1", "run", "{}")]),
            user(vec![tool_result(
                "t1",
                vec![ToolResultContent::Text("ok".into())],
                false,
            )]),
        ],
        tools: vec![tool("run", "Run it", json!({"type": "object"}))],
        tool_choice: Some(choice),
        ..ChatRequest::default()
    };
    let current = |v: &Value| v["conversationState"]["currentMessage"]["userInputMessage"].clone();

    let none = build(&base(ToolChoice::None));
    assert_eq!(
        none["conversationState"]["history"][1],
        json!({"assistantResponseMessage": {"content": "[Tool: run (t1)]\n{}"}})
    );
    assert_eq!(current(&none), u("[Tool Result (t1)]\nok"));

    let required = current(&build(&base(ToolChoice::Required)));
    assert_eq!(
        required["content"],
        json!("Continue\n\nAnswer this message by calling at least one of the available tools.")
    );
    assert_eq!(
        required["userInputMessageContext"]["toolResults"][0]["toolUseId"],
        json!("t1")
    );

    let named = current(&build(&base(ToolChoice::Tool("run".into()))));
    assert_eq!(
        named["content"],
        json!("Continue\n\nAnswer this message by calling the tool `run`.")
    );
    assert_eq!(
        current(&build(&base(ToolChoice::Auto)))["content"],
        json!("Continue")
    );

    assert_eq!(
        invalid_field(&base(ToolChoice::Tool("nope".into()))),
        "tool_choice"
    );
    let mut no_tools = base(ToolChoice::Required);
    no_tools.tools.clear();
    assert_eq!(invalid_field(&no_tools), "tool_choice");
}

#[test]
fn fake_reasoning_and_recovery_additions_in_order() {
    let req = ChatRequest {
        system: system("Sys."),
        messages: vec![
            user(vec![text("Q1")]),
            assistant(vec![text("A1")]),
            user(vec![text("Q2")]),
        ],
        thinking: Some(ThinkingConfig {
            budget_tokens: Some(2000),
        }),
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.fake_reasoning = Some(2000);
    o.truncation_recovery = true;
    let got = build_with(&req, &o);
    let first = got["conversationState"]["history"][0]["userInputMessage"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        first,
        format!(
            "Sys.\n\n---\n{}\n\n---\n{}\n\nQ1",
            crate::fake_reasoning::system_addition(),
            crate::truncation::system_addition()
        )
    );
    assert_eq!(
        got["conversationState"]["currentMessage"]["userInputMessage"]["content"],
        json!(format!("{}Q2", crate::fake_reasoning::prefix(2000)))
    );

    // Recovery alone, no client system prompt, single message: folded into the current one.
    let single = ChatRequest {
        messages: vec![user(vec![text("Hi")])],
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.truncation_recovery = true;
    o.fake_reasoning = Some(100);
    let got = build_with(&single, &o);
    assert_eq!(
        got["conversationState"]["currentMessage"]["userInputMessage"]["content"],
        json!(format!(
            "{}{}\n\n---\n{}\n\nHi",
            crate::fake_reasoning::prefix(100),
            crate::fake_reasoning::system_addition(),
            crate::truncation::system_addition()
        ))
    );
}

#[test]
fn profile_arn_only_when_non_empty_and_model_id_on_every_user_turn() {
    let req = ChatRequest {
        messages: vec![
            user(vec![text("a")]),
            assistant(vec![text("b")]),
            user(vec![text("c")]),
        ],
        ..ChatRequest::default()
    };
    let mut o = opts();
    o.profile_arn = Some(String::new());
    o.model_id = "auto".into();
    let got = build_with(&req, &o);
    assert!(got.get("profileArn").is_none());
    assert_eq!(
        got["conversationState"]["history"][0]["userInputMessage"]["modelId"],
        json!("auto")
    );
    assert_eq!(
        got["conversationState"]["currentMessage"]["userInputMessage"]["modelId"],
        json!("auto")
    );
}

#[test]
fn history_always_alternates_and_ends_with_an_assistant_turn() {
    use crate::model::Role::{Assistant as A, User as U};
    // Every role sequence up to length 6.
    for len in 1..=6u32 {
        for mask in 0..(1u32 << len) {
            let messages: Vec<Message> = (0..len)
                .map(|i| Message {
                    role: if mask & (1 << i) == 0 { U } else { A },
                    content: vec![text("x")],
                    name: None,
                })
                .collect();
            let req = ChatRequest {
                messages,
                ..ChatRequest::default()
            };
            let got = build_request(&req, &opts()).unwrap();
            let history = &got.conversation_state.history;
            for (k, entry) in history.iter().enumerate() {
                let is_user = matches!(entry, HistoryEntry::User(_));
                assert_eq!(is_user, k % 2 == 0, "mask {mask:b} len {len}");
            }
            assert!(
                history.len().is_multiple_of(2),
                "history must end with an assistant turn"
            );
        }
    }
}
