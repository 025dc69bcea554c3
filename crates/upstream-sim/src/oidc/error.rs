//! SSO OIDC error answers: HTTP status, the OAuth-style JSON body
//! `{"error","error_description"}` and the `x-amzn-ErrorType` header naming the
//! SDK exception, as the real service sends them.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// One OIDC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OidcErrorCode {
    AuthorizationPending,
    SlowDown,
    ExpiredToken,
    AccessDenied,
    InvalidGrant,
    InvalidClient,
    InvalidRequest,
    InvalidScope,
    InvalidClientMetadata,
    UnsupportedGrantType,
}

impl OidcErrorCode {
    /// The `error` field.
    pub fn as_str(self) -> &'static str {
        match self {
            OidcErrorCode::AuthorizationPending => "authorization_pending",
            OidcErrorCode::SlowDown => "slow_down",
            OidcErrorCode::ExpiredToken => "expired_token",
            OidcErrorCode::AccessDenied => "access_denied",
            OidcErrorCode::InvalidGrant => "invalid_grant",
            OidcErrorCode::InvalidClient => "invalid_client",
            OidcErrorCode::InvalidRequest => "invalid_request",
            OidcErrorCode::InvalidScope => "invalid_scope",
            OidcErrorCode::InvalidClientMetadata => "invalid_client_metadata",
            OidcErrorCode::UnsupportedGrantType => "unsupported_grant_type",
        }
    }

    /// The SDK exception name sent in `x-amzn-ErrorType`.
    pub fn exception(self) -> &'static str {
        match self {
            OidcErrorCode::AuthorizationPending => "AuthorizationPendingException",
            OidcErrorCode::SlowDown => "SlowDownException",
            OidcErrorCode::ExpiredToken => "ExpiredTokenException",
            OidcErrorCode::AccessDenied => "AccessDeniedException",
            OidcErrorCode::InvalidGrant => "InvalidGrantException",
            OidcErrorCode::InvalidClient => "InvalidClientException",
            OidcErrorCode::InvalidRequest => "InvalidRequestException",
            OidcErrorCode::InvalidScope => "InvalidScopeException",
            OidcErrorCode::InvalidClientMetadata => "InvalidClientMetadataException",
            OidcErrorCode::UnsupportedGrantType => "UnsupportedGrantTypeException",
        }
    }

    /// HTTP status: 401 for client authentication failures, 400 otherwise.
    pub fn status(self) -> StatusCode {
        match self {
            OidcErrorCode::InvalidClient => StatusCode::UNAUTHORIZED,
            OidcErrorCode::AuthorizationPending
            | OidcErrorCode::SlowDown
            | OidcErrorCode::ExpiredToken
            | OidcErrorCode::AccessDenied
            | OidcErrorCode::InvalidGrant
            | OidcErrorCode::InvalidRequest
            | OidcErrorCode::InvalidScope
            | OidcErrorCode::InvalidClientMetadata
            | OidcErrorCode::UnsupportedGrantType => StatusCode::BAD_REQUEST,
        }
    }
}

/// An OIDC error with its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcError {
    pub code: OidcErrorCode,
    pub description: String,
}

impl OidcError {
    pub fn new(code: OidcErrorCode, description: impl Into<String>) -> Self {
        OidcError {
            code,
            description: description.into(),
        }
    }
}

impl IntoResponse for OidcError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.code.as_str(), "error_description": self.description});
        let mut res = (self.code.status(), Json(body)).into_response();
        res.headers_mut().insert(
            "x-amzn-ErrorType",
            HeaderValue::from_static(self.code.exception()),
        );
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn renders_status_body_and_error_type() {
        let res = OidcError::new(OidcErrorCode::AuthorizationPending, "pending").into_response();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            res.headers()["x-amzn-errortype"],
            "AuthorizationPendingException"
        );
        let body = axum::body::to_bytes(res.into_body(), 1024).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            json!({"error":"authorization_pending","error_description":"pending"})
        );
        assert_eq!(
            OidcError::new(OidcErrorCode::InvalidClient, "x")
                .into_response()
                .status(),
            StatusCode::UNAUTHORIZED
        );
    }
}
