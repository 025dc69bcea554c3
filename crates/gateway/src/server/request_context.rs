//! The outermost middleware: the request id, the request span, and the access
//! log.
//!
//! - The id is the client's `x-request-id` when it is sane (1-128 characters
//!   of `A-Z a-z 0-9 - _ . : / + = @`), else a new UUID; it is put in the
//!   request extensions as [`RequestId`] and echoed in `x-request-id` on every
//!   response.
//! - Everything the request does runs inside the span `request{request_id=...}`,
//!   so every log line of the request carries the id.
//! - One access line per request when its response starts: method, path,
//!   status, latency (to the response head; a stream goes on after it), the
//!   provider and model the request went to and, in full deployment, the
//!   user and key that called ([`access_note`]), and the error
//!   recorded by `GatewayError`, with the internal detail that the client
//!   never sees.
//! - `gateway_requests_total` for every `/v1` request, and its duration
//!   unless a chat call's usage ticket times the whole answer (a stream
//!   ends after its head).
//! - With traces on, the server span of every `/v1` request
//!   ([`telemetry::traces`]), current while the request is handled.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use tracing::Instrument as _;

use super::Next;
use crate::error::{GatewayError, LoggedError};
use crate::logging::access_note;
use crate::telemetry;

/// The `x-request-id` header.
pub(crate) static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// The provider that answered a `/v1` request (issue 21), when one did.
pub(crate) static X_GATEWAY_PROVIDER: HeaderName = HeaderName::from_static("x-gateway-provider");

/// The id of the current request, in the request extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestId(pub Arc<str>);

/// Whether a client-sent id can be adopted as it is.
pub(crate) fn is_sane_request_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=@".contains(&b))
}

/// What a request's server span needs when traces are exported.
pub(crate) struct TraceStart {
    pub exporter: telemetry::traces::Exporter,
    /// `otel_capture_content` now.
    pub capture_content: bool,
}

/// The W3C trace context header.
static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// The middleware.
pub(crate) async fn request_context(
    mut request: Request,
    trace: Option<TraceStart>,
    next: impl Next,
) -> Response {
    let id: Arc<str> = request
        .headers()
        .get(&X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| is_sane_request_id(v))
        .map(Arc::from)
        .unwrap_or_else(|| Arc::from(crate::ids::fast_uuid_text(&mut [0; 36])));
    request.extensions_mut().insert(RequestId(id.clone()));

    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let endpoint = telemetry::Endpoint::of_path(&path);
    // The listing answers in the messages format to its SDKs (they send
    // `anthropic-version`); the other endpoints have one format each.
    let anthropic = match endpoint {
        Some(telemetry::Endpoint::Messages | telemetry::Endpoint::CountTokens) => true,
        Some(telemetry::Endpoint::Models) => request.headers().contains_key("anthropic-version"),
        _ => false,
    };
    let server_span = match (trace, endpoint) {
        (Some(trace), Some(endpoint)) => Some(telemetry::traces::ServerSpan::start(
            trace.exporter,
            request
                .headers()
                .get(&TRACEPARENT)
                .map(HeaderValue::as_bytes),
            endpoint.is_chat(),
            format!("{method} {}", endpoint.label()),
            trace.capture_content,
        )),
        _ => None,
    };
    let span = tracing::info_span!("request", request_id = %id);
    let started = Instant::now();
    // Each arm builds the handler's future in place: built once outside and
    // moved into an arm, the (large) future was copied on every request
    // (measured: about 12,000 instructions of memcpy). With traces on, the
    // scoped future is boxed, so this future stays the size it was.
    let (mut response, note) = match &server_span {
        None => access_note::scoped(next.run(request).instrument(span.clone())).await,
        Some(server_span) => {
            let handled = next.run(request).instrument(span.clone());
            access_note::scoped(Box::pin(telemetry::traces::scoped(
                server_span.clone(),
                handled,
            )))
            .await
        }
    };
    let (provider, model) = (note.provider, note.model.as_deref());
    // The account as text written once into stack buffers: as `Display`
    // values each layer (the formatter, the live log stream) formatted
    // both UUIDs again through `fmt`, about 2,000 instructions a request.
    let (mut user_text, mut key_text) = (uuid::Uuid::encode_buffer(), uuid::Uuid::encode_buffer());
    let (user_id, key_id): (Option<&str>, Option<&str>) = match note.account {
        Some(a) => (
            Some(a.user_id.hyphenated().encode_lower(&mut user_text)),
            Some(a.key_id.hyphenated().encode_lower(&mut key_text)),
        ),
        None => (None, None),
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;

    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(X_REQUEST_ID.clone(), value);
    }
    if let Some(provider) = provider {
        response.headers_mut().insert(
            X_GATEWAY_PROVIDER.clone(),
            HeaderValue::from_static(provider),
        );
    }

    let status = response.status().as_u16();
    if let Some(server_span) = server_span {
        // A chat call's usage ticket holds the span on to the answer's end.
        server_span.status(status);
    }
    if let Some(endpoint) = endpoint {
        telemetry::series::record_request(&telemetry::series::RequestDone {
            endpoint,
            anthropic,
            provider,
            model,
            status,
            duration_secs: (!note.answer_metered).then(|| latency_ms / 1000.0),
        });
    }
    let error = response
        .extensions()
        .get::<LoggedError>()
        .map(|e| e.0.clone());
    span.in_scope(|| {
        let latency_ms = (latency_ms * 10.0).round() / 10.0;
        match error.as_deref() {
            Some(err @ GatewayError::Internal(_)) => tracing::error!(
                %method, %path, status, latency_ms, provider, model, user_id, key_id,
                error_type = err.kind(),
                "request failed: {err}"
            ),
            Some(err) if status >= 500 => tracing::warn!(
                %method, %path, status, latency_ms, provider, model, user_id, key_id,
                error_type = err.kind(),
                "request failed: {}", crate::logging::mask_text(&err.to_string())
            ),
            Some(err) => tracing::info!(
                %method, %path, status, latency_ms, provider, model, user_id, key_id,
                error_type = err.kind(),
                "request refused: {}", crate::logging::mask_text(&err.to_string())
            ),
            None => tracing::info!(%method, %path, status, latency_ms, provider, model, user_id, key_id, "request"),
        }
    });
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sane_ids() {
        assert!(is_sane_request_id("abc-123"));
        assert!(is_sane_request_id("req_01HZX:7/+=@x.y"));
        assert!(is_sane_request_id(&"a".repeat(128)));
        assert!(!is_sane_request_id(""));
        assert!(!is_sane_request_id(&"a".repeat(129)));
        assert!(!is_sane_request_id("has space"));
        assert!(!is_sane_request_id("quote\"d"));
        assert!(!is_sane_request_id("line\nbreak"));
    }
}
