//! The messages vendor's OAuth token endpoint, `POST /v1/oauth/token` below
//! `/messages_vendor_oauth`: the refresh-token grant, with the fields as JSON
//! or form-encoded (clients send both), answering `access_token`,
//! `refresh_token`, `expires_in`, `token_type`, `scope` and the account.
//! Refresh tokens rotate (configurable); errors are OAuth-style
//! `{"error","error_description"}`. The store also holds the access tokens the
//! messages API accepts as `Authorization: Bearer`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use axum::{Extension, Json, Router};
use serde_json::json;

use super::MessagesState;
use crate::recorder::fields;
use crate::recorder::ReceivedBody;
use crate::vendor_common::config::MessagesOAuthConfig;
use crate::vendor_common::ids;

/// Path prefix of the OAuth service on the API listener.
pub const OAUTH_PREFIX: &str = "/messages_vendor_oauth";
/// The token endpoint below [`OAUTH_PREFIX`].
pub const TOKEN_PATH: &str = "/v1/oauth/token";

/// Tokens issued by a refresh (or seeded by a test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthTokens {
    pub access_token: String,
    pub refresh_token: String,
    /// Lifetime of the access token, in seconds.
    pub expires_in: u64,
}

/// What the API knows of a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenState {
    Valid,
    Expired,
    Unknown,
}

/// Issued access tokens (with expiry) and live refresh tokens.
#[derive(Debug, Default)]
pub(crate) struct OAuthStore {
    access: HashMap<String, Instant>,
    refresh: HashSet<String>,
    refreshes: u64,
}

impl OAuthStore {
    /// Issue an access token valid for `ttl` and a new refresh token.
    pub fn issue(&mut self, ttl: Duration, now: Instant) -> OAuthTokens {
        let access_token = format!("sk-ant-oat01-{}", ids::base62(86));
        let refresh_token = format!("sk-ant-ort01-{}", ids::base62(86));
        // An absurd lifetime is capped rather than overflowing the clock.
        let expires = now
            .checked_add(ttl)
            .unwrap_or(now + Duration::from_secs(1 << 32));
        self.access.insert(access_token.clone(), expires);
        self.refresh.insert(refresh_token.clone());
        OAuthTokens {
            access_token,
            refresh_token,
            expires_in: ttl.as_secs(),
        }
    }

    /// Register tokens chosen by a test.
    pub fn seed(&mut self, tokens: &OAuthTokens, now: Instant) {
        let ttl = Duration::from_secs(tokens.expires_in);
        let expires = now.checked_add(ttl).unwrap_or(now);
        self.access.insert(tokens.access_token.clone(), expires);
        self.refresh.insert(tokens.refresh_token.clone());
    }

    /// The refresh grant: new tokens, or `None` for an unknown refresh token.
    pub fn refresh(
        &mut self,
        refresh_token: &str,
        config: &MessagesOAuthConfig,
        now: Instant,
    ) -> Option<OAuthTokens> {
        if !self.refresh.contains(refresh_token) {
            return None;
        }
        self.refreshes += 1;
        let mut tokens = self.issue(config.access_token_ttl, now);
        if config.rotate_refresh_tokens {
            self.refresh.remove(refresh_token);
        } else {
            self.refresh.remove(&tokens.refresh_token);
            tokens.refresh_token = refresh_token.to_owned();
        }
        Some(tokens)
    }

    pub fn access_state(&self, token: &str, now: Instant) -> TokenState {
        match self.access.get(token) {
            Some(expires) if *expires > now => TokenState::Valid,
            Some(_) => TokenState::Expired,
            None => TokenState::Unknown,
        }
    }

    pub fn refresh_live(&self, refresh_token: &str) -> bool {
        self.refresh.contains(refresh_token)
    }

    /// Make every access token issued so far expire at `now`.
    pub fn expire_all(&mut self, now: Instant) {
        for expires in self.access.values_mut() {
            *expires = now;
        }
    }

