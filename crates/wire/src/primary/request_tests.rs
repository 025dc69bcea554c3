use super::*;
use crate::json::Fixed;
use proptest::prelude::*;
use serde_json::json;

/// What `write_json` writes for `body`, as text.
fn written(body: &GenerateAssistantResponseRequest) -> String {
    let mut out = Vec::new();
    body.write_json(&mut out);
    String::from_utf8(out).unwrap()
}

fn user(content: &str) -> UserInputMessage {
    UserInputMessage {
        content: content.into(),
        model_id: "claude-sonnet-4.5".into(),
        origin: ORIGIN_AI_EDITOR.into(),
        images: Vec::new(),
        user_input_message_context: None,
    }
}

/// The example body of the protocol notes, built from the types.
#[test]
fn serializes_the_documented_example_exactly() {
    let first = user("<folded system prompt>\n\nList the files in the repo.");
    let mut results = user("(empty)");
    results.user_input_message_context = Some(UserInputMessageContext {
        tools: Vec::new(),
        tool_results: vec![ToolResult {
            tool_use_id: "tooluse_A1".into(),
            status: ToolResultStatus::Success,
            content: vec![ToolResultContentBlock::Text("README.md\nsrc/".into())],
        }],
    });
    let mut current = user("Now open README.md");
    current.images = vec![ImageBlock {
        format: ImageFormat::Png,
        source: ImageSource {
            bytes: "iVBORw0KGgo...".into(),
        },
    }];
    current.user_input_message_context = Some(UserInputMessageContext {
        tools: vec![ToolEntry {
            tool_specification: ToolSpecification {
                name: "read_file".into(),
                description: "Read a file".into(),
                input_schema: InputSchema {
                    json: json!({"type": "object",
                                 "properties": {"path": {"type": "string"}},
                                 "required": ["path"]}),
                },
            },
        }],
        tool_results: Vec::new(),
    });
    let body = GenerateAssistantResponseRequest {
        conversation_state: ConversationState {
            chat_trigger_type: ChatTriggerType::Manual,
            conversation_id: "5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90".into(),
            history: vec![
                HistoryEntry::User(first),
                HistoryEntry::Assistant(AssistantResponseMessage {
                    content: "Checking.".into(),
                    tool_uses: vec![ToolUse {
                        tool_use_id: "tooluse_A1".into(),
                        name: "list_dir".into(),
                        input: json!({"path": "."}),
                    }],
                }),
                HistoryEntry::User(results),
                HistoryEntry::Assistant(AssistantResponseMessage {
                    content: "There are two entries.".into(),
                    tool_uses: Vec::new(),
                }),
            ],
            current_message: CurrentMessage {
                user_input_message: current,
            },
        },
        profile_arn: Some("arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE".into()),
    };
    let expected = r#"{"conversationState":{"chatTriggerType":"MANUAL","conversationId":"5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90","history":[{"userInputMessage":{"content":"<folded system prompt>\n\nList the files in the repo.","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR"}},{"assistantResponseMessage":{"content":"Checking.","toolUses":[{"toolUseId":"tooluse_A1","name":"list_dir","input":{"path":"."}}]}},{"userInputMessage":{"content":"(empty)","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR","userInputMessageContext":{"toolResults":[{"toolUseId":"tooluse_A1","status":"success","content":[{"text":"README.md\nsrc/"}]}]}}},{"assistantResponseMessage":{"content":"There are two entries."}}],"currentMessage":{"userInputMessage":{"content":"Now open README.md","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR","images":[{"format":"png","source":{"bytes":"iVBORw0KGgo..."}}],"userInputMessageContext":{"tools":[{"toolSpecification":{"name":"read_file","description":"Read a file","inputSchema":{"json":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}}]}}}},"profileArn":"arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE"}"#;
    assert_eq!(serde_json::to_string(&body).unwrap(), expected);
    assert_eq!(written(&body), expected);
    let back: GenerateAssistantResponseRequest = serde_json::from_str(expected).unwrap();
    assert_eq!(back, body);
}

