//! What comes back from a whole (non-streaming) answer: the response, its
//! message and the token usage.
//!
//! These types are written by the gateway and read from OpenAI-format
//! providers, so reading is lenient: missing members and `null`s take their
//! defaults, unknown members are ignored.

use serde::{Deserialize, Serialize};

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

fn completion_object() -> String {
    "chat.completion".to_owned()
}

fn assistant_role() -> String {
    "assistant".to_owned()
}
