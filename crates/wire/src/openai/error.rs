//! The error body, `{"error":{"message","type"}}` (spec 7), as the gateway
//! writes it and as OpenAI-format providers send it (with `param` and `code`).

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::null_as_default;

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
