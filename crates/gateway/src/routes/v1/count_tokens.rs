//! `POST /v1/messages/count_tokens`: the input tokens of a messages-format
//! body (`max_tokens` not required). Answered by `messages_vendor`'s own
//! endpoint when that provider serves the model (the body is relayed with
//! only the model rewritten and the fields that endpoint refuses removed);
//! otherwise, or when the vendor has no such endpoint (404/405), from the
//! gateway's token estimate: `{"input_tokens": N}`.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use bytes::Bytes;
use serde_json::json;
use wire::anthropic::MessagesRequest;

use super::header_text;
use crate::auth::keys::AllowedModels;
use crate::auth::Caller;
use crate::body::parse_json;
use crate::config::{RequestConfig, RuntimeConfig};
use crate::error::GatewayError;
use crate::providers::direct::passthrough;
use crate::providers::{registry, CallExtras, Endpoint, ProviderId};
use crate::state::AppState;
use crate::upstream::http::UpstreamError;
use wire::json::RawObject;

/// Members of a messages body that the counting endpoint does not take.
const NOT_COUNTED: [&str; 8] = [
    "max_tokens",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "service_tier",
];

pub(super) async fn handle(
    State(app): State<AppState>,
    RequestConfig(rt): RequestConfig,
    caller: Caller,
    allowed: Option<Extension<AllowedModels>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    serve(
        &app,
        &rt,
        &caller,
        allowed.map(|Extension(a)| a),
        &headers,
        &body,
    )
    .await
}

async fn serve(
    app: &AppState,
    rt: &RuntimeConfig,
    caller: &Caller,
    allowed: Option<AllowedModels>,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response, GatewayError> {
    let req: MessagesRequest = parse_json(headers, body)?;
    if let Some(allowed) = &allowed {
        allowed.check(&req.model)?;
    }
    // The spec's rules, except that counting needs no output limit.
    let mut checked = req.clone();
    checked.max_tokens = Some(u32::MAX);
    wire::anthropic::validate(&checked)?;
    let chat = translate::anthropic::into_chat_request(checked)?;

    let upstream = app.upstream(rt);
    let available = app.accounts().direct(caller).await?;
    let route = registry::choose(
        &upstream,
        rt.model_cache_refresh,
        &chat.model,
        &available,
        app.accounts().reach(caller),
        &app.accounts().switches().disabled(),
    )
    .await?;
    // A disabled model is not counted either (the counting endpoint is an
    // upstream call like any other).
    app.model_gate().check(route.provider, &route.model)?;
    if route.provider == ProviderId::MessagesVendor {
        if let Some(provider) = available
            .iter()
            .find(|p| p.id == ProviderId::MessagesVendor)
        {
            let mut raw = RawObject::parse(body).map_err(crate::providers::direct::malformed)?;
            raw.set("model", &route.model)
                .map_err(GatewayError::internal)?;
            for key in NOT_COUNTED {
                raw.remove(key);
            }
            let extras = CallExtras {
                anthropic_beta: header_text(headers, "anthropic-beta"),
                anthropic_version: header_text(headers, "anthropic-version"),
                ..CallExtras::default()
            };
            let sent = provider
                .send(
                    &upstream.http,
                    &upstream.policy,
                    Endpoint::CountTokens,
                    "",
                    Some(raw.to_bytes()),
                    &extras,
                )
                .await;
            match sent {
                Ok(resp) => {
                    let body = passthrough::read_body(resp, upstream.idle).await?;
                    return Ok(json_response(body));
                }
                Err(UpstreamError::Status { status, .. })
                    if status == StatusCode::NOT_FOUND
                        || status == StatusCode::METHOD_NOT_ALLOWED =>
                {
                    tracing::info!("messages_vendor has no count_tokens endpoint; estimating");
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    let tokens = translate::tokens::estimate_request(&chat);
    Ok(json_response(Bytes::from(
        json!({ "input_tokens": tokens }).to_string(),
    )))
}

fn json_response(body: Bytes) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}
