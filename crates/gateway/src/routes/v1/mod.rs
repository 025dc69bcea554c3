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

/// The two chat calls, which the front door serves without the router
/// ([`crate::server::FrontDoor`]): `POST /v1/chat/completions` and
/// `POST /v1/messages`, after client authentication, to the same handlers
/// as the routes of [`router`]. Through the router each paid for the `/v1`
/// nest (the URI rebuilt without its prefix), two route look-ups, the
/// middleware's boxed service and future, and a copy of the headers for the
/// handler: about 13,000 instructions a request (docs/benchmarks.md, "Round
/// eight").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatRoute {
    ChatCompletions,
    Messages,
}

impl ChatRoute {
    /// The chat call `request` is, if it is one (the exact path, `POST`);
    /// anything else goes through the router.
    pub(crate) fn of(request: &axum::extract::Request) -> Option<ChatRoute> {
        if request.method() != axum::http::Method::POST {
            return None;
        }
        match request.uri().path() {
            "/v1/chat/completions" => Some(ChatRoute::ChatCompletions),
            "/v1/messages" => Some(ChatRoute::Messages),
            _ => None,
        }
    }

    /// Serve an authenticated `request` as its route's handler would.
    pub(crate) async fn serve(self, app: AppState, request: axum::extract::Request) -> Response {
        use axum::extract::FromRequestParts as _;
        use axum::response::IntoResponse as _;

        let (mut parts, body) = request.into_parts();
        let attached = match Attached::from_request_parts(&mut parts, &app).await {
            Ok(attached) => attached,
            Err(e) => return e.into_response(),
        };
        // Whole already (the body-limit step), or absent.
        let body = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(body) => body,
            Err(e) => {
                return GatewayError::validation(format!("the request body could not be read: {e}"))
                    .into_response()
            }
        };
        let state = axum::extract::State(app);
        match self {
            ChatRoute::ChatCompletions => {
                chat_completions::handle(state, attached, parts.headers, body).await
            }
            ChatRoute::Messages => messages::handle(state, attached, parts.headers, body).await,
        }
        .into_response()
    }
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

#[cfg(test)]
mod tests {
    use super::ChatRoute;

    fn request(method: &str, uri: &str) -> axum::extract::Request {
        axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[test]
    fn only_the_two_chat_posts_skip_the_router() {
        let of = |method, uri| ChatRoute::of(&request(method, uri));
        assert_eq!(
            of("POST", "/v1/chat/completions"),
            Some(ChatRoute::ChatCompletions)
        );
        assert_eq!(of("POST", "/v1/messages"), Some(ChatRoute::Messages));
        assert_eq!(
            of("POST", "/v1/chat/completions?x=1"),
            Some(ChatRoute::ChatCompletions)
        );
        // Everything else keeps the router's answers (405, 404, preflight).
        for (method, uri) in [
            ("GET", "/v1/chat/completions"),
            ("OPTIONS", "/v1/messages"),
            ("POST", "/v1/messages/count_tokens"),
            ("POST", "/v1/chat/completions/"),
            ("POST", "/v1/Messages"),
            ("POST", "/chat/completions"),
            ("POST", "/v1//messages"),
            ("GET", "/v1/models"),
        ] {
            assert_eq!(of(method, uri), None, "{method} {uri}");
        }
    }
}
