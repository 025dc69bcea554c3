//! HTTP error answers of the primary API: body `{"message","reason"}` (no
//! `reason` key when there is none), `x-amzn-ErrorType`, `x-amzn-RequestId`
//! and, for throttling, an optional `Retry-After`.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{Map, Value};

use crate::ids;

/// The message of the bearer-token 403.
pub const BAD_TOKEN_MESSAGE: &str = "The bearer token included in the request is invalid.";
/// The message of a malformed body.
pub const IMPROPERLY_FORMED: &str = "Improperly formed request.";

/// An error answer of the primary API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub reason: Option<String>,
    pub error_type: String,
    pub retry_after: Option<u32>,
}

impl ApiError {
    /// An answer with the service's usual message and exception name for `status`.
    pub fn for_status(status: StatusCode, reason: Option<&str>) -> Self {
        let reason = reason
            .map(str::to_owned)
            .or_else(|| default_reason(status).map(str::to_owned));
        let message = reason
            .as_deref()
            .and_then(message_for_reason)
            .unwrap_or_else(|| default_message(status))
            .to_owned();
        ApiError {
            status,
            message,
            reason,
            error_type: default_error_type(status).to_owned(),
            retry_after: None,
        }
    }

    /// 400 "Improperly formed request." without a reason (shape violations).
    pub fn improperly_formed() -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: IMPROPERLY_FORMED.to_owned(),
            reason: None,
            error_type: "ValidationException".to_owned(),
            retry_after: None,
        }
    }

    /// 400 "Improperly formed request." with reason `REQUEST_BODY_INVALID`.
    pub fn body_invalid() -> Self {
        ApiError {
            reason: Some("REQUEST_BODY_INVALID".to_owned()),
            ..ApiError::improperly_formed()
        }
    }

    /// 403 for a missing, unknown, expired or revoked bearer token.
    pub fn bad_token() -> Self {
        ApiError {
            status: StatusCode::FORBIDDEN,
            message: BAD_TOKEN_MESSAGE.to_owned(),
            reason: None,
            error_type: "AccessDeniedException".to_owned(),
            retry_after: None,
        }
    }

    /// 400 with a message of the simulator itself (a bad `sim:` directive).
    pub fn simulator(message: String) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message,
            reason: Some("SIM_DIRECTIVE_INVALID".to_owned()),
            error_type: "ValidationException".to_owned(),
            retry_after: None,
        }
    }
}

fn default_reason(status: StatusCode) -> Option<&'static str> {
    match status.as_u16() {
        402 => Some("MONTHLY_REQUEST_COUNT"),
        423 => Some("TEMPORARILY_SUSPENDED"),
        500 => Some("MODEL_TEMPORARILY_UNAVAILABLE"),
        _ => None,
    }
}

fn message_for_reason(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "REQUEST_BODY_INVALID" => IMPROPERLY_FORMED,
        "CONTENT_LENGTH_EXCEEDS_THRESHOLD" => "Input is too long.",
        "INVALID_MODEL_ID" => "Invalid model. Please select a different model.",
        "MODEL_TEMPORARILY_UNAVAILABLE" => {
            "Encountered unexpectedly high load when processing the request, please try again."
        }
        "INSUFFICIENT_MODEL_CAPACITY" => {
            "I am experiencing high traffic, please try again shortly."
        }
        "MONTHLY_REQUEST_COUNT" | "OVERAGE_REQUEST_LIMIT_EXCEEDED" => {
            "You have reached the limit for requests this month."
        }
        "DAILY_REQUEST_COUNT" => "You have reached the limit for requests today.",
        "TEMPORARILY_SUSPENDED" => "Your account is temporarily suspended.",
        _ => return None,
    })
}

fn default_message(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => IMPROPERLY_FORMED,
        403 => BAD_TOKEN_MESSAGE,
        404 => "The requested resource was not found.",
        429 => "Too many requests, please wait before trying again.",
        503 => "Service is temporarily unavailable, please try again.",
        s if s >= 500 => {
            "Encountered an unexpected error when processing the request, please try again."
        }
        _ => "The request could not be processed.",
    }
}

fn default_error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        402 => "ServiceQuotaExceededException",
        403 | 423 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        s if s >= 500 => "InternalServerException",
        _ => "ValidationException",
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Map::new();
        body.insert("message".into(), Value::String(self.message));
        if let Some(reason) = self.reason {
            body.insert("reason".into(), Value::String(reason));
        }
        let mut res = (self.status, Json(Value::Object(body))).into_response();
        let headers = res.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&self.error_type) {
            headers.insert("x-amzn-ErrorType", v);
        }
        if let Ok(v) = HeaderValue::from_str(&ids::request_id()) {
            headers.insert("x-amzn-RequestId", v);
        }
        if let Some(secs) = self.retry_after {
            headers.insert(axum::http::header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn body(res: Response) -> Value {
        let bytes = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn bad_token_body_has_no_reason() {
        let res = ApiError::bad_token().into_response();
        assert_eq!(res.status(), StatusCode::FORBIDDEN);
        assert_eq!(res.headers()["x-amzn-errortype"], "AccessDeniedException");
        assert!(res.headers().contains_key("x-amzn-requestid"));
        assert_eq!(body(res).await, json!({"message": BAD_TOKEN_MESSAGE}));
    }

    #[tokio::test]
    async fn throttling_with_retry_after() {
        let mut e = ApiError::for_status(StatusCode::TOO_MANY_REQUESTS, None);
        e.retry_after = Some(2);
        let res = e.into_response();
        assert_eq!(res.headers()["retry-after"], "2");
        assert_eq!(res.headers()["x-amzn-errortype"], "ThrottlingException");
        assert_eq!(
            body(res).await,
            json!({"message": "Too many requests, please wait before trying again."})
        );
    }

    #[test]
    fn reasons_pick_messages() {
        let e = ApiError::for_status(
            StatusCode::BAD_REQUEST,
            Some("CONTENT_LENGTH_EXCEEDS_THRESHOLD"),
        );
        assert_eq!(e.message, "Input is too long.");
        let e = ApiError::for_status(StatusCode::INTERNAL_SERVER_ERROR, None);
        assert_eq!(e.reason.as_deref(), Some("MODEL_TEMPORARILY_UNAVAILABLE"));
        assert_eq!(e.error_type, "InternalServerException");
        assert_eq!(
            ApiError::body_invalid().reason.as_deref(),
            Some("REQUEST_BODY_INVALID")
        );
        assert_eq!(ApiError::body_invalid().message, IMPROPERLY_FORMED);
    }
}
