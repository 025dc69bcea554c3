//! HTTP error answers in the OpenAI shape, `{"error":{"message","type","param","code"}}`,
//! with `x-request-id`, the `x-ratelimit-*` headers and `retry-after` when
//! the scenario names it; and the in-stream error (an `error` object in a
//! data line).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::ratelimit;
use crate::http::set_header;
use crate::vendor_common::ids;
use crate::vendor_common::sse::SseFrames;

/// The in-stream error type used when a scenario names none.
pub const DEFAULT_STREAM_ERROR: &str = "server_error";

const SERVER_ERROR: &str =
    "The server had an error while processing your request. Sorry about that!";

/// An error answer in the OpenAI shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiError {
    pub status: StatusCode,
    pub message: String,
    pub error_type: String,
    pub param: Option<String>,
    pub code: Option<String>,
    pub retry_after: Option<u32>,
}

impl OpenAiError {
    pub fn new(status: StatusCode, error_type: &str, message: impl Into<String>) -> Self {
        OpenAiError {
            status,
            message: message.into(),
            error_type: error_type.to_owned(),
            param: None,
            code: None,
            retry_after: None,
        }
    }

    /// 400 `invalid_request_error`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        OpenAiError::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// Name the offending parameter.
    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// Set the machine-readable code.
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// 401 for a missing key.
    pub fn missing_key() -> Self {
        OpenAiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "You didn't provide an API key. You need to provide your API key in an \
             Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        )
    }

    /// 401 for a wrong key (shown masked, as the vendor does).
    pub fn wrong_key(key: &str) -> Self {
        OpenAiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            format!(
                "Incorrect API key provided: {}. You can find your API key at \
                 https://platform.openai.com/account/api-keys.",
                mask(key)
            ),
        )
        .code("invalid_api_key")
    }

    /// 404 for a model the vendor does not serve.
    pub fn model_not_found(model: &str) -> Self {
        OpenAiError::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            format!("The model `{model}` does not exist or you do not have access to it."),
        )
        .code("model_not_found")
    }

    /// The answer of a status scenario; `error_type` overrides type and code.
    pub fn for_status(code: u16, error_type: Option<&str>, model: &str) -> Self {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut e = match code {
            401 => OpenAiError::wrong_key("sk-sim-rejected"),
            403 => OpenAiError::new(
                status,
                "invalid_request_error",
                "Country, region, or territory not supported",
            )
            .code("unsupported_country_region_territory"),
            404 => OpenAiError::model_not_found(model),
            429 if error_type == Some("insufficient_quota") => OpenAiError::new(
                status,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
            ),
            429 => OpenAiError::new(
                status,
                "requests",
                "Rate limit reached for requests. Please try again later.",
            )
            .code("rate_limit_exceeded"),
            503 => OpenAiError::new(
                status,
                "server_error",
                "The engine is currently overloaded, please try again later.",
            ),
            500..=599 => OpenAiError::new(status, "server_error", SERVER_ERROR),
            _ => OpenAiError::invalid_request("Invalid request."),
        };
        e.status = status;
        if let Some(t) = error_type {
            e.error_type = t.to_owned();
            e.code = Some(t.to_owned());
        }
        e
    }

    /// The HTTP error standing for an in-stream error (non-streaming requests).
    pub fn for_type(error_type: &str) -> Self {
        OpenAiError::new(StatusCode::INTERNAL_SERVER_ERROR, error_type, SERVER_ERROR)
    }

    fn body(&self) -> Value {
        json!({"error": {
            "message": self.message,
            "type": self.error_type,
            "param": self.param,
            "code": self.code,
        }})
    }
}

/// `sk-abc...wxyz` style masking of a key in messages.
fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

/// Write the in-stream error: a data line holding an `error` object.
pub(crate) fn stream_error_event(frames: &mut SseFrames, error_type: Option<&str>) {
    let e = OpenAiError::for_type(error_type.unwrap_or(DEFAULT_STREAM_ERROR));
    frames.json_data(&e.body());
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(self.body())).into_response();
        let headers = res.headers_mut();
        set_header(headers, "x-request-id", &ids::openai_request_id());
        ratelimit::set(headers, self.status == StatusCode::TOO_MANY_REQUESTS);
        if let Some(secs) = self.retry_after {
            set_header(headers, "retry-after", &secs.to_string());
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(e: OpenAiError) -> (u16, axum::http::HeaderMap, Value) {
        let res = e.into_response();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let bytes = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn shape_and_headers() {
        let mut e = OpenAiError::for_status(429, None, "gpt-4o");
        e.retry_after = Some(2);
        let (status, headers, b) = body(e).await;
        assert_eq!(status, 429);
        assert_eq!(b["error"]["code"], "rate_limit_exceeded");
        assert_eq!(b["error"]["param"], Value::Null);
        assert_eq!(headers["retry-after"], "2");
        assert_eq!(headers["x-ratelimit-remaining-requests"], "0");
        assert!(headers["x-request-id"]
            .to_str()
            .unwrap()
            .starts_with("req_"));
    }

    #[test]
    fn statuses_and_overrides() {
        let e = OpenAiError::for_status(429, Some("insufficient_quota"), "m");
        assert_eq!(
            (e.error_type.as_str(), e.code.as_deref()),
            ("insufficient_quota", Some("insufficient_quota"))
        );
        assert_eq!(
            OpenAiError::for_status(404, None, "gpt-x").message,
            "The model `gpt-x` does not exist or you do not have access to it."
        );
        assert_eq!(
            OpenAiError::for_status(502, None, "m").error_type,
            "server_error"
        );
        assert_eq!(OpenAiError::for_status(502, None, "m").status.as_u16(), 502);
        assert_eq!(OpenAiError::for_status(422, None, "m").status.as_u16(), 422);
        assert_eq!(
            OpenAiError::wrong_key("sk-openai-sim").code.as_deref(),
            Some("invalid_api_key")
        );
        assert_eq!(mask("sk-openai-sim"), "sk-******-sim");
        assert_eq!(mask("short"), "*****");
    }
}
