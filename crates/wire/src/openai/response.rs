//! What comes back: the non-streaming response, the stream chunk, usage, the
//! model list and the error body.
//!
//! These types are written by the gateway and read from OpenAI-format
//! providers, so reading is lenient: missing members and `null`s take their
//! defaults, unknown members are ignored.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::{null_as_default, ToolCall};

/// Non-streaming `chat.completion` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionResponse {
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
    /// `chat.completion`.
    #[serde(default = "completion_object")]
    pub object: String,
    /// Unix seconds.
    #[serde(default, deserialize_with = "null_as_default")]
    pub created: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub model: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CompletionUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
}

/// One choice of a non-streaming response (the gateway always writes one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    #[serde(default, deserialize_with = "null_as_default")]
    pub index: u32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub message: ResponseMessage,
    /// `stop`, `length`, `tool_calls`, `content_filter`.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The assistant message of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    #[serde(default = "assistant_role")]
    pub role: String,
    /// `null` when the answer is only tool calls.
    #[serde(default, serialize_with = "crate::json::serialize_opt_str")]
    pub content: Option<String>,
    /// Reasoning text (the name DeepSeek and most compatible servers use).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::json::serialize_opt_str"
    )]
    pub reasoning_content: Option<String>,
    /// The same, as some servers spell it (read only; the gateway writes
    /// `reasoning_content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

impl Default for ResponseMessage {
    fn default() -> Self {
        ResponseMessage {
            role: assistant_role(),
            content: None,
            reasoning_content: None,
            reasoning: None,
            tool_calls: Vec::new(),
            refusal: None,
        }
    }
}

/// Token usage. `prompt_tokens` includes cached tokens (`cached_tokens` is
/// the part of it served from the prompt cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionUsage {
    #[serde(default, deserialize_with = "null_as_default")]
    pub prompt_tokens: u32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub completion_tokens: u32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub total_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
}

/// One `chat.completion.chunk` of a stream. The usage chunk has empty
/// `choices` and `usage` set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChunk {
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
    /// `chat.completion.chunk`.
    #[serde(default = "chunk_object")]
    pub object: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub created: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub model: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<ChunkChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CompletionUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
}

/// One choice of a chunk.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkChoice {
    #[serde(default, deserialize_with = "null_as_default")]
    pub index: u32,
    #[serde(default, deserialize_with = "null_as_default")]
    pub delta: ChunkDelta,
    /// `null` until the last content chunk.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// What a chunk adds to the message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Read-only alternative spelling of `reasoning_content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<ToolCallChunk>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// A fragment of a streamed tool call: `id`, `type` and `function.name` on the
/// first fragment of an `index`, argument text on every fragment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallChunk {
    /// Position of the call; a few servers leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionCallChunk>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionCallChunk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// `GET /v1/models` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    /// `list`.
    #[serde(default = "list_object")]
    pub object: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: Vec<Model>,
}

impl ModelList {
    pub fn new(data: Vec<Model>) -> Self {
        ModelList {
            object: list_object(),
            data,
        }
    }
}

/// One model of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    /// `model`.
    #[serde(default = "model_object")]
    pub object: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub created: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub owned_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Model {
    pub fn new(id: impl Into<String>, created: u64, owned_by: impl Into<String>) -> Self {
        Model {
            id: id.into(),
            object: model_object(),
            created,
            owned_by: owned_by.into(),
            description: None,
        }
    }
}

/// Error body: `{"error":{"message":...,"type":...}}` (spec 7); OpenAI adds
/// `param` and `code`, which are read and written when present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

impl ErrorBody {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorBody {
            error: ErrorDetail {
                message: message.into(),
                kind: kind.into(),
                param: None,
                code: None,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(default, deserialize_with = "null_as_default")]
    pub message: String,
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub kind: String,
    #[serde(
        default,
        deserialize_with = "string_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub param: Option<String>,
    /// OpenAI sends strings (`rate_limit_exceeded`); some servers send numbers.
    #[serde(
        default,
        deserialize_with = "string_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub code: Option<String>,
}

fn string_or_number<'de, D: Deserializer<'de>>(de: D) -> Result<Option<String>, D::Error> {
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(de::Error::invalid_type(
            de::Unexpected::Other(value_kind(&other)),
            &"a string or a number",
        )),
    }
}

fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn completion_object() -> String {
    "chat.completion".to_owned()
}

fn chunk_object() -> String {
    "chat.completion.chunk".to_owned()
}

fn list_object() -> String {
    "list".to_owned()
}

fn model_object() -> String {
    "model".to_owned()
}

fn assistant_role() -> String {
    "assistant".to_owned()
}
