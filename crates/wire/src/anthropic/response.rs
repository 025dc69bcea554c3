//! The non-streaming messages response.

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;

/// `{"id","type":"message","role":"assistant","content","model","stop_reason","stop_sequence","usage"}`.
///
/// `stop_reason` and `stop_sequence` are always written, as `null` when absent,
/// as Anthropic does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesResponse {
    pub id: String,
    /// Always `message`.
    #[serde(rename = "type", default = "message_type")]
    pub kind: String,
    /// Always `assistant`.
    #[serde(default = "assistant_role")]
    pub role: String,
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(default)]
    pub usage: Usage,
}

fn message_type() -> String {
    "message".to_owned()
}

fn assistant_role() -> String {
    "assistant".to_owned()
}

/// Token usage of a response; the cache fields appear only when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u32>,
    #[serde(default)]
    pub output_tokens: u32,
}