    /// Successful refresh grants so far.
    pub fn refreshes(&self) -> u64 {
        self.refreshes
    }
}

/// Routes of the OAuth service, with their full paths.
pub(crate) fn router(shared: Arc<MessagesState>) -> Router {
    Router::new()
        .route(&format!("{OAUTH_PREFIX}{TOKEN_PATH}"), post(token))
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
    match field("grant_type") {
        Some("refresh_token") => {}
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("Grant type '{other}' is not supported."),
            )
        }
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Missing required parameter: grant_type",
            )
        }
    }
    let Some(refresh_token) = field("refresh_token") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing required parameter: refresh_token",
        );
    };
    let Some(client_id) = field("client_id") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing required parameter: client_id",
        );
    };
    let config = shared.vendors.settings().oauth.clone();
    if config.client_id.as_deref().is_some_and(|c| c != client_id) {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed.",
        );
    }
    let refreshed = if config.reject_refresh {
        None
    } else {
        shared
            .oauth()
            .refresh(refresh_token, &config, Instant::now())
    };
    let Some(tokens) = refreshed else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "Refresh token not found or invalid.",
        );
    };
    Json(json!({
        "token_type": "Bearer",
        "access_token": tokens.access_token,
        "expires_in": tokens.expires_in,
        "refresh_token": tokens.refresh_token,
        "scope": "user:inference user:profile",
        "organization": {"uuid": "5e0f9a7c-51a1-4a4b-8d63-0c7a6f2b9e11", "name": "upstream-sim"},
        "account": {"uuid": "0b6d3e52-8c1f-4f2e-9a57-3d9e8f1c2a44", "email_address": "sim-user@example.com"},
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_rotates_and_retires() {
        let mut store = OAuthStore::default();
        let now = Instant::now();
        let first = store.issue(Duration::from_secs(60), now);
        assert_eq!(
            store.access_state(&first.access_token, now),
            TokenState::Valid
        );
        let config = MessagesOAuthConfig::default();
        let second = store.refresh(&first.refresh_token, &config, now).unwrap();
        assert_ne!(second.refresh_token, first.refresh_token);
        assert!(!store.refresh_live(&first.refresh_token));
        assert!(store.refresh_live(&second.refresh_token));
        assert!(store.refresh(&first.refresh_token, &config, now).is_none());
        assert_eq!(second.expires_in, 8 * 3600);
        assert_eq!(store.refreshes(), 1);
    }

    #[test]
    fn refresh_without_rotation_keeps_the_token() {
        let mut store = OAuthStore::default();
        let now = Instant::now();
        let first = store.issue(Duration::from_secs(60), now);
        let config = MessagesOAuthConfig {
            rotate_refresh_tokens: false,
            ..MessagesOAuthConfig::default()
        };
        let second = store.refresh(&first.refresh_token, &config, now).unwrap();
        assert_eq!(second.refresh_token, first.refresh_token);
        assert!(store.refresh_live(&first.refresh_token));
        assert_eq!(store.refresh.len(), 1);
    }

    #[test]
    fn expiry_and_unknown_tokens() {
        let mut store = OAuthStore::default();
        let now = Instant::now();
        let t = store.issue(Duration::from_secs(60), now);
        assert_eq!(
            store.access_state(&t.access_token, now + Duration::from_secs(61)),
            TokenState::Expired
        );
        store.expire_all(now);
        assert_eq!(
            store.access_state(&t.access_token, now),
            TokenState::Expired
        );
        assert_eq!(store.access_state("nope", now), TokenState::Unknown);
        let seeded = OAuthTokens {
            access_token: "a".into(),
            refresh_token: "r".into(),
            expires_in: 10,
        };
        store.seed(&seeded, now);
        assert_eq!(store.access_state("a", now), TokenState::Valid);
        assert!(store.refresh_live("r"));
    }
}
