//! The canonical chat model: one request shape and one event stream that every
//! client format converts into and every provider converts out of (N + M, not N x M).
//!
//! Invariants worth knowing:
//! - System prompts live in [`ChatRequest::system`], never in `messages`.
//! - Roles are only `User` and `Assistant`; OpenAI `tool` messages become
//!   [`ContentPart::ToolResult`] parts of a `User` message.
//! - Tool-call arguments are kept as the raw JSON text the client or provider
//!   produced (`arguments`), because streams deliver them as text fragments and
//!   the text may be invalid JSON (truncation); converters parse only when the
//!   target format needs an object.

use serde_json::{Map, Value};

/// The client wire format a request arrived in (and its answer must leave in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientFormat {
    /// OpenAI chat completions (`/v1/chat/completions`).
    OpenAi,
    /// Anthropic messages (`/v1/messages`).
    Anthropic,
}

impl ClientFormat {
    /// The name used in logs and guardrail expressions (`request.api_format`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientFormat::OpenAi => "openai",
            ClientFormat::Anthropic => "anthropic",
        }
    }
}

/// A chat request in canonical form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The model as the client named it (resolution happens in the gateway).
    pub model: String,
    /// System prompt blocks, in order. Text only; `cache_control` kept.
    pub system: Vec<SystemBlock>,
    /// Conversation turns, oldest first.
    pub messages: Vec<Message>,
    pub tools: Vec<Tool>,
    pub tool_choice: Option<ToolChoice>,
    /// `false` when the client asked to disable parallel tool calls.
    pub parallel_tool_calls: Option<bool>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u32>,
    pub presence_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub stop_sequences: Vec<String>,
    pub stream: bool,
    /// Whether the client wants usage in the stream (OpenAI `stream_options.include_usage`,
    /// default true per spec; always true for Anthropic clients).
    pub include_usage: bool,
    /// Extended-thinking request from the client, if any.
    pub thinking: Option<ThinkingConfig>,
    /// OpenAI `reasoning_effort` as given (`low`, `medium`, `high`, ...).
    pub reasoning_effort: Option<String>,
    /// End-user id (OpenAI `user`, Anthropic `metadata.user_id`); never forwarded to `primary`.
    pub user: Option<String>,
    /// Fields of the client body that have no canonical home, kept so that a
    /// relay to a provider of the same format loses nothing (e.g. `response_format`,
    /// `seed`, `logprobs`, `service_tier`). Keys are the client format's own names.
    pub extra: Map<String, Value>,
}

/// One block of the system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemBlock {
    pub text: String,
    /// Anthropic prompt-caching marker, kept as given (e.g. `{"type":"ephemeral"}`).
    pub cache_control: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One conversation turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentPart>,
    /// OpenAI participant `name`, when given.
    pub name: Option<String>,
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    Text {
        text: String,
        cache_control: Option<Value>,
    },
    Image(ImageSource),
    /// A tool call made by the assistant.
    ToolUse {
        id: String,
        name: String,
        /// Raw JSON text of the arguments (may be invalid JSON).
        arguments: String,
    },
    /// The result of a tool call, sent by the user side.
    ToolResult {
        tool_use_id: String,
        content: Vec<ToolResultContent>,
        is_error: bool,
    },
    /// Model reasoning, with the provider's signature when it has one.
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    /// Encrypted reasoning the client must send back as it was received.
    RedactedThinking {
        data: String,
    },
}

/// Content of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultContent {
    Text(String),
    Image(ImageSource),
    /// Any other structured content (kept for formats that support it).
    Json(Value),
}

/// An image, inline or by URL.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// Base64 data with its media type (`image/png`, ...).
    Base64 { media_type: String, data: String },
    /// A remote URL (http(s)); not every provider accepts these.
    Url(String),
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// JSON Schema of the input object.
    pub input_schema: Value,
    pub cache_control: Option<Value>,
}

