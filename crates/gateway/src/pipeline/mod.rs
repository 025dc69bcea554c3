//! The `/v1` request pipeline, after the handler has parsed and validated the
//! client's body into a `ChatRequest` ([`handle`]):
//!
//! choose the provider (`providers::Registry::select`) -> for `primary`
//! ([`run`]): resolve the model, build and send the upstream request (retries,
//! first event), then either stream the events to the client through the
//! client format's encoder or collect them into one JSON answer; for a direct
//! provider ([`direct`]): relay natively ([`passthrough`]) or convert through
//! the canonical model ([`provider_events`] reads the provider's stream).
//!
//! A failure before the first byte reaches the client is a plain HTTP error
//! with the JSON error body; after it, the stream ends with an explicit error
//! event in the client's format (interfaces.md section 4).

pub mod body;
pub mod client;
pub mod direct;
pub mod ids;
pub mod passthrough;
pub mod provider_events;
pub mod raw_body;
pub mod relay;
mod respond;
pub mod sse_blocks;
pub mod watch;

use bytes::Bytes;
use translate::{ChatEvent, ChatRequest, ClientFormat, ResponseMeta, Usage};

use crate::auth::Caller;
use crate::credentials::per_user::PrimaryAuth;
use crate::error::GatewayError;
use crate::providers::primary::{self, CallOptions};
use crate::providers::ProviderId;
use crate::state::AppState;
use crate::usage::UsageTicket;
use relay::PrimaryRelay;
use respond::Source;

/// A client request as the handler hands it over.
#[derive(Debug)]
pub struct Inbound {
    pub format: ClientFormat,
    /// The body converted to the canonical model.
    pub request: ChatRequest,
    /// The body as received (native pass-through relays it).
    pub raw: Bytes,
    /// The client's `anthropic-beta` header (passed on to the messages vendor).
    pub anthropic_beta: Option<String>,
    /// The client's `anthropic-version` header (passed on natively).
    pub anthropic_version: Option<String>,
    /// Who is calling (the `primary` credentials follow from it).
    pub caller: Caller,
    /// The usage account of the request (full deployment).
    pub usage: Option<UsageTicket>,
}

/// Serve one chat request: choose its provider, then relay it there.
pub async fn handle(
    app: &AppState,
    inbound: Inbound,
) -> Result<axum::response::Response, GatewayError> {
    // The relay's state machine is several kilobytes; boxed here once, the
    // futures of the handler and the middleware above it stay small and cheap
    // to move.
    Box::pin(route(app, inbound)).await
}

async fn route(app: &AppState, inbound: Inbound) -> Result<axum::response::Response, GatewayError> {
    let route = app.providers().select(app, &inbound.request.model).await?;
    match route.provider {
        ProviderId::Primary => {
            let mut req = inbound.request;
            if route.explicit {
                req.model = route.model;
            }
            let auth = PrimaryAuth::for_caller(app, &inbound.caller).await?;
            run(app, &auth, req, inbound.format, inbound.usage).await
        }
        id => {
            let provider = app.providers().get(id).cloned().ok_or_else(|| {
                GatewayError::internal(anyhow::anyhow!("selected provider {id} is not configured"))
            })?;
            if let Some(ticket) = &inbound.usage {
                ticket.route(id.as_str(), &route.model, inbound.request.stream);
            }
            direct::run(app, inbound, &route, provider).await
        }
    }
}

/// Serve one chat request that arrived in `format` through `primary`, with
/// the access tokens of `auth`; usage is noted on `usage`.
pub async fn run(
    app: &AppState,
    auth: &PrimaryAuth,
    req: ChatRequest,
    format: ClientFormat,
    usage: Option<UsageTicket>,
) -> Result<axum::response::Response, GatewayError> {
    let model = app.models().resolve(&req.model)?;
    if let Some(ticket) = &usage {
        ticket.route(ProviderId::Primary.as_str(), &model.id, req.stream);
    }
    crate::server::access_note::note_route(ProviderId::Primary.as_str(), &model.id);
    tracing::debug!(
        provider = "primary",
        model = %model.id,
        requested = %req.model,
        stream = req.stream,
        "routing request"
    );
    let meta = ResponseMeta {
        id: ids::response_id(format),
        model: req.model.clone(),
        created: ids::unix_now(),
    };
    let input_estimate = Usage {
        input_tokens: Some(translate::tokens::estimate_request(&req)),
        ..Usage::default()
    };

    let opts = CallOptions::for_request(app, &req);
    let body = primary::encode_request(app, auth, &req, &model, opts)?;
    let (source, first, ended) =
        primary::open(app, auth, body, &model, opts.fake_reasoning.is_some()).await?;
    // An error before any content is still "before the first byte".
    if let Some(err) = leading_error(&first) {
        return Err(GatewayError::Upstream {
            status: axum::http::StatusCode::from_u16(err.status)
                .unwrap_or(axum::http::StatusCode::BAD_GATEWAY),
            message: err.message.clone(),
            retry_after: None,
        });
    }

    let stream = req.stream;
    let include_usage = req.include_usage;
    let mut relay = PrimaryRelay::new(app.clone(), auth.clone(), req, model, source);
    let mut events = Vec::with_capacity(first.len() + 1);
    relay.first_batch(first, ended, &mut events).await;
    if stream {
        Ok(respond::stream(
            format,
            meta,
            include_usage,
            input_estimate,
            Source::Primary(Box::new(relay)),
            events,
            usage,
        ))
    } else {
        respond::collect(
            format,
            &meta,
            input_estimate,
            Source::Primary(Box::new(relay)),
            events,
            usage.as_ref(),
        )
        .await
    }
}

/// The error of a batch that carries nothing but bookkeeping before it.
fn leading_error(events: &[ChatEvent]) -> Option<&translate::StreamError> {
    for ev in events {
        match ev {
            ChatEvent::Start { .. } | ChatEvent::Usage(_) => {}
            ChatEvent::Error(err) => return Some(err),
            _ => return None,
        }
    }
    None
}
