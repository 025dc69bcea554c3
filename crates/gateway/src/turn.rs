//! [`Turn`]: the immutable context of one `/v1` chat request, built once at
//! the pipeline's entry and handed down to the provider that serves it.
//!
//! It carries the one snapshot of the live runtime configuration the request
//! reads (a configuration change in the middle of a request never mixes two
//! versions), the upstream client with that snapshot's retry policy and
//! timeouts, the caller, and how the answer goes back ([`Reply`]). Providers,
//! credentials and the response writers take a `&Turn` (or narrower inputs),
//! never the application state.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use translate::{ClientFormat, ResponseMeta};

use crate::auth::Caller;
use crate::config::RuntimeConfig;
use crate::upstream::Upstream;
use crate::usage::UsageTicket;

/// One chat request's view of the service.
#[derive(Debug)]
pub struct Turn {
    /// The runtime configuration, read once for the whole request.
    pub rt: Arc<RuntimeConfig>,
    pub upstream: Upstream,
    pub caller: Caller,
    pub reply: Reply,
}

/// How the answer goes back to the client.
#[derive(Debug)]
pub struct Reply {
    pub format: ClientFormat,
    /// The response id (`chatcmpl-...`, `msg_...`) and creation time.
    pub id: String,
    pub created: u64,
    pub stream: bool,
    /// Chat completions: whether the client wants the usage chunk.
    pub include_usage: bool,
    /// The usage account of the request (full deployment).
    pub usage: Option<UsageTicket>,
    /// What guardrails still do to the answer, when they apply.
    pub guard: Option<Box<crate::guardrails::AnswerGuard>>,
}

impl Reply {
    /// The response meta under the model name the client is shown.
    pub fn meta(&self, model: String) -> ResponseMeta {
        ResponseMeta {
            id: self.id.clone(),
            model,
            created: self.created,
        }
    }
}

impl Turn {
    /// Record where the request goes, in the one place both readers look:
    /// the usage account and the access line.
    pub fn record_route(&self, provider: &'static str, model: &str) {
        if let Some(ticket) = &self.reply.usage {
            ticket.route(provider, model, self.reply.stream);
        }
        crate::logging::access_note::note_route(provider, model);
    }
}

/// An SSE response with `body` and the headers streaming clients expect.
pub(crate) fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The client format's in-stream error event.
pub(crate) fn error_event(
    format: ClientFormat,
    err: &translate::StreamError,
    out: &mut bytes::BytesMut,
) {
    match format {
        ClientFormat::OpenAi => translate::openai::error_event(err, out),
        ClientFormat::Anthropic => translate::anthropic::error_event(err, out),
    }
}
