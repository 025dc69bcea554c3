//! Deployment facts for the UI:
//!
//! - `GET /_ui/api/status` (public) -> `{setup_complete, mode, version,
//!   auth_google_enabled, auth_password_enabled}`; `auth_google_enabled` is
//!   true when the identity provider is configured (`sso_issuer_url`,
//!   `sso_client_id` and `sso_client_secret` all stored);
//! - `GET /_ui/api/system` (signed in; interfaces-full.md 6): users see
//!   `{version, mode}`; admins also `build: {commit, built_at}`, `database:
//!   {kind, schema_version}`, `started_at`, `uptime_secs`, `replicas` (the
//!   gateways that heartbeat into this database within a minute),
//!   `pending_restart` (restart fields whose stored value is not the running
//!   one), and this replica's `limits` and `guardrails`.

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

/// `GET /_ui/api/system`: `version` and `mode` for everyone signed in,
/// the rest for admins.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct SystemInfo {
    version: &'static str,
    mode: &'static str,
    /// Admins only (the console's type is `SystemInfo &
    /// Partial<AdminSystemInfo>`: ts-rs cannot flatten an `Option`).
    #[serde(flatten)]
    #[cfg_attr(test, ts(skip))]
    admin: Option<AdminSystemInfo>,
}

/// What only admins see of `/system`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AdminSystemInfo {
    build: BuildInfo,
    database: DatabaseInfo,
    started_at: String,
    uptime_secs: u64,
    /// The replicas seen within a minute, most recently started first.
    replicas: Vec<ReplicaInfo>,
    /// Restart fields whose configured value is not the running one.
    pending_restart: Vec<&'static str>,
    /// Where this replica counts rate limits and budgets.
    limits: LimitsInfo,
    /// What this replica's guardrails did since start.
    guardrails: GuardrailsInfo,
}

/// What was built: the commit and its time (`null` outside a checkout).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct BuildInfo {
    commit: Option<&'static str>,
    built_at: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct DatabaseInfo {
    #[cfg_attr(test, ts(type = "\"sqlite\" | \"postgres\""))]
    kind: &'static str,
    /// The last migration applied.
    schema_version: i64,
}

/// One replica as its heartbeat describes it.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ReplicaInfo {
    id: String,
    hostname: String,
    version: String,
    last_seen: String,
}

impl BuildInfo {
    fn of_this_binary() -> Self {
        let commit = env!("GATEWAY_BUILD_COMMIT");
        BuildInfo {
            commit: (!commit.is_empty()).then_some(commit),
            built_at: env!("GATEWAY_BUILT_AT")
                .parse::<i64>()
                .ok()
                .map(clock::rfc3339),
        }
    }
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
    who: SessionUser,
) -> Result<Json<SystemInfo>, GatewayError> {
    let admin = if who.user.is_admin() {
        Some(admin_info(&app).await?)
    } else {
        None
    };
    Ok(Json(SystemInfo {
        version: VERSION,
        mode: app.config().mode.as_str(),
        admin,
    }))
}

async fn admin_info(app: &AppState) -> Result<AdminSystemInfo, GatewayError> {
    let store = app.store()?;
    let uptime = app.uptime().as_secs();
    let started = app.started_at();
    let replicas = store
        .replicas()
        .recent()
        .await?
        .into_iter()
        .map(|r| ReplicaInfo {
            id: r.id,
            hostname: r.hostname,
            version: r.version,
            last_seen: clock::rfc3339(r.last_seen),
        })
        .collect();
    Ok(AdminSystemInfo {
        build: BuildInfo::of_this_binary(),
        database: DatabaseInfo {
            kind: store.backend().as_str(),
            schema_version: store.meta().schema_version().await?,
        },
        started_at: clock::rfc3339(started),
        uptime_secs: uptime,
        replicas,
        pending_restart: super::config::pending_restart(app)
            .await?
            .into_keys()
            .collect(),
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
    })
}
