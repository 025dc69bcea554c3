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
use serde::Serialize;

use super::extract::SessionUser;
use crate::error::GatewayError;
use crate::routes::health::VERSION;
use crate::state::AppState;
use crate::store::{clock, Store, StoreError};

/// `GET /_ui/api/status`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct Status {
    setup_complete: bool,
    /// `full` or `proxy`.
    mode: &'static str,
    version: &'static str,
    auth_google_enabled: bool,
    auth_password_enabled: bool,
}

/// `GET /_ui/api/system`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct SystemInfo {
    version: &'static str,
    mode: &'static str,
    /// `sqlite` or `postgres`.
    database: &'static str,
    uptime_secs: u64,
    started_at: String,
    /// Where this replica counts rate limits and budgets.
    limits: LimitsInfo,
    /// What this replica's guardrails did since start.
    guardrails: GuardrailsInfo,
}

/// This replica's guardrails (issue 16).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct GuardrailsInfo {
    /// `guardrails_enabled`.
    enabled: bool,
    /// Enabled rules with at least one enabled profile.
    active_rules: usize,
    /// Requests or answers blocked, answers or requests masked, and
    /// service calls that failed (the request went on: fail open).
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    counters: crate::guardrails::engine::Counters,
}

/// How this replica counts rate limits and budgets (issue 21).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct LimitsInfo {
    /// `redis` (shared by replicas, `REDIS_URL`) or `process`.
    counted_in: &'static str,
    /// Admissions that asked Redis since start (the others used a lease).
    redis_round_trips: u64,
    /// Counter operations that failed since start; the requests went
    /// through unlimited (fail open).
    failures: u64,
}

/// Whether every SSO key has a non-empty stored value.
pub(crate) async fn sso_configured(store: &Store) -> Result<bool, StoreError> {
    for key in crate::sso::settings::KEYS.iter().map(|k| k.name) {
        match store.config().get(key).await? {
            Some(v) if !v.expose().trim().is_empty() => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// `GET /_ui/api/status`.
pub(crate) async fn status(State(app): State<AppState>) -> Result<Json<Status>, GatewayError> {
    let store = app.store()?;
    Ok(Json(Status {
        setup_complete: app.setup_complete().await?,
        mode: app.config().mode.as_str(),
        version: VERSION,
        auth_google_enabled: sso_configured(store).await?,
        auth_password_enabled: true,
    }))
}

/// `GET /_ui/api/system`.
pub(crate) async fn system(
    State(app): State<AppState>,
    _who: SessionUser,
) -> Result<Json<SystemInfo>, GatewayError> {
    let uptime = app.uptime().as_secs();
    let started = clock::now().saturating_sub(i64::try_from(uptime).unwrap_or(0));
    Ok(Json(SystemInfo {
        version: VERSION,
        mode: app.config().mode.as_str(),
        database: app.store()?.backend().as_str(),
        uptime_secs: uptime,
        started_at: clock::rfc3339(started),
        limits: LimitsInfo {
            counted_in: if app.limiter().is_shared() {
                "redis"
            } else {
                "process"
            },
            redis_round_trips: app.limiter().round_trips(),
            failures: app.limiter().failures(),
        },
        guardrails: GuardrailsInfo {
            enabled: app.runtime().guardrails_enabled,
            active_rules: app.guardrails().active_rules(),
            counters: app.guardrails().counters(),
        },
    }))
}
