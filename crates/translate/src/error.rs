//! The translation error: what a conversion can refuse. No HTTP here; the gateway
//! maps each variant to its status once.

/// A request or stream that cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The client request is well-formed JSON but cannot be expressed (names the field).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A provider stream or response violates its own protocol.
    #[error("upstream protocol error: {0}")]
    Upstream(String),
}

impl TranslateError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        TranslateError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}
