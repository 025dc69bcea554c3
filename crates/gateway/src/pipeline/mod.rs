//! The `/v1` request pipeline, after the handler has parsed and validated the
//! client's body into a `ChatRequest` ([`handle`]): dispatch only.
//!
//! [`handle`] builds the request's context ([`Turn`]: one snapshot of the
//! live configuration, the upstream client with that snapshot's policy, the
//! caller, how the answer goes back), chooses the provider among those the
//! caller can reach (`providers::registry::choose`), takes the caller's
//! account for it (`providers::Accounts`), lets that provider serve the call
//! (`providers::{primary, direct}::serve`) and writes its answer
//! ([`respond`]: canonical events through the client format's encoder or
//! collector; a native relay as it is).
//!
//! When the requested model has an administrator's fallback chain
//! ([`crate::providers::fallbacks`]) and fails before its answer begins
//! (unreachable, 5xx, 429, no first token in time), the chain's models are
//! tried in turn; the answer names the model and provider that served it,
//! and usage is recorded against them.
//!
//! A failure before the first byte reaches the client is a plain HTTP error
//! with the JSON error body; after it, the stream ends with an explicit error
//! event in the client's format (interfaces.md section 4).

pub(crate) mod client;
mod fallover;
mod guard;
pub(crate) mod respond;
mod trace_content;

use std::sync::Arc;

use axum::response::Response;
use bytes::Bytes;
use translate::{ChatRequest, ClientFormat};

use crate::auth::keys::AllowedModels;
use crate::auth::Caller;
use crate::error::GatewayError;
use crate::ids;
use crate::providers::direct::DirectProvider;
use crate::providers::{direct, fallbacks, primary, registry, Answer, ChatCall, ProviderId};
use crate::state::AppState;
use crate::turn::{Reply, Turn};
use crate::usage::UsageTicket;

/// A client request as the handler hands it over.
#[derive(Debug)]
pub(crate) struct Inbound {
    pub format: ClientFormat,
    /// The body converted to the canonical model.
    pub request: ChatRequest,
    /// The body as received (native pass-through relays it).
    pub raw: Bytes,
    /// The client's `anthropic-beta` header (passed on to the messages vendor).
    pub anthropic_beta: Option<String>,
    /// The client's `anthropic-version` header (passed on natively).
    pub anthropic_version: Option<String>,
    /// Who is calling (the credentials follow from it).
    pub caller: Caller,
    /// The usage account of the request (full deployment).
    pub usage: Option<UsageTicket>,
    /// The request's one snapshot of the live configuration.
    pub rt: std::sync::Arc<crate::config::RuntimeConfig>,
    /// The key's allowed models (full deployment, a restricted key): a
    /// fallback model outside them is skipped.
    pub allowed: Option<AllowedModels>,
}

/// Serve one chat request: choose its provider, then relay it there.
pub(crate) async fn handle(app: &AppState, inbound: Inbound) -> Result<Response, GatewayError> {
    // The provider's state machine is several kilobytes; boxed here once, the
    // futures of the handler and the middleware above it stay small and cheap
    // to move.
    Box::pin(dispatch(app, inbound)).await
}

async fn dispatch(app: &AppState, inbound: Inbound) -> Result<Response, GatewayError> {
    let Inbound {
        format,
        request,
        raw,
        anthropic_beta,
        anthropic_version,
        caller,
        usage,
        rt,
        allowed,
    } = inbound;
    let mut turn = Turn {
        upstream: app.upstream(&rt),
        reply: Reply {
            format,
            id: ids::response_id(format),
            created: ids::unix_now(),
            stream: request.stream,
            include_usage: request.include_usage,
            usage,
            guard: None,
        },
        caller,
        rt,
    };
    let mut call = ChatCall {
        request,
        raw,
        anthropic_beta,
        anthropic_version,
        relay_natively: true,
    };
    if turn.rt.guardrails_enabled && !app.guardrails().is_empty() {
        // Boxed: requests without guardrails do not carry its state.
        turn.reply.guard = Box::pin(guard::check_input(app, &turn, &mut call))
            .await?
            .map(Box::new);
    }
    if let Some(trace) = turn.reply.usage.as_ref().and_then(UsageTicket::trace) {
        trace_content::note_input(trace, &call.request);
    }
    // Each path boxes its provider state machine (several kilobytes): this
    // future stays small, and the machine is built in place once instead
    // of being moved from one enclosing future into the next (measured:
    // about 8,000 instructions a request of memcpy when it was inline).
    let answer = match app.fallbacks().for_model(&call.request.model) {
        None => Box::pin(serve(app, &turn, call)).await?,
        Some(chain) => {
            Box::pin(serve_with_fallbacks(
                app,
                &turn,
                call,
                &chain,
                allowed.as_ref(),
            ))
            .await?
        }
    };
    respond::answer(&turn.reply, answer).await
}