#[test]
fn leaves_out_empty_history_profile_and_context() {
    let body = GenerateAssistantResponseRequest {
        conversation_state: ConversationState {
            chat_trigger_type: ChatTriggerType::Manual,
            conversation_id: "c".into(),
            history: Vec::new(),
            current_message: CurrentMessage {
                user_input_message: user("hi"),
            },
        },
        profile_arn: None,
    };
    assert_eq!(
        serde_json::to_value(&body).unwrap(),
        json!({"conversationState": {"chatTriggerType": "MANUAL", "conversationId": "c",
            "currentMessage": {"userInputMessage": {"content": "hi",
                "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR"}}}})
    );
}

#[test]
fn tool_result_blocks_and_error_status() {
    let r = ToolResult {
        tool_use_id: "t".into(),
        status: ToolResultStatus::Error,
        content: vec![
            ToolResultContentBlock::Text("boom".into()),
            ToolResultContentBlock::Json(json!({"code": 2})),
        ],
    };
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"toolUseId": "t", "status": "error",
               "content": [{"text": "boom"}, {"json": {"code": 2}}]})
    );
}

#[test]
fn a_history_entry_with_both_keys_is_rejected() {
    let both = r#"{"userInputMessage":{"content":"a","modelId":"m","origin":"AI_EDITOR"},
                   "assistantResponseMessage":{"content":"b"}}"#;
    assert!(serde_json::from_str::<HistoryEntry>(both).is_err());
}

#[test]
fn image_formats_from_media_types() {
    assert_eq!(
        ImageFormat::from_media_type("image/png"),
        Some(ImageFormat::Png)
    );
    assert_eq!(
        ImageFormat::from_media_type("image/jpg"),
        Some(ImageFormat::Jpeg)
    );
    assert_eq!(
        ImageFormat::from_media_type("IMAGE/JPEG; q=1"),
        Some(ImageFormat::Jpeg)
    );
    assert_eq!(
        ImageFormat::from_media_type("image/webp"),
        Some(ImageFormat::Webp)
    );
    assert_eq!(
        ImageFormat::from_media_type("image/gif"),
        Some(ImageFormat::Gif)
    );
    assert_eq!(ImageFormat::from_media_type("image/bmp"), None);
    assert_eq!(ImageFormat::from_media_type("text/png"), None);
    assert_eq!(ImageFormat::from_media_type("png"), None);
    assert_eq!(ImageFormat::Jpeg.as_str(), "jpeg");
}

#[test]
fn writes_an_empty_context_and_every_spelling_as_serde_does() {
    let mut current = user("tab\there, \"quoted\" \\ \u{1} é");
    current.user_input_message_context = Some(UserInputMessageContext::default());
    let mut results = user("r");
    results.user_input_message_context = Some(UserInputMessageContext {
        tools: Vec::new(),
        tool_results: vec![ToolResult {
            tool_use_id: "t".into(),
            status: ToolResultStatus::Error,
            content: vec![
                ToolResultContentBlock::Text(String::new()),
                ToolResultContentBlock::Json(json!([1, "two", null])),
            ],
        }],
    });
    for chat_trigger_type in [
        ChatTriggerType::Manual,
        ChatTriggerType::Diagnostic,
        ChatTriggerType::InlineChat,
    ] {
        let body = GenerateAssistantResponseRequest {
            conversation_state: ConversationState {
                chat_trigger_type,
                conversation_id: String::new(),
                history: vec![
                    HistoryEntry::User(results.clone()),
                    HistoryEntry::Assistant(AssistantResponseMessage {
                        content: "ok".into(),
                        tool_uses: Vec::new(),
                    }),
                ],
                current_message: CurrentMessage {
                    user_input_message: current.clone(),
                },
            },
            profile_arn: None,
        };
        assert_eq!(written(&body), serde_json::to_string(&body).unwrap());
    }
    let mut out = Vec::new();
    UserInputMessageContext::default().write_json(&mut out);
    assert_eq!(out, b"{}");
}

// Arbitrary bodies for the byte-for-byte comparison with serde_json.

static FIXED_PROMPT: Fixed = Fixed::new("A \"kept\" text\n\twith \\ escapes \u{1f} é");
static FIXED_PLAIN: Fixed = Fixed::new("plain");

/// Text of every kind JSON treats apart: quotes, backslashes, control
/// characters, non-ASCII, empty.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => r#"[a-z "\\\x00-\x1f\x7fé日🦀]{0,12}"#,
        1 => any::<String>(),
        1 => Just(String::new()),
    ]
}

