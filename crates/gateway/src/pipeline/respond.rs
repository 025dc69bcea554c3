//! The two ways an answer leaves: as an SSE stream written while the provider
//! answers, or as one JSON object collected from the same events. The events
//! come from a [`Source`]: the primary relay, a direct provider's SSE stream
//! read through its format's parser, or nothing more (all events known).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use translate::{ChatEvent, ClientFormat, Collector, ResponseMeta, Usage};

use super::client::{self, ClientEncoder};
use super::provider_events::ProviderEvents;
use super::relay::PrimaryRelay;
use crate::error::GatewayError;
use crate::usage::UsageTicket;

/// Where the rest of an answer's events come from.
pub enum Source {
    /// A `primary` answer with truncation recovery.
    Primary(Box<PrimaryRelay>),
    /// A direct provider's stream in a format other than the client's.
    Provider(Box<ProviderEvents>),
    /// Every event is known already.
    Done,
}

impl Source {
    /// Append the next events to `out`; `false` once the answer is complete.
    pub async fn next(&mut self, out: &mut Vec<ChatEvent>) -> bool {
        match self {
            Source::Primary(relay) => relay.next(out).await,
            Source::Provider(events) => events.fill(out).await,
            Source::Done => false,
        }
    }
}

/// Note what an event tells the usage account: reported usage, or the
/// error that ends the stream.
fn note(usage: Option<&UsageTicket>, ev: &ChatEvent) {
    if let Some(ticket) = usage {
        match ev {
            ChatEvent::Usage(u) => ticket.add_usage(u),
            ChatEvent::Error(err) => ticket.stream_failed(err.status),
            _ => {}
        }
    }
}

/// Notes, when an answer's stream is dropped before it ended, that the
/// client went away: the body is dropped by the server when the client
/// disconnects, and with it the upstream request.
pub struct Unfinished {
    usage: Option<UsageTicket>,
    finished: bool,
}

impl Unfinished {
    pub fn new(usage: Option<UsageTicket>) -> Self {
        Unfinished {
            usage,
            finished: false,
        }
    }

    pub fn usage(&self) -> Option<&UsageTicket> {
        self.usage.as_ref()
    }

    /// The answer ended (completely or with its error event).
    pub fn finish(&mut self) {
        self.finished = true;
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.finished {
            tracing::info!("client went away; upstream request cancelled");
            if let Some(ticket) = &self.usage {
                ticket.client_gone();
            }
        }
    }
}

/// Start the SSE answer. The response body reads the provider as the client
/// takes the chunks (no task in between: one chunk is encoded per read of
/// the provider); when the client goes away, the server drops the body and
/// with it the upstream request. The body holds `usage` until the stream
/// ends, so the request is recorded with the final usage.
pub fn stream(
    format: ClientFormat,
    meta: ResponseMeta,
    include_usage: bool,
    usage_hint: Usage,
    mut relay: Source,
    first: Vec<ChatEvent>,
    usage: Option<UsageTicket>,
) -> Response {
    if let Some(ticket) = &usage {
        ticket.add_usage(&usage_hint);
    }
    let mut encoder = ClientEncoder::new(format, meta, include_usage, usage_hint);
    let mut state = Unfinished::new(usage);
    let body = async_stream::stream! {
        let mut out = BytesMut::with_capacity(4096);
        encoder.begin(&mut out);
        for ev in &first {
            note(state.usage(), ev);
            encoder.push(ev, &mut out);
        }
        let mut events = Vec::new();
        loop {
            if !out.is_empty() {
                yield Ok::<_, Infallible>(out.split().freeze());
            }
            events.clear();
            let more = relay.next(&mut events).await;
            for ev in &events {
                note(state.usage(), ev);
                encoder.push(ev, &mut out);
            }
            if !more {
                encoder.finish(&mut out);
                state.finish();
                if !out.is_empty() {
                    yield Ok(out.split().freeze());
                }
                break;
            }
        }
    };
    sse_response(Body::from_stream(body))
}

/// An SSE response with `body`.
pub fn sse_response(body: Body) -> Response {
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

/// Collect the whole answer and render it as the client's JSON; its usage
/// is noted on `usage`.
pub async fn collect(
    format: ClientFormat,
    meta: &ResponseMeta,
    usage_hint: Usage,
    mut relay: Source,
    first: Vec<ChatEvent>,
    usage: Option<&UsageTicket>,
) -> Result<Response, GatewayError> {
    let mut collector = Collector::new();
    collector.push(ChatEvent::Usage(usage_hint));
    for ev in first {
        collector.push(ev);
    }
    let mut events = Vec::new();
    loop {
        let more = relay.next(&mut events).await;
        for ev in events.drain(..) {
            collector.push(ev);
        }
        if !more {
            break;
        }
    }
    let answer = collector.finish();
    if let (Some(ticket), Ok(answer)) = (usage, &answer) {
        ticket.add_usage(&answer.usage);
    }
    let answer = answer.map_err(|err| GatewayError::Upstream {
        status: StatusCode::from_u16(err.status).unwrap_or(StatusCode::BAD_GATEWAY),
        message: err.message,
        retry_after: None,
    })?;
    let body = client::render(format, &answer, meta).map_err(GatewayError::internal)?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}
