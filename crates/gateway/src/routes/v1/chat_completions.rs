//! `POST /v1/chat/completions` (spec 4.1).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::Bytes;
use translate::ClientFormat;
use wire::openai::ChatCompletionRequest;

use crate::error::GatewayError;
use crate::pipeline::{self, body::parse_json};
use crate::state::AppState;

pub async fn handle(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    serve(&app, &headers, &body).await
}

async fn serve(
    app: &AppState,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, GatewayError> {
    let req: ChatCompletionRequest = parse_json(headers, body)?;
    wire::openai::validate(&req)?;
    if req.user.is_some() || req.seed.is_some() {
        // Accepted and not forwarded (spec 4.1).
        tracing::debug!("ignoring user/seed: not forwarded upstream");
    }
    let chat = translate::openai::into_chat_request(req)?;
    let inbound = pipeline::Inbound {
        format: ClientFormat::OpenAi,
        request: chat,
        raw: body.clone(),
        anthropic_beta: None,
        anthropic_version: None,
    };
    pipeline::handle(app, inbound).await
}
