//! HTTP error answers of the messages vendor: body
//! `{"type":"error","error":{"type","message"},"request_id"}`, the
//! `request-id` header, `x-should-retry`, the rate-limit headers, and
//! `retry-after` when the scenario names it. Also the in-stream error event.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::ratelimit;
use crate::http::set_header;
use crate::vendor_common::ids;
use crate::vendor_common::sse::SseFrames;

/// The in-stream error type used when a scenario names none.
pub const DEFAULT_STREAM_ERROR: &str = "overloaded_error";

/// An error answer of the messages vendor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagesError {
    pub status: StatusCode,
    pub error_type: String,
    pub message: String,
    pub retry_after: Option<u32>,
}

impl MessagesError {
    fn new(status: StatusCode, error_type: &str, message: impl Into<String>) -> Self {
        MessagesError {
            status,
            error_type: error_type.to_owned(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// 400 `invalid_request_error`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        MessagesError::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    /// 401 `authentication_error`.
    pub fn authentication(message: impl Into<String>) -> Self {
        MessagesError::new(StatusCode::UNAUTHORIZED, "authentication_error", message)
    }

    /// 404 `not_found_error`.
    pub fn not_found(message: impl Into<String>) -> Self {
        MessagesError::new(StatusCode::NOT_FOUND, "not_found_error", message)
    }

    /// The answer of a status scenario: the vendor's type and message for
    /// `code`, or the type the scenario names.
    pub fn for_status(code: u16, error_type: Option<&str>) -> Self {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let error_type = error_type.unwrap_or_else(|| type_for_status(code));
        MessagesError::new(status, error_type, message_for_type(error_type))
    }

    /// The HTTP error standing for an in-stream error of `error_type` (for
    /// non-streaming requests).
    pub fn for_type(error_type: &str) -> Self {
        let status = StatusCode::from_u16(status_for_type(error_type))
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        MessagesError::new(status, error_type, message_for_type(error_type))
    }
}

/// The vendor's `error.type` for an HTTP status.
pub fn type_for_status(code: u16) -> &'static str {
    match code {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

fn status_for_type(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    }
}

/// The vendor's usual message for an error type.
pub fn message_for_type(error_type: &str) -> &'static str {
    match error_type {
        "invalid_request_error" => "Invalid request.",
        "authentication_error" => "invalid x-api-key",
        "billing_error" => {
            "Your credit balance is too low to access the Anthropic API. \
             Please go to Plans & Billing to upgrade or purchase credits."
        }
        "permission_error" => {
            "Your API key does not have permission to use the specified resource."
        }
        "not_found_error" => "The requested resource could not be found.",
        "request_too_large" => "Request exceeds the maximum allowed number of bytes.",
        "rate_limit_error" => {
            "This request would exceed the rate limit for your organization. \
             Please reduce the prompt length or the maximum tokens requested, or try again later."
        }
        "overloaded_error" => "Overloaded",
        _ => "Internal server error",
    }
}

/// Write the in-stream `error` event of `error_type` (default `overloaded_error`).
pub(crate) fn stream_error_event(frames: &mut SseFrames, error_type: Option<&str>) {
    let error_type = error_type.unwrap_or(DEFAULT_STREAM_ERROR);
    frames.json_event(
        "error",
        &json!({"type": "error", "error": {"type": error_type, "message": message_for_type(error_type)}}),
    );
}

/// `request-id` on every answer.
pub fn set_request_id(headers: &mut HeaderMap, request_id: &str) {
    set_header(headers, "request-id", request_id);
}

impl IntoResponse for MessagesError {
    fn into_response(self) -> Response {
        let request_id = ids::anthropic_request_id();
        let body = json!({
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        });
        let mut res = (self.status, Json(body)).into_response();
        let headers = res.headers_mut();
        set_request_id(headers, &request_id);
        let code = self.status.as_u16();
        let retry = matches!(code, 408 | 409 | 429) || code >= 500;
        set_header(
            headers,
            "x-should-retry",
            if retry { "true" } else { "false" },
        );
        ratelimit::set(headers, code == 429);
        if let Some(secs) = self.retry_after {
            set_header(headers, "retry-after", &secs.to_string());
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    async fn parts(e: MessagesError) -> (u16, HeaderMap, Value) {
        let res = e.into_response();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let bytes = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn body_and_headers_of_a_rate_limit() {
        let mut e = MessagesError::for_status(429, None);
        e.retry_after = Some(3);
        let (status, headers, body) = parts(e).await;
        assert_eq!(status, 429);
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "rate_limit_error");
        let rid = body["request_id"].as_str().unwrap();
        assert_eq!(headers["request-id"], rid);
        assert_eq!(headers["retry-after"], "3");
        assert_eq!(headers["x-should-retry"], "true");
        assert_eq!(headers["anthropic-ratelimit-requests-remaining"], "0");
    }

    #[test]
    fn types_per_status_and_back() {
        for (code, t) in [
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (402, "billing_error"),
            (403, "permission_error"),
            (404, "not_found_error"),
            (413, "request_too_large"),
            (429, "rate_limit_error"),
            (500, "api_error"),
            (529, "overloaded_error"),
        ] {
            assert_eq!(type_for_status(code), t);
            assert_eq!(MessagesError::for_type(t).status.as_u16(), code);
        }
        assert_eq!(type_for_status(503), "api_error");
        assert_eq!(type_for_status(422), "invalid_request_error");
        let e = MessagesError::for_status(500, Some("overloaded_error"));
        assert_eq!((e.status.as_u16(), e.message.as_str()), (500, "Overloaded"));
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let (_, headers, body) =
            parts(MessagesError::invalid_request("model: Field required")).await;
        assert_eq!(headers["x-should-retry"], "false");
        assert_eq!(body["error"]["message"], "model: Field required");
        assert_eq!(headers["anthropic-ratelimit-requests-remaining"], "3999");
    }
}
