//! The client API (`/v1`, nested by the server under client authentication):
//! `POST /chat/completions` (OpenAI format), `POST /messages` (Anthropic
//! format), `POST /messages/count_tokens` and `GET /models`. Handlers are
//! thin: parse and validate the body, convert it to a `ChatRequest`, hand it
//! to [`crate::pipeline::handle`].

mod chat_completions;
mod count_tokens;
mod messages;
mod models;

use axum::routing::{get, post};
use axum::Router;

use crate::auth::Caller;
use crate::error::GatewayError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/chat/completions", post(chat_completions::handle))
        .route("/messages", post(messages::handle))
        .route("/messages/count_tokens", post(count_tokens::handle))
        .route("/models", get(models::handle))
}

/// The caller the client-auth layer attached; its absence is a wiring bug
/// (fail closed, never a default caller).
fn caller(found: Option<axum::Extension<Caller>>) -> Result<Caller, GatewayError> {
    found.map(|axum::Extension(c)| c).ok_or_else(|| {
        GatewayError::internal(anyhow::anyhow!(
            "a /v1 request reached its handler without a caller"
        ))
    })
}
