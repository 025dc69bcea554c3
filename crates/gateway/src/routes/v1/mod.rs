//! The client API (`/v1`, nested by the server under client authentication):
//! `POST /chat/completions` (OpenAI format), `POST /messages` (Anthropic
//! format), `POST /messages/count_tokens` and `GET /models`. Handlers are
//! thin: parse and validate the body, convert it to a `ChatRequest`, hand it
//! to [`crate::pipeline::handle`] ([`relay`]).

mod chat_completions;
mod count_tokens;
mod messages;
mod models;

use std::sync::Arc;

use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use translate::{ChatRequest, ClientFormat};

use crate::auth::keys::AllowedModels;
use crate::auth::Caller;
use crate::config::RequestConfig;
use crate::error::GatewayError;
use crate::limits::OwnerLimits;
use crate::pipeline::{self, Inbound};
use crate::state::AppState;
use crate::usage::UsageTicket;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/chat/completions", post(chat_completions::handle))
        .route("/messages", post(messages::handle))
        .route("/messages/count_tokens", post(count_tokens::handle))
        .route("/models", get(models::handle))
}

/// What the front door and client authentication attached to a chat
/// request: its configuration snapshot, its caller, its usage account.
pub(crate) struct Attached {
    rt: std::sync::Arc<crate::config::RuntimeConfig>,
    caller: Caller,
    usage: Option<UsageTicket>,
    /// The key's allowed models, when it is restricted.
    allowed: Option<AllowedModels>,
    /// The key's and its user's budgets and rate limits, when limited.
    limits: Option<Arc<OwnerLimits>>,
}

impl axum::extract::FromRequestParts<AppState> for Attached {
    type Rejection = GatewayError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        app: &AppState,
    ) -> Result<Self, GatewayError> {
        let RequestConfig(rt) = RequestConfig::from_request_parts(parts, app)
            .await
            .unwrap_or_else(|never| match never {});
        Ok(Attached {
            rt,
            caller: Caller::from_request_parts(parts, app).await?,
            usage: parts.extensions.get::<UsageTicket>().cloned(),
            allowed: parts.extensions.get::<AllowedModels>().cloned(),
            limits: parts.extensions.get::<Arc<OwnerLimits>>().cloned(),
        })
    }
}

/// Hand a converted chat request to the pipeline. The messages format's
/// `anthropic-beta` and `anthropic-version` headers travel with it (a
/// native relay passes them on).
async fn relay(
    app: &AppState,
    attached: Attached,
    format: ClientFormat,
    request: ChatRequest,
    headers: &HeaderMap,
    raw: Bytes,
) -> Result<Response, GatewayError> {
    if let Some(allowed) = &attached.allowed {
        allowed.check(&request.model)?;
    }
    if let (Some(limits), Some(ticket)) = (&attached.limits, &attached.usage) {
        admit(app, limits, ticket, &request).await?;
    }
    let messages = format == ClientFormat::Anthropic;
    let inbound = Inbound {
        format,
        request,
        raw,
        anthropic_beta: header_text(headers, "anthropic-beta").filter(|_| messages),
        anthropic_version: header_text(headers, "anthropic-version").filter(|_| messages),
        caller: attached.caller,
        usage: attached.usage,
        rt: attached.rt,
        allowed: attached.allowed,
    };
    pipeline::handle(app, inbound).await
}

/// Admit a chat request under its key's and user's limits (before any
/// upstream call); the answer's rate-limit headers and what the request
/// owes go on its usage ticket.
async fn admit(
    app: &AppState,
    limits: &OwnerLimits,
    ticket: &UsageTicket,
    request: &ChatRequest,
) -> Result<(), GatewayError> {
    let Some(owner) = ticket.owner() else {
        // Limits belong to keys of full deployment, whose tickets record.
        return Ok(());
    };
    let counts_tokens = limits.key.tpm.is_some() || limits.user.tpm.is_some();
    let estimate = if counts_tokens {
        translate::tokens::estimate_request(request)
    } else {
        0
    };
    match app
        .limiter()
        .admit(app.store()?, owner, limits, estimate, true)
        .await
    {
        Ok(admission) => {
            ticket.admitted(admission.headers, admission.charge);
            Ok(())
        }
        Err(refusal) => {
            ticket.admitted(refusal.headers, None);
            Err(refusal.error)
        }
    }
}

/// A header's value as text, when present and readable.
fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}
