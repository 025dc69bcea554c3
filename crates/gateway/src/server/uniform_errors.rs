//! A safety net that keeps every error in the spec's format (part 7): an error
//! response that did not come from `GatewayError` (axum's own 405, an
//! extractor rejection with a plain-text body, ...) is rewritten as
//! `{"error":{"message","type"}}` with a type that fits its status. JSON error
//! bodies are left alone (a handler may answer in a client format's own shape).

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::Next;
use crate::error::{GatewayError, LoggedError};

/// Plain-text error bodies longer than this are cut.
const MAX_TEXT: usize = 4096;

/// The middleware.
pub(crate) async fn uniform_errors(request: Request, next: impl Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || response.extensions().get::<LoggedError>().is_some()
        || is_json(&response)
    {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let (_, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, MAX_TEXT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(_) => String::new(),
    };
    let mut rewritten = error_for(status, text).into_response();
    if let Some(allow) = allow {
        rewritten.headers_mut().insert(header::ALLOW, allow);
    }
    rewritten
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json") || ct.contains("+json"))
}

/// The `GatewayError` that best describes a bare error status.
fn error_for(status: StatusCode, text: String) -> GatewayError {
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    match status.as_u16() {
        401 => GatewayError::Auth(crate::error::AuthFailure::InvalidKey),
        403 => GatewayError::Forbidden(message),
        404 => GatewayError::NotFound(message),
        405 => GatewayError::MethodNotAllowed,
        413 => GatewayError::PayloadTooLarge { limit: None },
        400..=499 => GatewayError::Validation(message),
        502..=504 => GatewayError::Upstream {
            status,
            message,
            retry_after: None,
        },
        _ => GatewayError::internal(anyhow::anyhow!("{status}: {message}")),
    }
}
