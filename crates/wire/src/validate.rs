//! The shared validation error. Each format's rules live beside its types
//! (`openai::validate`, `anthropic::validate`) and follow the spec's tables (4.1).

/// A request that breaks a rule of the spec; `field` is a JSON path such as
/// `messages[2].role`, `rule` says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct ValidationError {
    pub field: String,
    pub rule: String,
}

impl ValidationError {
    pub fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        ValidationError {
            field: field.into(),
            rule: rule.into(),
        }
    }
}