/// Which tool use the model is allowed or required to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (OpenAI `auto`, Anthropic `auto`).
    Auto,
    /// The model must not call tools (`none`).
    None,
    /// The model must call some tool (OpenAI `required`, Anthropic `any`).
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// Client request for extended thinking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingConfig {
    pub budget_tokens: Option<u32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    ToolUse,
    StopSequence,
    ContentFilter,
    PauseTurn,
    Refusal,
}

/// Token usage. Fields are `None` when unknown; [`Usage::merge`] overlays known values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    pub cache_read_tokens: Option<u32>,
    pub cache_write_tokens: Option<u32>,
}

impl Usage {
    /// Overlay the known fields of `other` on `self`.
    pub fn merge(&mut self, other: &Usage) {
        if other.input_tokens.is_some() {
            self.input_tokens = other.input_tokens;
        }
        if other.output_tokens.is_some() {
            self.output_tokens = other.output_tokens;
        }
        if other.cache_read_tokens.is_some() {
            self.cache_read_tokens = other.cache_read_tokens;
        }
        if other.cache_write_tokens.is_some() {
            self.cache_write_tokens = other.cache_write_tokens;
        }
    }
}

/// One step of a provider's answer, in canonical form.
///
/// Ordering contract for producers: `Start` first (at most once); thinking
/// before the text it precedes; each tool call is `ToolCallStart`, zero or more
/// `ToolCallDelta`, then `ToolCallEnd`, with `index` counting tool calls from 0
/// in order of their start; `Usage` may come anywhere and repeatedly (merged);
/// `Stop` once, after all content; `Error` ends the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    /// The provider's message id and model, when it reports them.
    Start {
        id: Option<String>,
        model: Option<String>,
    },
    TextDelta(String),
    ThinkingDelta(String),
    /// Signature closing the current thinking block.
    ThinkingSignature(String),
    RedactedThinking(String),
    ToolCallStart {
        index: u32,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: u32,
        arguments: String,
    },
    ToolCallEnd {
        index: u32,
    },
    Usage(Usage),
    Stop {
        reason: StopReason,
        stop_sequence: Option<String>,
    },
    Error(StreamError),
}

/// An error inside a stream (after the response started, or collected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    /// The HTTP status the error would have had (e.g. 429, 500, 529).
    pub status: u16,
    /// Error type in the gateway's vocabulary.
    pub kind: StreamErrorKind,
    pub message: String,
}

impl StreamError {
    /// An `upstream_api_error` with the provider's (or the gateway's) status.
    pub fn upstream(status: u16, message: impl Into<String>) -> StreamError {
        StreamError {
            status,
            kind: StreamErrorKind::UpstreamApi,
            message: message.into(),
        }
    }
}

/// The `type` of an in-stream error, as both client formats write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamErrorKind {
    /// `upstream_api_error`: a provider's error, or a broken provider stream.
    UpstreamApi,
    /// `overloaded_error`: the provider is overloaded (529); the messages
    /// format has a type of its own for it.
    Overloaded,
}

impl StreamErrorKind {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamErrorKind::UpstreamApi => "upstream_api_error",
            StreamErrorKind::Overloaded => "overloaded_error",
        }
    }
}

impl std::fmt::Display for StreamErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as its wire string, as the `String` it replaced was.
impl serde::Serialize for StreamErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Compares with the wire string (`kind == "overloaded_error"`).
impl PartialEq<str> for StreamErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StreamErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_error_kinds_keep_their_wire_strings() {
        for (kind, wire) in [
            (StreamErrorKind::UpstreamApi, "upstream_api_error"),
            (StreamErrorKind::Overloaded, "overloaded_error"),
        ] {
            assert_eq!(kind.as_str(), wire);
            assert_eq!(kind.to_string(), wire);
            assert_eq!(kind, wire);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{wire}\""));
        }
        assert_eq!(
            StreamError::upstream(502, "cut"),
            StreamError {
                status: 502,
                kind: StreamErrorKind::UpstreamApi,
                message: "cut".into()
            }
        );
    }
}