/// Client text cut into pieces, some of them the program's own.
fn pieces() -> impl Strategy<Value = Pieces> {
    prop::collection::vec((0..3u8, text()), 0..4).prop_map(|parts| {
        let mut pieces = Pieces::new();
        for (fixed, text) in parts {
            match fixed {
                1 => pieces.push_fixed(&FIXED_PROMPT),
                2 => pieces.push_fixed(&FIXED_PLAIN),
                _ => {}
            }
            pieces.push_string(text);
        }
        pieces
    })
}

/// Any JSON value, a few levels deep.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn image() -> impl Strategy<Value = ImageBlock> {
    let format = prop_oneof![
        Just(ImageFormat::Png),
        Just(ImageFormat::Jpeg),
        Just(ImageFormat::Gif),
        Just(ImageFormat::Webp),
    ];
    (format, text()).prop_map(|(format, bytes)| ImageBlock {
        format,
        source: ImageSource { bytes },
    })
}

fn tool() -> impl Strategy<Value = ToolEntry> {
    (text(), text(), value()).prop_map(|(name, description, json)| ToolEntry {
        tool_specification: ToolSpecification {
            name,
            description,
            input_schema: InputSchema { json },
        },
    })
}

fn tool_result() -> impl Strategy<Value = ToolResult> {
    let status = prop_oneof![
        Just(ToolResultStatus::Success),
        Just(ToolResultStatus::Error)
    ];
    let block = prop_oneof![
        text().prop_map(ToolResultContentBlock::Text),
        value().prop_map(ToolResultContentBlock::Json),
    ];
    (text(), status, prop::collection::vec(block, 0..3)).prop_map(
        |(tool_use_id, status, content)| ToolResult {
            tool_use_id,
            status,
            content,
        },
    )
}

/// Tools and tool results, either list possibly empty (both: `{}`).
fn context() -> impl Strategy<Value = UserInputMessageContext> {
    (
        prop::collection::vec(tool(), 0..3),
        prop::collection::vec(tool_result(), 0..3),
    )
        .prop_map(|(tools, tool_results)| UserInputMessageContext {
            tools,
            tool_results,
        })
}

fn user_message() -> impl Strategy<Value = UserInputMessage> {
    (
        pieces(),
        text(),
        prop_oneof![Just(ORIGIN_AI_EDITOR.to_owned()), text()],
        prop::collection::vec(image(), 0..3),
        prop::option::of(context()),
    )
        .prop_map(
            |(content, model_id, origin, images, user_input_message_context)| UserInputMessage {
                content,
                model_id,
                origin,
                images,
                user_input_message_context,
            },
        )
}

fn assistant_message() -> impl Strategy<Value = AssistantResponseMessage> {
    let tool_use = (text(), text(), value()).prop_map(|(tool_use_id, name, input)| ToolUse {
        tool_use_id,
        name,
        input,
    });
    (text(), prop::collection::vec(tool_use, 0..3))
        .prop_map(|(content, tool_uses)| AssistantResponseMessage { content, tool_uses })
}

fn request() -> impl Strategy<Value = GenerateAssistantResponseRequest> {
    let chat_trigger_type = prop_oneof![
        Just(ChatTriggerType::Manual),
        Just(ChatTriggerType::Diagnostic),
        Just(ChatTriggerType::InlineChat),
    ];
    let entry = prop_oneof![
        user_message().prop_map(HistoryEntry::User),
        assistant_message().prop_map(HistoryEntry::Assistant),
    ];
    (
        chat_trigger_type,
        text(),
        prop::collection::vec(entry, 0..5),
        user_message(),
        prop::option::of(text()),
    )
        .prop_map(
            |(chat_trigger_type, conversation_id, history, current, profile_arn)| {
                GenerateAssistantResponseRequest {
                    conversation_state: ConversationState {
                        chat_trigger_type,
                        conversation_id,
                        history,
                        current_message: CurrentMessage {
                            user_input_message: current,
                        },
                    },
                    profile_arn,
                }
            },
        )
}

proptest! {
    /// Appended after what the buffer already holds, as serde_json would.
    #[test]
    fn write_json_writes_what_serde_json_writes(body in request()) {
        let mut out = b"prefix ".to_vec();
        body.write_json(&mut out);
        let mut expected = b"prefix ".to_vec();
        serde_json::to_writer(&mut expected, &body).unwrap();
        prop_assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(expected).unwrap());
    }
}
