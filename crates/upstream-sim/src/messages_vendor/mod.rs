//! The simulated messages vendor (the Anthropic Messages API), under
//! [`PREFIX`] on the API listener: `POST /v1/messages` (SSE or JSON),
//! `POST /v1/messages/count_tokens`, `GET /v1/models`, `GET /v1/models/{id}`;
//! and its OAuth token endpoint ([`oauth`]) under `/messages_vendor_oauth`.
//!
//! Every call needs `x-api-key: <the configured key>`, or
//! `Authorization: Bearer <an access token the OAuth endpoint issued>` together
//! with `anthropic-beta` containing `oauth-2025-04-20` (the real service
//! refuses OAuth traffic without it); otherwise 401 `authentication_error`.
//! `anthropic-version` is required (400 otherwise). Bodies are validated
//! ([`validate`]), a scenario is chosen (the vendor's queue, then `sim:` lines
//! of the last user message), and its plan is rendered ([`render`]) as a
//! stream or a JSON message, with the request's `model` echoed back. Every
//! answer carries `request-id` and the rate-limit headers ([`ratelimit`]).

pub mod error;
pub mod models;
pub mod oauth;
pub mod ratelimit;
pub mod render;
pub mod validate;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use bytes::Bytes;
use serde_json::json;

use crate::body::json_body;
use crate::http::{authorization, header_str};
use crate::recorder::ReceivedBody;
use crate::state::lock;
use crate::vendor_common::answer::Answer;
use crate::vendor_common::reply::{streamed, SSE_CONTENT_TYPE};
use crate::vendor_common::scenario::{VendorFault, VendorKind};
use crate::vendor_common::sse::{play, play_body, to_json};
use crate::vendor_common::state::VendorState;
use crate::vendor_common::{ids, Vendor};

use error::{set_request_id, MessagesError, DEFAULT_STREAM_ERROR};
use oauth::{OAuthStore, TokenState};
use validate::Endpoint;

/// Path prefix of the messages vendor on the API listener
/// (`MESSAGES_VENDOR_BASE_URL = {base_url}/messages_vendor`).
pub const PREFIX: &str = "/messages_vendor";
/// The `anthropic-beta` value OAuth bearer tokens need.
pub const OAUTH_BETA: &str = "oauth-2025-04-20";
/// `anthropic-version` values the vendor knows.
pub const VERSIONS: &[&str] = &["2023-06-01", "2023-01-01"];

/// The messages vendor's state: what every vendor shares, and the OAuth
/// tokens its token endpoint issued (its API accepts them as bearer tokens).
#[derive(Debug)]
pub(crate) struct MessagesState {
    pub vendors: Arc<VendorState>,
    oauth: Mutex<OAuthStore>,
}

impl MessagesState {
    pub fn new(vendors: Arc<VendorState>) -> Self {
        MessagesState {
            vendors,
            oauth: Mutex::new(OAuthStore::default()),
        }
    }

    pub fn oauth(&self) -> MutexGuard<'_, OAuthStore> {
        lock(&self.oauth)
    }
}

/// Routes of the messages vendor, with their full paths.
pub(crate) fn router(shared: Arc<MessagesState>) -> Router {
    Router::new()
        .route(&format!("{PREFIX}/v1/messages"), post(messages))
        .route(
            &format!("{PREFIX}/v1/messages/count_tokens"),
            post(count_tokens),
        )
        .route(&format!("{PREFIX}/v1/models"), get(list_models))
        .route(&format!("{PREFIX}/v1/models/{{id}}"), get(get_model))
        .route(&format!("{PREFIX}/{{*rest}}"), any(not_found))
        .with_state(shared)
}

