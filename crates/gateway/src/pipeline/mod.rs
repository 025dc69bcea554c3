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
//! A failure before the first byte reaches the client is a plain HTTP error
//! with the JSON error body; after it, the stream ends with an explicit error
//! event in the client's format (interfaces.md section 4).

pub(crate) mod client;
mod fallover;
pub(crate) mod respond;

use std::sync::Arc;

use axum::response::Response;
use bytes::Bytes;
use translate::{ChatRequest, ClientFormat};

use crate::auth::Caller;
use crate::error::GatewayError;
use crate::ids;
use crate::providers::direct::DirectProvider;
use crate::providers::{direct, primary, registry, ChatCall, ProviderId};
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
    } = inbound;
    let turn = Turn {
        upstream: app.upstream(&rt),
        reply: Reply {
            format,
            id: ids::response_id(format),
            created: ids::unix_now(),
            stream: request.stream,
            include_usage: request.include_usage,
            usage,
        },
        caller,
        rt,
    };
    let accounts = app.accounts();
    let direct_accounts = accounts.direct(&turn.caller).await?;
    let route = registry::choose(
        &turn.upstream,
        turn.rt.model_cache_refresh,
        &request.model,
        &direct_accounts,
        accounts.reach(&turn.caller),
        &accounts.switches().disabled(),
    )
    .await?;
    let mut call = ChatCall {
        request,
        raw,
        anthropic_beta,
        anthropic_version,
    };
    let answer = match route.provider {
        ProviderId::Primary => {
            if route.explicit {
                call.request.model = route.model;
            }
            let auth = accounts.primary(&turn.caller).await?;
            let model = app
                .model_gate()
                .resolve_primary(app.models(), &call.request.model)?;
            primary::serve(&turn, auth, model, call.request).await?
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
                direct::serve_any(&turn, &candidates, &route, call, accounts.cooldowns()).await;
            match (served, spare) {
                (Err(e), Some(call)) if fallover::is_rate_limited(&e) => {
                    // Boxed: its state machine holds every provider's and
                    // would otherwise grow (and be copied with) this one's.
                    Box::pin(fallover::next_providers(
                        app,
                        &turn,
                        &direct_accounts,
                        vec![id],
                        call,
                        e,
                    ))
                    .await?
                }
                (served, _) => served?,
            }
        }
    };
    respond::answer(&turn.reply, answer).await
}
