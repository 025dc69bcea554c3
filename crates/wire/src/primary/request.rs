//! The `generateAssistantResponse` request body.
//!
//! History is a flat list of turns, each exactly one of `userInputMessage` or
//! `assistantResponseMessage` (an externally tagged union); tool definitions
//! ride only on the current message. Empty lists and absent options are not
//! serialized.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::{write_str, Pieces};

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

impl ChatTriggerType {
    /// The wire spelling (`MANUAL`, `DIAGNOSTIC`, `INLINE_CHAT`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manual => "MANUAL",
            Self::Diagnostic => "DIAGNOSTIC",
            Self::InlineChat => "INLINE_CHAT",
        }
    }
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

impl ToolResultStatus {
    /// The wire spelling (`success`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
        }
    }
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

// The body written directly: `write_json` and one writer per type below it.
// Each writes exactly what the type's derived `Serialize` has `serde_json`
// write (compact, members in declaration order, empty lists and `None`
// left out), as `request_tests.rs` checks byte for byte.

impl GenerateAssistantResponseRequest {
    /// Appends the body as JSON: the bytes `serde_json::to_writer` writes
    /// for it, without serde's per-member machinery (about 4,500
    /// instructions a request). Only the `Value`s (tool schemas, tool
    /// inputs, JSON tool results) go through `serde_json`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"conversationState\":");
        self.conversation_state.write_json(out);
        if let Some(profile_arn) = &self.profile_arn {
            out.extend_from_slice(b",\"profileArn\":");
            write_str(out, profile_arn);
        }
        out.push(b'}');
    }
}

impl ConversationState {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"chatTriggerType\":");
        write_str(out, self.chat_trigger_type.as_str());
        out.extend_from_slice(b",\"conversationId\":");
        write_str(out, &self.conversation_id);
        if !self.history.is_empty() {
            out.extend_from_slice(b",\"history\":");
            write_list(out, &self.history, HistoryEntry::write_json);
        }
        out.extend_from_slice(b",\"currentMessage\":{\"userInputMessage\":");
        self.current_message.user_input_message.write_json(out);
        out.extend_from_slice(b"}}");
    }
}

impl HistoryEntry {
    /// `{"userInputMessage":...}` or `{"assistantResponseMessage":...}`.
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Self::User(message) => {
                out.extend_from_slice(b"{\"userInputMessage\":");
                message.write_json(out);
            }
            Self::Assistant(message) => {
                out.extend_from_slice(b"{\"assistantResponseMessage\":");
                message.write_json(out);
            }
        }
        out.push(b'}');
    }
}

impl UserInputMessage {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"content\":");
        self.content.write_json(out);
        out.extend_from_slice(b",\"modelId\":");
        write_str(out, &self.model_id);
        out.extend_from_slice(b",\"origin\":");
        write_str(out, &self.origin);
        if !self.images.is_empty() {
            out.extend_from_slice(b",\"images\":");
            write_list(out, &self.images, ImageBlock::write_json);
        }
        if let Some(context) = &self.user_input_message_context {
            out.extend_from_slice(b",\"userInputMessageContext\":");
            context.write_json(out);
        }
        out.push(b'}');
    }
}

impl ImageBlock {
    /// `{"format":"png","source":{"bytes":"<base64>"}}`.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"format\":");
        write_str(out, self.format.as_str());
        out.extend_from_slice(b",\"source\":{\"bytes\":");
        write_str(out, &self.source.bytes);
        out.extend_from_slice(b"}}");
    }
}

impl UserInputMessageContext {
    /// Both members may be left out: an empty context is `{}`.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        if !self.tools.is_empty() {
            out.extend_from_slice(b"\"tools\":");
            write_list(out, &self.tools, ToolEntry::write_json);
        }
        if !self.tool_results.is_empty() {
            if !self.tools.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"toolResults\":");
            write_list(out, &self.tool_results, ToolResult::write_json);
        }
        out.push(b'}');
    }
}

impl ToolEntry {
    /// `{"toolSpecification":{"name":...,"description":...,"inputSchema":{"json":...}}}`.
    fn write_json(&self, out: &mut Vec<u8>) {
        let specification = &self.tool_specification;
        out.extend_from_slice(b"{\"toolSpecification\":{\"name\":");
        write_str(out, &specification.name);
        out.extend_from_slice(b",\"description\":");
        write_str(out, &specification.description);
        out.extend_from_slice(b",\"inputSchema\":{\"json\":");
        write_value(out, &specification.input_schema.json);
        out.extend_from_slice(b"}}}");
    }
}

impl ToolResult {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"toolUseId\":");
        write_str(out, &self.tool_use_id);
        out.extend_from_slice(b",\"status\":");
        write_str(out, self.status.as_str());
        out.extend_from_slice(b",\"content\":");
        write_list(out, &self.content, ToolResultContentBlock::write_json);
        out.push(b'}');
    }
}

impl ToolResultContentBlock {
    /// `{"text":"..."}` or `{"json":...}`.
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Self::Text(text) => {
                out.extend_from_slice(b"{\"text\":");
                write_str(out, text);
            }
            Self::Json(value) => {
                out.extend_from_slice(b"{\"json\":");
                write_value(out, value);
            }
        }
        out.push(b'}');
    }
}

impl AssistantResponseMessage {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"content\":");
        write_str(out, &self.content);
        if !self.tool_uses.is_empty() {
            out.extend_from_slice(b",\"toolUses\":");
            write_list(out, &self.tool_uses, ToolUse::write_json);
        }
        out.push(b'}');
    }
}

impl ToolUse {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"toolUseId\":");
        write_str(out, &self.tool_use_id);
        out.extend_from_slice(b",\"name\":");
        write_str(out, &self.name);
        out.extend_from_slice(b",\"input\":");
        write_value(out, &self.input);
        out.push(b'}');
    }
}

/// Appends `[item,item,...]`, each item by `write_item`.
fn write_list<T>(out: &mut Vec<u8>, items: &[T], write_item: fn(&T, &mut Vec<u8>)) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_item(item, out);
    }
    out.push(b']');
}

/// Appends a JSON value as `serde_json` writes it.
fn write_value(out: &mut Vec<u8>, value: &Value) {
    // A `Value` always serializes (its keys are strings), and a `Vec` never
    // fails a write.
    let _ = serde_json::to_writer(&mut *out, value);
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
