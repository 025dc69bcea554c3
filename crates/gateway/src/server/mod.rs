//! The HTTP router and its middleware. [`FrontDoor`] wraps the whole router
//! in four steps, outermost first:
//!
//! 1. [`request_context`]: request id, request span, access log;
//! 2. [`cors`]: CORS headers on everything, preflight answered;
//! 3. [`uniform_errors`]: every error in the spec's format;
//! 4. [`body_limit`]: `max_request_body`, 413 `request_too_large`;
//!
//! then the [`router`] itself, per route group: `/`, `/health` (liveness)
//! and `/ready` (readiness) open, `/metrics` open or behind `METRICS_TOKEN`;
//! `/v1/*` behind client auth in proxy mode, behind the [`setup_guard`] in
//! full mode; `/_ui/api/*` (full mode only) behind its session layer
//! ([`crate::ui_api`]).
//!
//! Unknown paths answer 404 `not_found`, inside `/v1` only after auth
//! (fail closed: a wrong key never learns which paths exist).
//!
//! The two chat calls (`POST /v1/chat/completions`, `POST /v1/messages`)
//! skip the router: after the four steps the front door runs the same
//! client authentication and hands them to their handlers
//! ([`crate::routes::v1::ChatRoute`]).

pub(crate) mod body_limit;
pub(crate) mod client_auth;
pub(crate) mod cors;
pub(crate) mod front_door;
pub(crate) mod listen;
pub(crate) mod request_context;
pub(crate) mod setup_guard;
pub(crate) mod uniform_errors;

use std::future::Future;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::Uri;
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use crate::config::GatewayMode;
use crate::error::GatewayError;
use crate::routes::{health, metrics, v1};
use crate::state::AppState;
pub(crate) use front_door::FrontDoor;

/// The application's routes; serve them through [`FrontDoor`].
pub(crate) fn router(state: AppState) -> Router {
    let v1 = v1::router().fallback(not_found);
    let v1 = match state.config().mode {
        GatewayMode::Proxy => v1.layer(from_fn_with_state(
            state.clone(),
            client_auth::require_proxy_key,
        )),
        GatewayMode::Full => setup_guard::guard(v1, state.clone()),
    };
    let mut app = Router::new()
        .route("/", get(health::root))
        .route("/health", get(health::health))
        .route("/metrics", get(metrics::scrape))
        .route("/ready", get(health::ready))
        .nest("/v1", v1);
    if state.config().mode == GatewayMode::Full {
        app = app
            .nest("/_ui/api", crate::ui_api::router(state.clone()))
            .merge(crate::console::routes());
    }
    // The body arrives whole from `body_limit`: axum's own limit stays off.
    app.fallback(not_found)
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

async fn not_found(uri: Uri) -> GatewayError {
    GatewayError::NotFound(format!("no route for {}", uri.path()))
}

/// The rest of the chain, as a middleware step sees it: hand the request on,
/// get the response back.
pub(crate) trait Next: Send {
    fn run(self, request: Request) -> impl Future<Output = Response> + Send;
}

impl<F, Fut> Next for F
where
    F: FnOnce(Request) -> Fut + Send,
    Fut: Future<Output = Response> + Send,
{
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        self(request)
    }
}
