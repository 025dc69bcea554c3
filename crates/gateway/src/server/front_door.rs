//! The middleware every request passes, composed once around the whole
//! router as one hand-written service ([`FrontDoor`]).
//!
//! Why not `Router::layer(from_fn(..))`: a router layer wraps each route
//! separately, and every `from_fn` layer clones the service below it, boxes
//! it and boxes its future on each request. With four layers that was about
//! seventy small allocations and a few deep copies of the handler's future
//! per request, a sixth of the gateway's CPU per request (docs/benchmarks.md).
//! Here the four steps are plain async functions that call the next one
//! directly: one boxed future per request, and the router below is cloned
//! once (an `Arc`).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse as _, Response};
use axum::Router;
use tower::{Service, ServiceExt as _};

use super::{body_limit, client_auth, cors, request_context, setup_guard, uniform_errors};
use crate::config::GatewayMode;
use crate::routes::v1;
use crate::state::AppState;

/// The router with the gateway's middleware around it, outermost first:
/// request context (id, span, access log), CORS, uniform errors, body limit.
#[derive(Clone)]
pub(crate) struct FrontDoor {
    state: AppState,
    router: Router,
}

impl FrontDoor {
    pub(crate) fn new(state: AppState, router: Router) -> Self {
        FrontDoor { state, router }
    }
}

/// Every request through the four steps and then the router; the chat
/// calls through client authentication straight to their handlers
/// ([`v1::ChatRoute`]).
async fn serve(state: AppState, router: Router, request: Request) -> Response {
    // Off (no OTLP endpoint), this is a `None` and nothing else is done.
    let trace = state.traces().map(|exporter| request_context::TraceStart {
        exporter: exporter.clone(),
        capture_content: state.runtime().otel_capture_content,
    });
    request_context::request_context(request, trace, |request| {
        cors::cors(request, |request| {
            uniform_errors::uniform_errors(request, |request| async move {
                let app = state.clone();
                body_limit::limit_body(&state, request, |request| async move {
                    if let Some(route) = v1::ChatRoute::of(&request) {
                        // Boxed, as the router boxes a route's future: the
                        // handler's future is large, and held inline it was
                        // copied through every step above (measured: about
                        // 17,000 instructions of memcpy a request).
                        return Box::pin(chat_call(app, route, request)).await;
                    }
                    match router.oneshot(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                })
                .await
                .into_response()
            })
        })
    })
    .await
}

/// A chat call: client authentication as the `/v1` router has it (the
/// proxy key, or the setup check and a user's key), then its handler.
async fn chat_call(app: AppState, route: v1::ChatRoute, mut request: Request) -> Response {
    let served = match app.config().mode {
        GatewayMode::Proxy => match client_auth::admit_proxy_key(&app, &mut request) {
            Ok(()) => Ok(route.serve(app, request).await),
            Err(e) => Err(e),
        },
        GatewayMode::Full => {
            let guard = app.clone();
            setup_guard::admit(&guard, request, |request| route.serve(app, request)).await
        }
    };
    served.unwrap_or_else(|e| e.into_response())
}

impl Service<Request> for FrontDoor {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let state = self.state.clone();
        let router = self.router.clone();
        Box::pin(async move { Ok(serve(state, router, request).await) })
    }
}
