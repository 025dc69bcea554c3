//! The model listing (`GET /ListAvailableModels`) and the HTTP error body the
//! upstream returns before any stream.

use serde::{Deserialize, Serialize};

/// `ListAvailableModels` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListAvailableModelsResponse {
    #[serde(default)]
    pub models: Vec<ModelInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<DefaultModel>,
    /// Set when more pages follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_token: Option<String>,
}

/// One model the account may use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The id to send as `modelId` (e.g. `claude-sonnet-4.5`).
    pub model_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// E.g. `TEXT`, `IMAGE`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_input_types: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_limits: Option<TokenLimits>,
}

/// A model's context and output limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

/// `{"modelId": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultModel {
    pub model_id: String,
}

/// HTTP error body: `{"message", "reason"}` or `{"__type", "message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ErrorBody {
    #[serde(default, alias = "Message", skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// E.g. `CONTENT_LENGTH_EXCEEDS_THRESHOLD`, `MONTHLY_REQUEST_COUNT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// E.g. `com.amazon.aws.codewhisperer#ValidationException`.
    #[serde(default, rename = "__type", skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

impl ErrorBody {
    /// The shape name of `__type` without its namespace
    /// (`com.amazon...#ThrottlingException` -> `ThrottlingException`).
    pub fn short_type(&self) -> Option<&str> {
        let t = self.error_type.as_deref()?;
        Some(t.rsplit_once('#').map_or(t, |(_, name)| name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_documented_listing() {
        let body = r#"{
          "models": [
            {"modelId": "claude-sonnet-4.5", "modelName": "Claude Sonnet 4.5", "description": "...",
             "supportedInputTypes": ["TEXT", "IMAGE"],
             "tokenLimits": {"maxInputTokens": 200000, "maxOutputTokens": 64000}},
            {"modelId": "auto", "rateMultiplier": 1.0}
          ],
          "defaultModel": {"modelId": "auto"},
          "nextToken": null
        }"#;
        let r: ListAvailableModelsResponse = serde_json::from_str(body).unwrap();
        assert_eq!(r.models.len(), 2);
        assert_eq!(r.models[0].model_id, "claude-sonnet-4.5");
        assert_eq!(r.models[0].model_name.as_deref(), Some("Claude Sonnet 4.5"));
        assert_eq!(r.models[0].supported_input_types, vec!["TEXT", "IMAGE"]);
        assert_eq!(
            r.models[0].token_limits,
            Some(TokenLimits {
                max_input_tokens: Some(200_000),
                max_output_tokens: Some(64_000)
            })
        );
        assert_eq!(r.models[1].token_limits, None);
        assert_eq!(r.default_model.unwrap().model_id, "auto");
        assert_eq!(r.next_token, None);
    }

    #[test]
    fn reads_both_error_body_shapes() {
        let a: ErrorBody = serde_json::from_str(
            r#"{"message":"Input is too long.","reason":"CONTENT_LENGTH_EXCEEDS_THRESHOLD"}"#,
        )
        .unwrap();
        assert_eq!(a.message.as_deref(), Some("Input is too long."));
        assert_eq!(
            a.reason.as_deref(),
            Some("CONTENT_LENGTH_EXCEEDS_THRESHOLD")
        );
        assert_eq!(a.short_type(), None);
        let b: ErrorBody = serde_json::from_str(
            r#"{"__type":"com.amazon.aws.codewhisperer#ValidationException","message":"bad"}"#,
        )
        .unwrap();
        assert_eq!(b.short_type(), Some("ValidationException"));
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"message":"bad","__type":"com.amazon.aws.codewhisperer#ValidationException"}"#
        );
    }
}
