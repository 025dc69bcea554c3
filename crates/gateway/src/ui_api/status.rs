//! Deployment facts for the UI:
//!
//! - `GET /_ui/api/status` (public) -> `{setup_complete, mode, version,
//!   auth_google_enabled, auth_password_enabled}`; `auth_google_enabled` is
//!   true when the identity provider is configured (`sso_issuer_url`,
//!   `sso_client_id` and `sso_client_secret` all stored);
//! - `GET /_ui/api/system` (signed in) -> `{version, mode, database,
//!   uptime_secs, started_at}` (`database`: `sqlite` or `postgres`).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::extract::SessionUser;
use crate::error::GatewayError;
use crate::routes::health::VERSION;
use crate::state::AppState;
use crate::store::{clock, Store, StoreError};

/// Whether every SSO key has a non-empty stored value.
pub async fn sso_configured(store: &Store) -> Result<bool, StoreError> {
    for key in crate::sso::settings::KEYS.iter().map(|k| k.name) {
        match store.config().get(key).await? {
            Some(v) if !v.expose().trim().is_empty() => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// `GET /_ui/api/status`.
pub async fn status(State(app): State<AppState>) -> Result<Json<Value>, GatewayError> {
    let store = app.store()?;
    Ok(Json(json!({
        "setup_complete": app.setup_complete().await?,
        "mode": app.config().mode.as_str(),
        "version": VERSION,
        "auth_google_enabled": sso_configured(store).await?,
        "auth_password_enabled": true,
    })))
}

/// `GET /_ui/api/system`.
pub async fn system(
    State(app): State<AppState>,
    _who: SessionUser,
) -> Result<Json<Value>, GatewayError> {
    let uptime = app.uptime().as_secs();
    let started = clock::now().saturating_sub(i64::try_from(uptime).unwrap_or(0));
    Ok(Json(json!({
        "version": VERSION,
        "mode": app.config().mode.as_str(),
        "database": app.store()?.backend().as_str(),
        "uptime_secs": uptime,
        "started_at": clock::rfc3339(started),
    })))
}