/// Serve `call` by its model, then, while the failure lets it
/// ([`fallbacks::falls_back`]), by each model of `chain` the caller may
/// use; the first failure is the answer when none serves.
async fn serve_with_fallbacks(
    app: &AppState,
    turn: &Turn,
    call: ChatCall,
    chain: &[String],
    allowed: Option<&AllowedModels>,
) -> Result<Answer, GatewayError> {
    let first_model = call.request.model.clone();
    let failure = match serve(app, turn, call.clone()).await {
        Err(e) if fallbacks::falls_back(&e) => e,
        other => return other,
    };
    for model in chain {
        if allowed.is_some_and(|a| !a.allows(model)) {
            continue;
        }
        tracing::warn!(
            from = %first_model,
            to = %model,
            "the model failed before its answer began ({failure}); its fallback serves the request"
        );
        let mut next = call.clone();
        next.request.model.clone_from(model);
        match Box::pin(serve(app, turn, next)).await {
            Ok(answer) => return Ok(answer),
            Err(e) if fallbacks::falls_back(&e) || fallbacks::unusable(&e) => {
                tracing::warn!(model = %model, "the fallback did not serve either: {e}");
            }
            Err(e) => return Err(e),
        }
    }
    Err(failure)
}

/// Serve `call` by the provider its model names, among those the caller
/// can reach.
async fn serve(app: &AppState, turn: &Turn, mut call: ChatCall) -> Result<Answer, GatewayError> {
    let accounts = app.accounts();
    let direct_accounts = accounts.direct(&turn.caller).await?;
    let route = registry::choose(
        &turn.upstream,
        turn.rt.model_cache_refresh,
        &call.request.model,
        &direct_accounts,
        accounts.reach(&turn.caller),
        &accounts.switches().disabled(),
    )
    .await?;
    match route.provider {
        ProviderId::Primary => {
            if route.explicit {
                call.request.model = route.model;
            }
            let auth = accounts.primary(&turn.caller).await?;
            let model = app
                .model_gate()
                .resolve_primary(app.models(), &call.request.model)?;
            primary::serve(turn, auth, model, call.request).await
        }
        id => {
            app.model_gate().check(id, &route.model)?;
            let candidates: Vec<&Arc<DirectProvider>> =
                direct_accounts.iter().filter(|p| p.id == id).collect();
            if candidates.is_empty() {
                return Err(GatewayError::internal(anyhow::anyhow!(
                    "selected provider {id} has no account"
                )));
            }
            // In full deployment a bare model may go on to the next provider
            // when this one's accounts are spent (the call is kept for that).
            let spare =
                (!route.explicit && matches!(turn.caller, Caller::User(_))).then(|| call.clone());
            let served =
                direct::serve_any(turn, &candidates, &route, call, accounts.cooldowns()).await;
            match (served, spare) {
                (Err(e), Some(call)) if fallover::is_rate_limited(&e) => {
                    // Boxed: its state machine holds every provider's and
                    // would otherwise grow (and be copied with) this one's.
                    Box::pin(fallover::next_providers(
                        app,
                        turn,
                        &direct_accounts,
                        vec![id],
                        call,
                        e,
                    ))
                    .await
                }
                (served, _) => served,
            }
        }
    }
}
