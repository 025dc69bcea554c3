//! The two ways a canonical answer leaves: as an SSE stream written while the
//! provider answers, or as one JSON object collected from the same events.
//! The events come from the provider's [`EventAnswer`]: its first batch, then
//! its [`Events`] source (the primary relay, a direct provider's stream read
//! through its format's parser, or nothing more).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use translate::{ChatEvent, Collector};

use super::client::{self, ClientEncoder};
use crate::error::GatewayError;
use crate::providers::{Answer, EventAnswer};
use crate::turn::{sse_response, Reply};
use crate::usage::{Unfinished, UsageTicket};

/// Note what an event tells the usage account: reported usage, or the
/// error that ends the stream.
fn note(usage: Option<&UsageTicket>, ev: &ChatEvent) {
    if let Some(ticket) = usage {
        match ev {
            ChatEvent::Usage(u) => ticket.add_usage(u),
            ChatEvent::Error(err) => ticket.stream_failed(err.status),
            ChatEvent::TextDelta(text) => {
                if let Some(trace) = ticket.trace() {
                    trace.output_text(text);
                }
            }
            ChatEvent::Start {
                model: Some(model), ..
            } => {
                if let Some(trace) = ticket.trace() {
                    trace.response_model(model);
                }
            }
            _ => {}
        }
    }
}

/// Start the SSE answer. The response body reads the provider as the client
/// takes the chunks (no task in between: one chunk is encoded per read of
/// the provider); when the client goes away, the server drops the body and
/// with it the upstream request. The body holds the usage ticket until the
/// stream ends, so the request is recorded with the final usage.
pub(crate) fn stream(reply: &Reply, answer: EventAnswer) -> Response {
    let EventAnswer {
        meta,
        usage_hint,
        first,
        mut rest,
    } = answer;
    if let Some(ticket) = &reply.usage {
        ticket.add_usage(&usage_hint);
    }
    let mut encoder = ClientEncoder::new(reply.format, meta, reply.include_usage, usage_hint);
    let mut state = Unfinished::new(reply.usage.clone());
    // The time to first token is the first batch of events that goes out.
    let mut timed = false;
    let body = async_stream::stream! {
        let mut out = BytesMut::with_capacity(4096);
        encoder.begin(&mut out);
        for ev in &first {
            note(state.usage(), ev);
            encoder.push(ev, &mut out);
        }
        let mut events = Vec::new();
        let mut pushed = !first.is_empty();
        loop {
            if pushed && !timed {
                timed = true;
                if let Some(ticket) = state.usage() {
                    ticket.first_token();
                }
            }
            if !out.is_empty() {
                yield Ok::<_, Infallible>(out.split().freeze());
            }
            events.clear();
            let more = rest.next(&mut events).await;
            pushed = !events.is_empty();
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
    let mut response = sse_response(Body::from_stream(body));
    if reply.guard.is_some() {
        // A stream's guard is only ever a masked input.
        super::guard::mark_redacted(&mut response);
    }
    response
}

/// Collect the whole answer and render it as the client's JSON; its usage
/// is noted on the reply's ticket.
pub(crate) async fn collect(reply: &Reply, answer: EventAnswer) -> Result<Response, GatewayError> {
    let EventAnswer {
        meta,
        usage_hint,
        first,
        mut rest,
    } = answer;
    let mut collector = Collector::for_answer();
    collector.push(ChatEvent::Usage(usage_hint));
    for ev in first {
        collector.push(ev);
    }
    let mut events = Vec::new();
    loop {
        let more = rest.next(&mut events).await;
        for ev in events.drain(..) {
            collector.push(ev);
        }
        if !more {
            break;
        }
    }
    let answer = collector.finish();
    if let (Some(ticket), Ok(answer)) = (&reply.usage, &answer) {
        ticket.add_usage(&answer.usage);
    }
    let mut answer = answer?;
    let warning = match &reply.guard {
        Some(guard) => Box::pin(super::guard::check_output(guard, &mut answer)).await?,
        None => None,
    };
    if let Some(trace) = reply.usage.as_ref().and_then(UsageTicket::trace) {
        if let Some(model) = &answer.model {
            trace.response_model(model);
        }
        if trace.captures() {
            trace.output_text(&answer.text());
        }
    }
    let mut body = client::render(reply.format, &answer, &meta);
    if let Some(warning) = &warning {
        body = super::guard::with_warning(body, warning);
    }
    let mut response = (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    if warning.is_some() {
        super::guard::mark_redacted(&mut response);
    }
    Ok(response)
}

/// Write a provider's answer for the client: events encoded or collected,
/// a natively relayed response as it is.
pub(crate) async fn answer(reply: &Reply, answer: Answer) -> Result<Response, GatewayError> {
    match answer {
        Answer::Relayed(response) => Ok(response),
        Answer::Events(events) if reply.stream => Ok(stream(reply, events)),
        Answer::Events(events) => collect(reply, events).await,
    }
}
