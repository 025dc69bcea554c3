//! `POST /v1/chat/completions` (spec 4.1).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::Bytes;
use translate::ClientFormat;
use wire::openai::ChatCompletionRequest;

use crate::body::parse_json;
use crate::error::GatewayError;
use crate::state::AppState;

pub(super) async fn handle(
    State(app): State<AppState>,
    attached: super::Attached,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    let req: ChatCompletionRequest = parse_json(&headers, &body)?;
    wire::openai::validate(&req)?;
    if req.user.is_some() || req.seed.is_some() {
        // Accepted and not forwarded (spec 4.1).
        tracing::debug!("ignoring user/seed: not forwarded upstream");
    }
    let chat = translate::openai::into_chat_request(req)?;
    super::relay(&app, attached, ClientFormat::OpenAi, chat, &headers, body).await
}
