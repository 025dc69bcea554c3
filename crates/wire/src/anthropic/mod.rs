//! The Anthropic messages format (`POST /v1/messages`), typed.
//!
//! Owns the request ([`MessagesRequest`], every content block kind, unknown
//! top-level fields kept in `extra`), the non-streaming response
//! ([`MessagesResponse`]), the stream events a provider sends ([`StreamEvent`]),
//! both error bodies (the gateway's own [`ErrorBody`] and a provider's
//! [`ProviderErrorBody`]) and [`validate`], which applies the rules of spec 4.1.
//!
//! Shapes are lenient where the protocol grows: unknown content blocks
//! (`document`, `server_tool_use`, ...) and server tools are kept as raw JSON
//! objects rather than failing the parse; unknown stream events and deltas
//! parse as `Unknown`.

mod content;
mod de;
mod error;
mod request;
mod response;
mod stream;
mod validate;

pub use content::{
    ContentBlock, ImageBlock, ImageSource, MessageContent, RedactedThinkingBlock, TextBlock,
    ThinkingBlock, ToolResultBlock, ToolResultContent, ToolUseBlock,
};
pub use error::{ErrorBody, ErrorDetail, GatewayErrorDetail, ProviderErrorBody};
pub use request::{
    CustomTool, InputMessage, MessagesRequest, Metadata, SystemBlock, SystemPrompt, ThinkingKind,
    ThinkingParam, Tool, ToolChoice, ToolChoiceKind,
};
pub use response::{MessagesResponse, Usage};
pub use stream::{BlockDelta, MessageDeltaBody, StreamEvent, StreamMessage, StreamUsage};
pub use validate::validate;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
