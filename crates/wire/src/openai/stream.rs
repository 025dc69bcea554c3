//! The stream chunk (`chat.completion.chunk`) and its parts, read leniently
//! like the response (missing members and `null`s take their defaults).

use serde::{Deserialize, Serialize};

use super::request::null_as_default;
use super::response::CompletionUsage;

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

fn chunk_object() -> String {
    "chat.completion.chunk".to_owned()
}
