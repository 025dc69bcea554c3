//! The simulated code host (GitHub), below `/assistant_vendor_code_host` (the
//! gateway's `ASSISTANT_VENDOR_CODE_HOST_URL`):
//!
//! - the login flows ([`login`]): `POST /login/device/code`,
//!   `POST /login/oauth/access_token` (device grant and web-flow code
//!   exchange), `GET /login/oauth/authorize`, and `GET /login/device` (the
//!   page where a person enters the user code; `?user_code=` approves);
//! - `GET /user`: the signed-in user of a token;
//! - `GET /copilot_internal/v2/token`: the assistant token exchange.
//!
//! The API calls want `Authorization: token <t>` (`Bearer` is accepted too,
//! as the code host does) and a `User-Agent` (refused without one). A token
//! is the configured one (`github_token`, owned by the user `sim-user`) or
//! one the login flows issued (each login a distinct user). Bad credentials:
//! 401 `{"message":"Bad credentials",…}`.

mod login;
pub mod store;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::json;

use super::{AssistantState, API_PREFIX, CODE_HOST_PREFIX, TOKEN_PATH};
use crate::http::{authorization, header_str};
use store::CodeHostUser;

/// Routes of the code host, with their full paths.
pub(crate) fn router(shared: Arc<AssistantState>) -> Router {
    let path = |p: &str| format!("{CODE_HOST_PREFIX}{p}");
    Router::new()
        .route(&path(TOKEN_PATH), get(exchange))
        .route(&path("/user"), get(user))
        .route(&path("/login/device/code"), post(login::device_code))
        .route(
            &path("/login/oauth/access_token"),
            post(login::access_token),
        )
        .route(&path("/login/oauth/authorize"), get(login::authorize))
        .route(&path("/login/device"), get(login::device_page))
        .route(&path("/{*rest}"), any(not_found))
        .with_state(shared)
}

/// The code host's API error body.
fn api_error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.as_u16().to_string(),
        })),
    )
        .into_response()
}

async fn not_found() -> Response {
    api_error(StatusCode::NOT_FOUND, "Not Found")
}

/// How an API call identified itself.
enum Caller {
    /// No `User-Agent`: refused before anything else.
    NoUserAgent,
    /// No `Authorization` with a `token` or `Bearer` credential.
    Anonymous,
    Unknown,
    User(CodeHostUser, String),
}

/// The code host's refusal of a request without a `User-Agent`.
fn no_user_agent() -> Response {
    (
        StatusCode::FORBIDDEN,
        "Request forbidden by administrative rules. Please make sure your request has a \
         User-Agent header.\n",
    )
        .into_response()
}

/// Who is calling (the `User-Agent` is checked first).
fn identify(shared: &AssistantState, headers: &HeaderMap) -> Caller {
    if header_str(headers, header::USER_AGENT.as_str()).is_none_or(str::is_empty) {
        return Caller::NoUserAgent;
    }
    let Some(token) = authorization(headers, "token").or_else(|| authorization(headers, "bearer"))
    else {
        return Caller::Anonymous;
    };
    let configured = token == shared.vendors.settings().github_token;
    if configured || shared.vendors.accepts_any_token() {
        let user = shared.code_host().default_user();
        return Caller::User(user, "read:user".to_owned());
    }
    match shared.code_host().user_of(token) {
        Some((user, scope)) => Caller::User(user, scope),
        None => Caller::Unknown,
    }
}

/// `GET /user`: the token's user.
async fn user(State(shared): State<Arc<AssistantState>>, headers: HeaderMap) -> Response {
    let (user, scope) = match identify(&shared, &headers) {
        Caller::NoUserAgent => return no_user_agent(),
        Caller::Anonymous => return api_error(StatusCode::UNAUTHORIZED, "Requires authentication"),
        Caller::Unknown => return api_error(StatusCode::UNAUTHORIZED, "Bad credentials"),
        Caller::User(user, scope) => (user, scope),
    };
    let mut res = Json(json!({
        "login": user.login,
        "id": user.id,
        "node_id": format!("U_sim{}", user.id),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", user.id),
        "html_url": format!("https://github.com/{}", user.login),
        "type": "User",
        "site_admin": false,
        "name": user.name,
        "email": user.email,
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2025-01-01T00:00:00Z",
    }))
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&scope.replace(' ', ", ")) {
        res.headers_mut().insert("x-oauth-scopes", v);
    }
    res
}

/// `GET /copilot_internal/v2/token`: an assistant token for the caller.
async fn exchange(State(shared): State<Arc<AssistantState>>, headers: HeaderMap) -> Response {
    let user = match identify(&shared, &headers) {
        Caller::NoUserAgent => return no_user_agent(),
        Caller::Anonymous | Caller::Unknown => {
            return api_error(StatusCode::UNAUTHORIZED, "Bad credentials")
        }
        Caller::User(user, _) => user,
    };
    let (ttl, deny) = {
        let settings = shared.vendors.settings();
        (
            settings.assistant_token_ttl,
            settings.deny_assistant_exchange,
        )
    };
    if deny {
        return api_error(StatusCode::NOT_FOUND, "Not Found");
    }
    let t = shared.tokens().issue_for(&user.login, ttl, Instant::now());
    let api = format!("{}{API_PREFIX}", shared.vendors.api_base());
    Json(json!({
        "annotations_enabled": true,
        "chat_enabled": true,
        "chat_jetbrains_enabled": true,
        "code_quote_enabled": true,
        "codesearch": false,
        "copilotignore_enabled": false,
        "endpoints": {
            "api": api,
            "origin-tracker": "https://origin-tracker.individual.githubcopilot.com",
            "proxy": "https://proxy.individual.githubcopilot.com",
            "telemetry": "https://telemetry.individual.githubcopilot.com",
        },
        "expires_at": t.expires_at,
        "individual": true,
        "prompt_8k": true,
        "public_suggestions": "disabled",
        "refresh_in": t.refresh_in,
        "sku": "copilot_for_individual_subscriber",
        "telemetry": "disabled",
        "token": t.token,
        "tracking_id": crate::vendor_common::ids::hex(32),
    }))
    .into_response()
}
