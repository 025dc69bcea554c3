//! Error answers of the guardrail service: body `{"message": …}`, the error's
//! name in `x-amzn-ErrorType`, and `x-amzn-RequestId`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::sigv4::SigError;
use crate::http::set_header;
use crate::ids;

/// An error answer of the guardrail service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardrailError {
    pub status: StatusCode,
    pub error_type: String,
    pub message: String,
}

impl GuardrailError {
    pub fn new(status: StatusCode, error_type: &str, message: impl Into<String>) -> Self {
        GuardrailError {
            status,
            error_type: error_type.to_owned(),
            message: message.into(),
        }
    }

    /// 400 `ValidationException`.
    pub fn validation(message: impl Into<String>) -> Self {
        GuardrailError::new(StatusCode::BAD_REQUEST, "ValidationException", message)
    }

    /// 400 `SerializationException`: a body that is not a JSON object.
    pub fn serialization() -> Self {
        let message = "Start of structure or map found where not expected.";
        GuardrailError::new(StatusCode::BAD_REQUEST, "SerializationException", message)
    }

    /// 404 for a path the service does not have.
    pub fn unknown_operation() -> Self {
        GuardrailError::new(StatusCode::NOT_FOUND, "UnknownOperationException", "")
    }

    /// The answer of a `status` scenario: the service's error for `code`,
    /// named `error_type` when given.
    pub fn for_status(code: u16, error_type: Option<&str>) -> Self {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (default_type, message) = match code {
            400 => ("ValidationException", "The request is not valid."),
            403 => (
                "AccessDeniedException",
                "User is not authorized to perform: bedrock:ApplyGuardrail",
            ),
            404 => (
                "ResourceNotFoundException",
                "The guardrail identifier or version provided does not exist.",
            ),
            429 => (
                "ThrottlingException",
                "Too many requests, please wait before trying again.",
            ),
            503 => (
                "ServiceUnavailableException",
                "The service is temporarily unavailable, please try again.",
            ),
            c if c >= 500 => (
                "InternalServerException",
                "The server encountered an internal error while processing the request.",
            ),
            _ => ("ValidationException", "The request could not be processed."),
        };
        GuardrailError::new(status, error_type.unwrap_or(default_type), message)
    }
}

impl From<SigError> for GuardrailError {
    /// Every signature refusal is a 403.
    fn from(e: SigError) -> Self {
        GuardrailError::new(StatusCode::FORBIDDEN, e.error_type(), e.message())
    }
}

impl IntoResponse for GuardrailError {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(json!({"message": self.message}))).into_response();
        let headers = res.headers_mut();
        set_header(headers, "x-amzn-errortype", &self.error_type);
        set_header(headers, "x-amzn-requestid", &ids::request_id());
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_their_types() {
        for (code, name) in [
            (400, "ValidationException"),
            (403, "AccessDeniedException"),
            (404, "ResourceNotFoundException"),
            (429, "ThrottlingException"),
            (500, "InternalServerException"),
            (502, "InternalServerException"),
            (503, "ServiceUnavailableException"),
        ] {
            let e = GuardrailError::for_status(code, None);
            assert_eq!((e.status.as_u16(), e.error_type.as_str()), (code, name));
        }
        let e = GuardrailError::for_status(429, Some("ServiceQuotaExceededException"));
        assert_eq!(e.error_type, "ServiceQuotaExceededException");
    }

    #[tokio::test]
    async fn the_answer_carries_type_and_request_id() {
        let res = GuardrailError::from(SigError::UnknownKey).into_response();
        assert_eq!(res.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            res.headers()["x-amzn-errortype"],
            "UnrecognizedClientException"
        );
        assert!(res.headers().contains_key("x-amzn-requestid"));
        let body = axum::body::to_bytes(res.into_body(), 4096).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body,
            json!({"message": "The security token included in the request is invalid."})
        );
    }
}
