//! The runtime configuration's layers, defaults < environment < store
//! (spec 2.7), and how a change made on one replica reaches the others.
//!
//! At start (full mode) [`overlay_stored`] lays the stored values over the
//! environment's, logging each environment value the store overrides. Other
//! replicas see a change within [`SYNC_INTERVAL`] ([`spawn_sync`]): the hot
//! fields of the new overlay replace the live ones; restart fields wait for
//! a restart (the admin API reports them as pending).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::runtime::FieldError;
use crate::config::{Reload, RuntimeConfig, FIELDS};
use crate::sso::settings as sso_keys;
use crate::state::AppState;
use crate::store::config::ConfigValue;
use crate::store::{Store, StoreError};

/// How often each replica looks for configuration changes made elsewhere.
pub(crate) const SYNC_INTERVAL: Duration = Duration::from_secs(2);

/// Fields the admin API does not change: the listener is bound from the
/// environment before the store is read.
pub(crate) const ENVIRONMENT_ONLY: &[&str] = &["server_host", "server_port"];

/// Whether a stored key is an SSO setting rather than a runtime field.
pub(crate) fn is_sso_key(name: &str) -> bool {
    sso_keys::key(name).is_some()
}

/// `env` overlaid with the stored runtime values; unusable stored values are
/// skipped with a warning (they are reported, never fatal). Returns the
/// result and the names of the fields the store set.
pub(crate) fn overlay(
    env: &RuntimeConfig,
    stored: &[(String, ConfigValue)],
) -> (RuntimeConfig, Vec<String>) {
    let mut runtime = env.clone();
    let mut set = Vec::new();
    for (key, value) in stored {
        if is_sso_key(key) || ENVIRONMENT_ONLY.contains(&key.as_str()) {
            continue;
        }
        match runtime.set(key, value.expose()) {
            Ok(()) => set.push(key.clone()),
            Err(FieldError::Unknown) => {
                tracing::warn!(field = %key, "stored configuration field is unknown to this version; ignored")
            }
            Err(FieldError::Invalid(problem)) => {
                tracing::warn!(field = %key, %problem, "stored configuration value is invalid; ignored")
            }
        }
    }
    (runtime, set)
}

pub(crate) async fn stored_values(store: &Store) -> Result<Vec<(String, ConfigValue)>, StoreError> {
    Ok(store
        .config()
        .list()
        .await?
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect())
}

/// Start-up overlay (full mode): lay the stored values over `runtime` (the
/// environment's), logging each one that overrides a value the environment
/// set.
pub(crate) async fn overlay_stored(
    store: &Store,
    runtime: &mut RuntimeConfig,
) -> Result<(), StoreError> {
    let stored = stored_values(store).await?;
    let defaults = RuntimeConfig::default();
    let (merged, set) = overlay(runtime, &stored);
    for name in &set {
        let env_value = runtime.get(name);
        if env_value != defaults.get(name) && env_value != merged.get(name) {
            tracing::info!(
                field = %name,
                variable = %name.to_ascii_uppercase(),
                "the stored configuration overrides the environment value"
            );
        }
    }
    if !set.is_empty() {
        tracing::info!(fields = ?set, "runtime configuration: stored values applied");
    }
    *runtime = merged;
    Ok(())
}

/// `live` with its hot fields taken from `target` (restart fields keep their
/// running values).
pub(crate) fn with_hot_fields(live: &RuntimeConfig, target: &RuntimeConfig) -> RuntimeConfig {
    let mut next = live.clone();
    for field in FIELDS.iter().filter(|f| f.reload == Reload::Hot) {
        if let Some(text) = target.get(field.name) {
            // Both values passed the same validation: this cannot fail.
            let _ = next.set(field.name, &text);
        }
    }
    next
}

/// Apply the stored hot values to the live configuration when they differ.
async fn sync_once(app: &AppState, env: &RuntimeConfig) -> Result<(), StoreError> {
    let Ok(store) = app.store() else {
        return Ok(());
    };
    let stored = stored_values(store).await?;
    let (target, _) = overlay(env, &stored);
    let live = app.runtime();
    let next = with_hot_fields(&live, &target);
    if next != *live {
        tracing::info!("runtime configuration changed in the store: hot fields applied");
        app.set_runtime(next);
    }
    Ok(())
}

/// Follow changes made on other replicas: every [`SYNC_INTERVAL`] the newest
/// history id is read (one small query); when it moved, the stored values are
/// loaded and the hot fields applied.
pub(crate) fn spawn_sync(
    app: AppState,
    env: Arc<RuntimeConfig>,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits this handle at shutdown"
    )]
    tokio::spawn(async move {
        let mut last_seen: Option<i64> = None;
        let mut ticker = tokio::time::interval(SYNC_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let Ok(store) = app.store() else { return };
            let newest = match store.config().history(1).await {
                Ok(entries) => entries.first().map(|e| e.id),
                Err(e) => {
                    tracing::warn!(error = %e, "configuration sync: cannot read the history");
                    continue;
                }
            };
            if newest == last_seen {
                continue;
            }
            match sync_once(&app, &env).await {
                Ok(()) => last_seen = newest,
                Err(e) => tracing::warn!(error = %e, "configuration sync failed"),
            }
        }
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
