//! `POST /v1/messages` (spec 4.1). `compat-version` is accepted and logged,
//! never enforced.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use bytes::Bytes;
use translate::ClientFormat;
use wire::anthropic::MessagesRequest;

use crate::auth::Caller;
use crate::body::parse_json;
use crate::error::GatewayError;
use crate::pipeline;
use crate::state::AppState;
use crate::usage::UsageTicket;

pub async fn handle(
    State(app): State<AppState>,
    caller: Option<Extension<Caller>>,
    usage: Option<Extension<UsageTicket>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    let caller = super::caller(caller)?;
    serve(&app, caller, usage.map(|Extension(t)| t), &headers, &body).await
}

async fn serve(
    app: &AppState,
    caller: Caller,
    usage: Option<UsageTicket>,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, GatewayError> {
    if let Some(version) = headers.get("compat-version").and_then(|v| v.to_str().ok()) {
        tracing::info!(compat_version = version, "compat-version header");
    }
    let req: MessagesRequest = parse_json(headers, body)?;
    wire::anthropic::validate(&req)?;
    let chat = translate::anthropic::into_chat_request(req)?;
    let inbound = pipeline::Inbound {
        format: ClientFormat::Anthropic,
        request: chat,
        raw: body.clone(),
        anthropic_beta: header_text(headers, "anthropic-beta"),
        anthropic_version: header_text(headers, "anthropic-version"),
        caller,
        usage,
    };
    pipeline::handle(app, inbound).await
}

/// A header's value as text, when present and readable.
pub(super) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}
