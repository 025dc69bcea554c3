//! The `generateAssistantResponse` request body.
//!
//! History is a flat list of turns, each exactly one of `userInputMessage` or
//! `assistantResponseMessage` (an externally tagged union); tool definitions
//! ride only on the current message. Empty lists and absent options are not
//! serialized.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Pieces;

/// The `origin` every gateway request carries.
pub const ORIGIN_AI_EDITOR: &str = "AI_EDITOR";

/// The whole request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateAssistantResponseRequest {
    pub conversation_state: ConversationState,
    /// Needed for IAM Identity Center accounts; left out when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_arn: Option<String>,
}

impl GenerateAssistantResponseRequest {
    /// Bytes of the messages' text: most of the request's JSON, unless it
    /// carries large tool definitions (to size the buffer it is written to).
    pub fn text_len(&self) -> usize {
        let state = &self.conversation_state;
        let history: usize = state
            .history
            .iter()
            .map(|entry| match entry {
                HistoryEntry::User(message) => message.content.len(),
                HistoryEntry::Assistant(message) => message.content.len(),
            })
            .sum();
        history + state.current_message.user_input_message.content.len()
    }
}

/// The conversation: history plus the user turn being answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationState {
    pub chat_trigger_type: ChatTriggerType,
    pub conversation_id: String,
    /// Alternating turns, oldest first, starting with a user turn and ending
    /// with an assistant turn; left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
    pub current_message: CurrentMessage,
}

/// What triggered the chat; gateways always send `MANUAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChatTriggerType {
    #[default]
    Manual,
    Diagnostic,
    InlineChat,
}

/// `{"userInputMessage": ...}`: the turn the model answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CurrentMessage {
    pub user_input_message: UserInputMessage,
}

/// One history turn; on the wire an object with exactly one of the two keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum HistoryEntry {
    #[serde(rename = "userInputMessage")]
    User(UserInputMessage),
    #[serde(rename = "assistantResponseMessage")]
    Assistant(AssistantResponseMessage),
}

/// A user turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputMessage {
    /// Must be non-empty upstream. Often long (the folded system prompt),
    /// and mostly the gateway's own texts, written from their kept escapes
    /// ([`Pieces`]).
    pub content: Pieces,
    pub model_id: String,
    /// [`ORIGIN_AI_EDITOR`] from the gateway; other clients use other values.
    pub origin: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_input_message_context: Option<UserInputMessageContext>,
}

/// An inline image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageBlock {
    pub format: ImageFormat,
    pub source: ImageSource,
}

/// The image formats the upstream accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageFormat {
    /// The format for a MIME type such as `image/png` (case-insensitive,
    /// parameters ignored). `image/jpg`, a common misspelling, reads as JPEG.
    /// `None` for anything the upstream does not accept.
    pub fn from_media_type(media_type: &str) -> Option<Self> {
        let essence = media_type.split(';').next().unwrap_or("").trim();
        let (kind, subtype) = essence.split_once('/')?;
        if !kind.eq_ignore_ascii_case("image") {
            return None;
        }
        match subtype.to_ascii_lowercase().as_str() {
            "png" => Some(Self::Png),
            "jpeg" | "jpg" | "pjpeg" => Some(Self::Jpeg),
            "gif" => Some(Self::Gif),
            "webp" => Some(Self::Webp),
            _ => None,
        }
    }

    /// The wire spelling (`png`, `jpeg`, `gif`, `webp`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
            Self::Gif => "gif",
            Self::Webp => "webp",
        }
    }
}

/// `{"bytes": "<base64>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// Standard base64, no data-URL prefix.
    pub bytes: String,
}

/// Tools and tool results attached to a user turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputMessageContext {
    /// Tool definitions; only ever on the current message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolResult>,
}

impl UserInputMessageContext {
    /// Whether there is nothing to send (the context is then left out).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.tool_results.is_empty()
    }
}

/// `{"toolSpecification": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    pub tool_specification: ToolSpecification,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpecification {
    /// At most 64 characters of `[A-Za-z0-9_-]`.
    pub name: String,
    /// Must be non-empty.
    pub description: String,
    pub input_schema: InputSchema,
}

/// `{"json": <JSON Schema>}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputSchema {
    pub json: Value,
}

/// The result of one tool call, sent in the user turn after the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Matches a `toolUseId` of the immediately preceding assistant turn.
    pub tool_use_id: String,
    pub status: ToolResultStatus,
    pub content: Vec<ToolResultContentBlock>,
}

/// `success` or `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolResultStatus {
    #[default]
    Success,
    Error,
}

/// `{"text": ...}` or `{"json": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToolResultContentBlock {
    #[serde(rename = "text")]
    Text(#[serde(serialize_with = "crate::json::serialize_str")] String),
    #[serde(rename = "json")]
    Json(Value),
}

/// An assistant turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantResponseMessage {
    /// Must be non-empty upstream.
    #[serde(serialize_with = "crate::json::serialize_str")]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_uses: Vec<ToolUse>,
}

/// A tool call the assistant made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse {
    pub tool_use_id: String,
    pub name: String,
    /// The arguments as a JSON object.
    pub input: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            profile_arn: Some(
                "arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE".into(),
            ),
        };
        let expected = r#"{"conversationState":{"chatTriggerType":"MANUAL","conversationId":"5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90","history":[{"userInputMessage":{"content":"<folded system prompt>\n\nList the files in the repo.","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR"}},{"assistantResponseMessage":{"content":"Checking.","toolUses":[{"toolUseId":"tooluse_A1","name":"list_dir","input":{"path":"."}}]}},{"userInputMessage":{"content":"(empty)","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR","userInputMessageContext":{"toolResults":[{"toolUseId":"tooluse_A1","status":"success","content":[{"text":"README.md\nsrc/"}]}]}}},{"assistantResponseMessage":{"content":"There are two entries."}}],"currentMessage":{"userInputMessage":{"content":"Now open README.md","modelId":"claude-sonnet-4.5","origin":"AI_EDITOR","images":[{"format":"png","source":{"bytes":"iVBORw0KGgo..."}}],"userInputMessageContext":{"tools":[{"toolSpecification":{"name":"read_file","description":"Read a file","inputSchema":{"json":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}}]}}}},"profileArn":"arn:aws:codewhisperer:us-east-1:123456789012:profile/EXAMPLE"}"#;
        assert_eq!(serde_json::to_string(&body).unwrap(), expected);
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
}
