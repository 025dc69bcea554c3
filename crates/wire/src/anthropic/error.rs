//! Error bodies: the gateway's own, and the one Anthropic providers send.
//!
//! They differ on purpose: the gateway answers `{"error":{"message","type"}}`
//! (spec part 7) on both client formats, while a provider answers
//! `{"type":"error","error":{"type","message"},"request_id"?}` and sends the
//! same `error` object inside a stream's `error` event.

use serde::{Deserialize, Serialize};

/// The gateway's error body: `{"error":{"message":..,"type":..}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: GatewayErrorDetail,
}

impl ErrorBody {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorBody {
            error: GatewayErrorDetail {
                message: message.into(),
                kind: kind.into(),
            },
        }
    }
}

/// `{"message","type"}`, in the spec's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayErrorDetail {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// A provider's error body: `{"type":"error","error":{..},"request_id"?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderErrorBody {
    /// Always `error`.
    #[serde(rename = "type", default = "error_type")]
    pub kind: String,
    pub error: ErrorDetail,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

fn error_type() -> String {
    "error".to_owned()
}

/// `{"type":"overloaded_error","message":"Overloaded"}`, Anthropic's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}
