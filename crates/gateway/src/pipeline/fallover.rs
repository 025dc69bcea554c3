//! Falling over to the next provider (interfaces-full.md 2, selection step
//! 3): in full deployment, when every account of the chosen provider
//! answered 429 or rests after one, a request for a bare model goes to the
//! next candidate provider that takes the model (the user's order; last,
//! `primary` when the user connected it). Under an explicit
//! `provider/model` there is no other candidate. When none is left, the
//! last 429 is the answer.

use std::sync::Arc;

use axum::http::StatusCode;

use crate::error::GatewayError;
use crate::providers::direct::DirectProvider;
use crate::providers::{direct, primary, registry, ChatCall, ProviderId};
use crate::state::AppState;
use crate::turn::Turn;

/// Whether `e` is a provider's 429 (its accounts are spent for now).
pub(super) fn is_rate_limited(e: &GatewayError) -> bool {
    matches!(e, GatewayError::Upstream { status, .. } if *status == StatusCode::TOO_MANY_REQUESTS)
}

/// Serve `call` by the providers after `tried` that take its model;
/// `last` is the 429 to answer when none is left.
pub(super) async fn next_providers(
    app: &AppState,
    turn: &Turn,
    available: &[Arc<DirectProvider>],
    mut tried: Vec<ProviderId>,
    call: ChatCall,
    mut last: GatewayError,
) -> Result<crate::providers::Answer, GatewayError> {
    let accounts = app.accounts();
    loop {
        let rest: Vec<Arc<DirectProvider>> = available
            .iter()
            .filter(|p| !tried.contains(&p.id))
            .cloned()
            .collect();
        let route = registry::choose(
            &turn.upstream,
            turn.rt.model_cache_refresh,
            &call.request.model,
            &rest,
            accounts.reach(&turn.caller),
            &accounts.switches().disabled(),
        )
        .await?;
        tracing::info!(
            from = %tried.last().map_or("", |p| p.as_str()),
            to = %route.provider,
            "every account rests after a 429: the next provider serves the request"
        );
        if route.provider == ProviderId::Primary {
            if tried.contains(&ProviderId::Primary) {
                return Err(last);
            }
            return match accounts.primary(&turn.caller).await {
                Ok(auth) => {
                    let model = app
                        .model_gate()
                        .resolve_primary(app.models(), &call.request.model)?;
                    primary::serve(turn, auth, model, call.request).await
                }
                // Not connected: nothing else to try.
                Err(GatewayError::ProviderNotConnected(_)) => Err(last),
                Err(e) => Err(e),
            };
        }
        app.model_gate().check(route.provider, &route.model)?;
        let candidates: Vec<&Arc<DirectProvider>> =
            rest.iter().filter(|p| p.id == route.provider).collect();
        match direct::serve_any(
            turn,
            &candidates,
            &route,
            call.clone(),
            accounts.cooldowns(),
        )
        .await
        {
            Err(e) if is_rate_limited(&e) => {
                tried.push(route.provider);
                last = e;
            }
            other => return other,
        }
    }
}