/// Check the credentials and `anthropic-version`.
fn authorize(shared: &MessagesState, headers: &HeaderMap) -> Result<(), MessagesError> {
    let any_token = shared.vendors.accepts_any_token();
    if let Some(key) = header_str(headers, "x-api-key") {
        let settings = shared.vendors.settings();
        let ok = (any_token && !key.is_empty()) || settings.accepts_api_key(Vendor::Messages, key);
        if !ok {
            return Err(MessagesError::authentication("invalid x-api-key"));
        }
    } else if let Some(token) = authorization(headers, "bearer") {
        let beta = headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|b| b.trim() == OAUTH_BETA);
        if !beta {
            return Err(MessagesError::authentication(
                "OAuth authentication is currently not supported.",
            ));
        }
        if !any_token {
            match shared.oauth().access_state(token, Instant::now()) {
                TokenState::Valid => {}
                TokenState::Expired => {
                    return Err(MessagesError::authentication(
                        "OAuth token has expired. Please obtain a new token or refresh your \
                         existing token.",
                    ))
                }
                TokenState::Unknown => {
                    return Err(MessagesError::authentication("Invalid bearer token"))
                }
            }
        }
    } else {
        return Err(MessagesError::authentication(
            "x-api-key header is required",
        ));
    }
    match header_str(headers, "anthropic-version") {
        Some(v) if VERSIONS.contains(&v) => Ok(()),
        Some(v) => Err(MessagesError::invalid_request(format!(
            "anthropic-version: unknown version '{v}'"
        ))),
        None => Err(MessagesError::invalid_request(
            "anthropic-version: header is required",
        )),
    }
}

/// A successful answer gets `request-id` and the rate-limit headers.
fn decorate(mut res: Response) -> Response {
    if res.status().is_success() {
        let headers = res.headers_mut();
        set_request_id(headers, &ids::anthropic_request_id());
        ratelimit::set(headers, false);
    }
    res
}

async fn messages(
    State(shared): State<Arc<MessagesState>>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    let json = body.json.clone();
    let view = match validate::validate(json.as_deref(), body.raw.len(), Endpoint::Messages) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    if shared.vendors.settings().strict_models && !models::known(view.model) {
        return MessagesError::not_found(format!("model: {}", view.model)).into_response();
    }
    let scenario = match shared
        .vendors
        .choose(Vendor::Messages, &view.info.user_text)
    {
        Ok(s) => s,
        Err(e) => return MessagesError::invalid_request(e.to_string()).into_response(),
    };
    if !scenario.header_delay.is_zero() {
        tokio::time::sleep(scenario.header_delay).await;
    }
    if let VendorKind::Status {
        code,
        retry_after,
        error_type,
    } = &scenario.kind
    {
        let mut e = MessagesError::for_status(*code, error_type.as_deref());
        e.retry_after = *retry_after;
        return e.into_response();
    }
    let Some(answer) = Answer::plan(&scenario, &view.info, Vendor::Messages, ids::tool_use_id)
    else {
        return MessagesError::for_status(500, None).into_response();
    };
    let id = ids::message_id();
    let res = if view.stream {
        let frames = render::stream(&answer, &id, view.model, scenario.extra);
        let steps = play(&scenario, frames, error::stream_error_event);
        let counters = shared.vendors.streams(Vendor::Messages).clone();
        streamed(steps, counters, SSE_CONTENT_TYPE)
    } else if let Some(VendorFault::ErrorEvent { error_type, .. }) = &scenario.fault {
        let t = error_type.as_deref().unwrap_or(DEFAULT_STREAM_ERROR);
        return MessagesError::for_type(t).into_response();
    } else {
        let out = render::response(&answer, &id, view.model, scenario.extra);
        json_body(play_body(&scenario, Bytes::from(to_json(&out))))
    };
    decorate(res)
}

async fn count_tokens(
    State(shared): State<Arc<MessagesState>>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    if let Err(e) = validate::validate(body.json.as_deref(), body.raw.len(), Endpoint::CountTokens)
    {
        return e.into_response();
    }
    // The same estimate as the prompt usage of an answer to this body.
    let input_tokens = (body.raw.len().div_ceil(4) as u64).max(1);
    decorate(Json(json!({"input_tokens": input_tokens})).into_response())
}

async fn list_models(
    State(shared): State<Arc<MessagesState>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    match models::page(&query) {
        Ok(page) => decorate(Json(page).into_response()),
        Err(e) => e.into_response(),
    }
}

async fn get_model(
    State(shared): State<Arc<MessagesState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    match models::get(&id) {
        Ok(model) => decorate(Json(model).into_response()),
        Err(e) => e.into_response(),
    }
}

async fn not_found() -> Response {
    MessagesError::not_found("Not Found").into_response()
}
