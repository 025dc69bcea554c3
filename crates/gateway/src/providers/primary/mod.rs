//! The `primary` provider, whole: serving one request ([`serve`]), the
//! upstream request ([`request`]), reading its event-stream answer
//! ([`stream`]) with truncation recovery ([`relay`]), its models and name
//! resolution ([`models`]) and its credentials ([`credentials`]: proxy
//! mode's shared token manager, each user's own in full deployment).
//!
//! Where a `primary` answer reaches the client: [`serve`] returns its events
//! ([`crate::providers::Answer::Events`]) and the pipeline's `respond` writes
//! them in the client's format, as it does for every canonical answer.

pub mod credentials;
pub mod models;
pub mod relay;
pub mod request;
pub mod stream;

use translate::ChatRequest;

use super::{input_estimate, leading_error, Answer, EventAnswer, Events, ProviderId};
use crate::error::GatewayError;
use crate::turn::Turn;
use credentials::per_user::PrimaryAuth;
use models::ResolvedModel;
use relay::PrimaryRelay;
use request::{encode_request, CallOptions};

/// Serve one chat request through `primary` with the tokens of `auth`, for
/// `model` (the client's name resolved, e.g. by
/// [`crate::providers::model_gate::ModelGate::resolve_primary`]): the
/// request built and sent (retries, first event), the first events read. An
/// error before any content is a plain HTTP error.
pub async fn serve(
    turn: &Turn,
    auth: PrimaryAuth,
    model: ResolvedModel,
    req: ChatRequest,
) -> Result<Answer, GatewayError> {
    turn.record_route(ProviderId::Primary.as_str(), &model.id);
    tracing::debug!(
        provider = "primary",
        model = %model.id,
        requested = %req.model,
        stream = req.stream,
        "routing request"
    );
    let meta = turn.reply.meta(req.model.clone());
    let usage_hint = input_estimate(&req);

    let opts = CallOptions::for_request(&turn.rt, &req);
    let body = encode_request(&turn.rt, &auth, &req, &model, opts)?;
    let (source, first, ended) = stream::open(
        &turn.upstream,
        &auth,
        body,
        &model,
        opts.fake_reasoning.is_some(),
    )
    .await?;
    if let Some(err) = leading_error(&first) {
        return Err(err.clone().into());
    }

    let mut relay = PrimaryRelay::new(
        turn.rt.clone(),
        turn.upstream.clone(),
        auth,
        req,
        model,
        source,
    );
    let mut events = Vec::with_capacity(first.len() + 1);
    relay.first_batch(first, ended, &mut events).await;
    Ok(Answer::Events(EventAnswer {
        meta,
        usage_hint,
        first: events,
        rest: Events::Primary(Box::new(relay)),
    }))
}
