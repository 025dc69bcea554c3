//! Stream events, as a provider sends them (`data:` of each SSE event).
//!
//! The `type` inside the data names the event; the SSE `event:` line repeats
//! it. Event and delta types this module does not know parse as `Unknown`, so
//! that a newer provider never breaks an older gateway.

use serde::{Deserialize, Serialize};

use super::content::ContentBlock;
use super::error::ErrorDetail;

/// One event of a messages stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The message with empty content, and the input usage.
    MessageStart {
        message: StreamMessage,
    },
    /// A block opens; text and thinking blocks usually start empty, `tool_use`
    /// with `input: {}`.
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u32,
    },
    /// Stop reason and the cumulative usage.
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: StreamUsage,
    },
    MessageStop,
    Ping,
    /// An error after the HTTP status was sent.
    Error {
        error: ErrorDetail,
    },
    #[serde(other)]
    Unknown,
}

/// The `message` of `message_start`; only the fields the gateway reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StreamMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<StreamUsage>,
}

/// Usage as streams report it: any field may be missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
}

/// The `delta` of `content_block_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    /// A citation attached to the current text block, kept opaque.
    CitationsDelta {
        citation: serde_json::Value,
    },
    #[serde(other)]
    Unknown,
}

/// The `delta` of `message_delta`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
}
