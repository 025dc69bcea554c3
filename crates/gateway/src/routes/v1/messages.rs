//! `POST /v1/messages` (spec 4.1). `compat-version` is accepted and logged,
//! never enforced.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::Bytes;
use translate::ClientFormat;
use wire::anthropic::MessagesRequest;

use crate::body::parse_json;
use crate::error::GatewayError;
use crate::state::AppState;

pub(super) async fn handle(
    State(app): State<AppState>,
    attached: super::Attached,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    if let Some(version) = headers.get("compat-version").and_then(|v| v.to_str().ok()) {
        tracing::info!(compat_version = version, "compat-version header");
    }
    let req: MessagesRequest = parse_json(&headers, &body)?;
    wire::anthropic::validate(&req)?;
    let chat = translate::anthropic::into_chat_request(req)?;
    super::relay(
        &app,
        attached,
        ClientFormat::Anthropic,
        chat,
        &headers,
        body,
    )
    .await
}
