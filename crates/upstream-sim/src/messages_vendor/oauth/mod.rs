//! The messages vendor's OAuth service, below `/messages_vendor_oauth` (the
//! gateway's `MESSAGES_VENDOR_OAUTH_BASE_URL`):
//!
//! - `GET /oauth/authorize` ([`authorize`]): the authorize page of the
//!   authorization-code flow with PKCE (S256), which the simulated user
//!   approves at once (each authorization is a new account);
//! - `POST /v1/oauth/token`: the `authorization_code` grant (`code`, `state`,
//!   `redirect_uri`, `code_verifier`, `client_id`; the code may come as
//!   `code#state`) and the `refresh_token` grant, with the fields as JSON or
//!   form-encoded (clients send both), answering `access_token`,
//!   `refresh_token`, `expires_in`, `token_type`, `scope`, `organization` and
//!   `account: {uuid, email_address}`. Refresh tokens rotate (configurable);
//!   errors are OAuth-style `{"error","error_description"}`. The `state` of
//!   an exchange is not checked against the authorization: that is the
//!   client's business.
//!
//! The store ([`store`]) also holds the access tokens the messages API
//! accepts as `Authorization: Bearer`.

mod authorize;
pub mod store;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use serde_json::json;

use super::MessagesState;
use crate::recorder::{fields, ReceivedBody};
use store::{Grant, Redemption};
pub use store::{OAuthAccount, OAuthTokens};
pub(crate) use store::{OAuthStore, TokenState};

/// Path prefix of the OAuth service on the API listener.
pub const OAUTH_PREFIX: &str = "/messages_vendor_oauth";
/// The token endpoint below [`OAUTH_PREFIX`].
pub const TOKEN_PATH: &str = "/v1/oauth/token";
/// The authorize page below [`OAUTH_PREFIX`].
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";

/// Routes of the OAuth service, with their full paths.
pub(crate) fn router(shared: Arc<MessagesState>) -> Router {
    Router::new()
        .route(&format!("{OAUTH_PREFIX}{TOKEN_PATH}"), post(token))
        .route(
            &format!("{OAUTH_PREFIX}{AUTHORIZE_PATH}"),
            get(authorize::authorize),
        )
        .route(&format!("{OAUTH_PREFIX}/{{*rest}}"), any(not_found))
        .with_state(shared)
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

async fn not_found() -> Response {
    oauth_error(StatusCode::NOT_FOUND, "not_found", "Not Found")
}

fn missing(name: &str) -> Response {
    oauth_error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        &format!("Missing required parameter: {name}"),
    )
}

async fn token(
    State(shared): State<Arc<MessagesState>>,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    let Some(fields) = fields(&body) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The request body must be JSON or form-encoded.",
        );
    };
    let field = |name: &str| {
        fields
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let grant = match field("grant_type") {
        Some(g @ ("refresh_token" | "authorization_code")) => g,
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("Grant type '{other}' is not supported."),
            )
        }
        None => return missing("grant_type"),
    };
    let required: &[&str] = if grant == "refresh_token" {
        &["refresh_token", "client_id"]
    } else {
        &["code", "redirect_uri", "code_verifier", "client_id"]
    };
    if let Some(name) = required.iter().find(|n| field(n).is_none()) {
        return missing(name);
    }
    let client_id = field("client_id").unwrap_or_default();
    let config = shared.vendors.settings().oauth.clone();
    if config.client_id.as_deref().is_some_and(|c| c != client_id) {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed.",
        );
    }
    let now = Instant::now();
    let granted = if grant == "refresh_token" {
        let refresh_token = field("refresh_token").unwrap_or_default();
        let refreshed = if config.reject_refresh {
            None
        } else {
            shared.oauth().refresh_grant(refresh_token, &config, now)
        };
        refreshed.ok_or("Refresh token not found or invalid.")
    } else {
        let redemption = Redemption {
            code: field("code").unwrap_or_default(),
            client_id,
            redirect_uri: field("redirect_uri").unwrap_or_default(),
            code_verifier: field("code_verifier").unwrap_or_default(),
        };
        shared
            .oauth()
            .redeem(redemption, config.access_token_ttl, now)
            .map_err(|refusal| refusal.description())
    };
    match granted {
        Ok(grant) => grant_response(&grant),
        Err(description) => oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description),
    }
}

fn grant_response(grant: &Grant) -> Response {
    let tokens = &grant.tokens;
    Json(json!({
        "token_type": "Bearer",
        "access_token": tokens.access_token,
        "expires_in": tokens.expires_in,
        "refresh_token": tokens.refresh_token,
        "scope": grant.scope,
        "organization": {"uuid": "5e0f9a7c-51a1-4a4b-8d63-0c7a6f2b9e11", "name": "upstream-sim"},
        "account": {"uuid": grant.account.uuid, "email_address": grant.account.email_address},
    }))
    .into_response()
}
