//! Client authentication of `/v1/*` (spec 5.2), as middleware: proxy mode's
//! one key ([`require_proxy_key`]) and full deployment's per-user keys
//! ([`require_user_key`], after the setup check of [`super::setup_guard`]).
//! The front door runs the same steps itself for the two chat calls, which
//! skip the router ([`admit_proxy_key`], [`super::setup_guard::admit`]).
//! The pure pieces (which keys a request presents, hashing, the lookup
//! cache) are in [`crate::auth`].
//!
//! In full deployment the presented key is hashed and looked up in the
//! in-memory cache, then the store; a hit attaches [`Caller::User`] (user id
//! and key id) and the request's [`crate::usage::UsageTicket`], and notes
//! the account for the access line ([`access_note::note_account`]). The user's
//! provider credentials are taken per request by the pipeline.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

use crate::auth::keys::{self, ApiKeyHash};
use crate::auth::{check, presented_keys, Caller};
use crate::error::{AuthFailure, GatewayError};
use crate::logging::access_note;
use crate::state::AppState;
use crate::telemetry::Endpoint;
use crate::usage::UsageTicket;

/// Middleware for `/v1/*` in proxy mode.
pub(crate) async fn require_proxy_key(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, GatewayError> {
    admit_proxy_key(&state, &mut request)?;
    Ok(next.run(request).await)
}

/// Proxy mode's check of `request`'s key; what it attaches for the handler.
pub(crate) fn admit_proxy_key(state: &AppState, request: &mut Request) -> Result<(), GatewayError> {
    let Some(expected) = state.proxy_key_hash() else {
        // Proxy mode always has a key (config validation); fail closed anyway.
        return Err(GatewayError::Config(
            "PROXY_API_KEY is not configured".into(),
        ));
    };
    check(request.headers(), expected).map_err(GatewayError::Auth)?;
    request.extensions_mut().insert(Caller::Proxy);
    let endpoint = endpoint_of(request);
    if endpoint.is_chat() {
        // Nothing is recorded in proxy mode; the ticket carries the
        // answer's metrics to its end.
        request
            .extensions_mut()
            .insert(UsageTicket::unrecorded(endpoint));
    }
    Ok(())
}

/// The `/v1` endpoint of `request` (its path without `/v1` inside the
/// nested router, with it when the front door serves a chat call).
fn endpoint_of(request: &Request) -> Endpoint {
    Endpoint::of_route(request.uri().path())
}

/// `/v1/*` in full deployment, after the setup check: the per-user key of
/// the request (see the module doc). Keys that do not have the shape of an
/// issued key are refused without a lookup.
pub(crate) async fn require_user_key(
    app: &AppState,
    mut request: Request,
    next: impl super::Next,
) -> Result<Response, GatewayError> {
    let store = app.store()?;
    let mut presented = false;
    let mut found = None;
    for key in presented_keys(request.headers()) {
        presented = true;
        if !keys::well_formed(key) {
            continue;
        }
        found = app.key_cache().lookup(store, ApiKeyHash::of(key)).await?;
        if found.is_some() {
            break;
        }
    }
    let key = match (presented, found) {
        (_, Some(key)) => key,
        (false, None) => return Err(GatewayError::Auth(AuthFailure::MissingKey)),
        (true, None) => return Err(GatewayError::Auth(AuthFailure::InvalidKey)),
    };
    if key.expired(crate::store::clock::now()) {
        return Err(GatewayError::Auth(AuthFailure::ExpiredKey));
    }
    let owner = key.owner;
    let endpoint = endpoint_of(&request);
    let chat = endpoint.is_chat();
    let ticket = app.usage_sink().open(owner, endpoint);
    let limited = key.limits.is_some();
    if let Some(limits) = key.limits {
        if !chat {
            // Other /v1 calls count as requests; a chat call is admitted
            // by its handler, which knows its token estimate.
            // Boxed: only a limited key's non-chat calls get here.
            match Box::pin(app.limiter().admit(store, owner, &limits, 0, false)).await {
                Ok(admission) => ticket.admitted(admission.headers, None),
                Err(refusal) => {
                    let mut response = refusal.error.into_response();
                    if let Some(h) = refusal.headers {
                        h.apply(response.headers_mut());
                    }
                    ticket.respond(response.status().as_u16());
                    return Ok(response);
                }
            }
        }
        request.extensions_mut().insert(limits);
    }
    request.extensions_mut().insert(Caller::User(owner));
    if let Some(allowed) = key.allowed_models {
        request.extensions_mut().insert(allowed);
    }
    request.extensions_mut().insert(ticket.clone());
    access_note::note_account(access_note::Account {
        user_id: owner.user_id.0,
        key_id: owner.key_id.0,
    });
    let mut response = next.run(request).await;
    ticket.respond(response.status().as_u16());
    // Only a limited key's answers carry rate-limit headers (and only its
    // requests take the ticket's lock for them).
    if limited {
        if let Some(h) = ticket.rate_headers() {
            h.apply(response.headers_mut());
        }
    }
    Ok(response)
}
