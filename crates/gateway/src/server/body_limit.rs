//! The request-body limit (`max_request_body`, default 10 MiB; spec 8 leaves it
//! open). A body above the limit is answered 413 `request_too_large` in the
//! spec's error format, whether its size is announced (`Content-Length`,
//! refused before reading) or only discovered while reading (chunked).
//!
//! The body is read here once and handed on as one buffer, so handlers'
//! extractors never meet a half-read body; axum's own 2 MB default limit is
//! switched off in the router for the same reason.
//!
//! Having the whole body, this is also where `DEBUG_MODE` logs request bodies
//! (`errors`: of requests answered with an error status; `all`: every one),
//! always through [`mask_secrets`] and cut at [`LOGGED_BODY_LIMIT`].

use std::future::Future as _;
use std::task::Poll;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::response::Response;
use bytes::BytesMut;
use futures::StreamExt as _;

use super::Next;
use crate::config::RequestConfig;
use crate::error::GatewayError;
use crate::logging::mask_secrets;
use crate::state::AppState;

/// At most this many bytes of a body are logged.
pub(crate) const LOGGED_BODY_LIMIT: usize = 64 * 1024;

/// The body-limit middleware.
pub(crate) async fn limit_body(
    state: &AppState,
    mut request: Request,
    next: impl Next,
) -> Result<Response, GatewayError> {
    // The request's one read of the live configuration.
    let rt = state.runtime();
    request.extensions_mut().insert(RequestConfig(rt.clone()));
    let limit = rt.max_request_body.bytes();
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
    // A body that trickles in holds a task and its buffer: it has a
    // deadline. Most bodies arrive with their headers, so each read is tried
    // once before a timer is armed; the deadline starts at the first wait.
    let mut deadline = None;
    loop {
        let mut read = std::pin::pin!(stream.next());
        let next = match std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
            Poll::Ready(next) => next,
            Poll::Pending => {
                let at = *deadline
                    .get_or_insert_with(|| tokio::time::Instant::now() + rt.body_read_timeout);
                tokio::time::timeout_at(at, read)
                    .await
                    .map_err(|_| GatewayError::RequestTimeout(rt.body_read_timeout.as_secs()))?
            }
        };
        let Some(chunk) = next else { break };
        let chunk = chunk.map_err(|e| {
            GatewayError::validation(format!("the request body could not be read: {e}"))
        })?;
        if (buffer.len() + chunk.len()) as u64 > limit {
            return Err(GatewayError::PayloadTooLarge { limit: Some(limit) });
        }
        buffer.extend_from_slice(&chunk);
    }
    let body = buffer.freeze();
    let request = Request::from_parts(parts, Body::from(body.clone()));
    let response = next.run(request).await;
    let failed = response.status().is_client_error() || response.status().is_server_error();
    if rt.debug_mode.logs_body(failed) {
        tracing::info!(
            status = response.status().as_u16(),
            bytes = body.len(),
            "request body: {}",
            loggable_body(&body)
        );
    }
    Ok(response)
}

/// The body as masked text, cut at [`LOGGED_BODY_LIMIT`] bytes.
pub(crate) fn loggable_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if body.len() <= LOGGED_BODY_LIMIT {
        return mask_secrets(&text);
    }
    // Cut text is no longer JSON: the masking falls back to its text patterns.
    let mut end = LOGGED_BODY_LIMIT.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}... ({} bytes in all)",
        mask_secrets(&text[..end]),
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_bodies_are_masked_and_cut() {
        let body = br#"{"model":"m","api_key":"sk-abcdefgh12345"}"#;
        assert_eq!(loggable_body(body), r#"{"model":"m","api_key":"***"}"#);
        let big = vec![b'a'; LOGGED_BODY_LIMIT + 10];
        let logged = loggable_body(&big);
        assert!(logged.ends_with(&format!("... ({} bytes in all)", LOGGED_BODY_LIMIT + 10)));
        assert!(logged.len() < LOGGED_BODY_LIMIT + 40);
    }
}
