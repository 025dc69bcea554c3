//! The request-body limit (`max_request_body`, default 10 MiB; spec 8 leaves it
//! open). A body above the limit is answered 413 `request_too_large` in the
//! spec's error format, whether its size is announced (`Content-Length`,
//! refused before reading) or only discovered while reading (chunked).
//!
//! The body is read here once and handed on as one buffer, so handlers'
//! extractors never meet a half-read body; axum's own 2 MB default limit is
//! switched off in the router for the same reason.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use bytes::BytesMut;
use futures::StreamExt as _;

use crate::error::GatewayError;
use crate::state::AppState;

/// The body-limit middleware.
pub async fn limit_body(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, GatewayError> {
    let limit = state.runtime().max_request_body.bytes();
    let headers = request.headers();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit) {
        return Err(GatewayError::PayloadTooLarge { limit: Some(limit) });
    }
    let has_body =
        declared.is_some_and(|len| len > 0) || headers.contains_key(header::TRANSFER_ENCODING);
    if !has_body {
        return Ok(next.run(request).await);
    }

    let (parts, body) = request.into_parts();
    let capacity = declared.map_or(0, |len| usize::try_from(len).unwrap_or(0));
    let mut buffer = BytesMut::with_capacity(capacity);
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            GatewayError::validation(format!("the request body could not be read: {e}"))
        })?;
        if (buffer.len() + chunk.len()) as u64 > limit {
            return Err(GatewayError::PayloadTooLarge { limit: Some(limit) });
        }
        buffer.extend_from_slice(&chunk);
    }
    let request = Request::from_parts(parts, Body::from(buffer.freeze()));
    Ok(next.run(request).await)
}
