//! The admin configuration API (spec 2.7, 4.3; issue 6), Admin only
//! (session + CSRF + role):
//!
//! - `GET /_ui/api/config` -> `{values, sources, pending_restart, sso_enabled}`:
//!   `values` maps every runtime field ([`FIELDS`]) and every SSO key
//!   ([`crate::sso::settings::KEYS`]) to its configured value as text (the
//!   forms the environment accepts: `30s`, `10MiB`); a secret that is set shows
//!   as `"********"`, an unset SSO key as `null`. `sources` says where each
//!   value comes from (`default`, `environment`, `database`).
//!   `pending_restart` maps each restart field whose configured value is not
//!   the running one to `{configured, running}`.
//! - `PUT /_ui/api/config` with `{"field": value, ...}`: values are strings,
//!   numbers or booleans (taken as text) or `null` (remove the stored value:
//!   back to the environment's or the default). Every value is validated
//!   first ([`RuntimeConfig::set`], [`crate::sso::settings::validate`]); one bad
//!   value refuses the whole request (400, every problem listed) and nothing
//!   is stored. The values are then written in one transaction, each change
//!   recorded in the history with who, when, old and new (secrets masked).
//!   Hot fields apply at once; restart fields are stored and reported in
//!   `pending_restart`. A secret sent back as `"********"` is left unchanged.
//!   `server_host` and `server_port` are refused: the listener is bound from
//!   the environment before the store is read.
//! - `GET /_ui/api/config/schema` -> `{fields: [{name, type, default,
//!   description, reload, secret, editable, values?}]}`.
//! - `GET /_ui/api/config/history?limit=N` -> `{entries, count}`, newest first
//!   (only the last 1000 entries are kept).
//!
//! The overlay of stored values over the environment's, at start and on
//! every replica when they change, is [`crate::live::config`].

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::extract::Admin;
use super::json::UiJson;
use super::reply::OK;
use crate::config::value::FieldKind;
use crate::config::{Reload, RuntimeConfig, FIELDS};
use crate::error::GatewayError;
use crate::live::config::{overlay, stored_values, with_hot_fields, ENVIRONMENT_ONLY};
use crate::sso::settings as sso_keys;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::config::{ConfigChange, ConfigValue, HISTORY_LIMIT, MASK};
use crate::store::ids::UserId;

/// The configuration routes (relative to `/_ui/api`).
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/config", get(get_config).put(put_config))
        .route("/config/schema", get(schema))
        .route("/config/history", get(history))
}

/// Where a configured value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub(crate) enum ValueSource {
    Default,
    Environment,
    Database,
}

impl ValueSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ValueSource::Default => "default",
            ValueSource::Environment => "environment",
            ValueSource::Database => "database",
        }
    }
}

impl PartialEq<&str> for ValueSource {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A restart field whose configured value is not the running one.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PendingValue {
    configured: String,
    running: String,
}

/// `GET /_ui/api/config`: each value as text (`null`: an SSO key not set;
/// a set secret as the mask), where it comes from, what waits for a restart.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigAnswer {
    values: BTreeMap<&'static str, Option<String>>,
    sources: BTreeMap<&'static str, ValueSource>,
    pending_restart: BTreeMap<&'static str, PendingValue>,
    sso_enabled: bool,
}

/// `PUT /_ui/api/config`: what changed, what applies now, what waits for a
/// restart.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigUpdate {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    changed: Vec<String>,
    applied: Vec<&'static str>,
    pending_restart: Vec<&'static str>,
}

/// One field of `GET /_ui/api/config/schema`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigField {
    name: &'static str,
    /// `boolean`, `integer`, `duration`, `byte_size`, `string`, `enum` or `url`.
    #[serde(rename = "type")]
    kind: &'static str,
    default: Option<String>,
    description: &'static str,
    reload: Reload,
    secret: bool,
    editable: bool,
    /// The choices of an `enum` field.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    values: Option<Vec<&'static str>>,
}

/// `GET /_ui/api/config/schema`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigSchema {
    fields: Vec<ConfigField>,
}

/// One change of `GET /_ui/api/config/history` (a secret's values masked).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigHistoryEntry {
    id: i64,
    key: String,
    old_value: Option<String>,
    new_value: Option<String>,
    secret: bool,
    changed_by: Option<UserId>,
    changed_by_email: Option<String>,
    changed_at: String,
}

/// `GET /_ui/api/config/history`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConfigHistory {
    count: usize,
    entries: Vec<ConfigHistoryEntry>,
}

/// Where a runtime value comes from.
fn source(name: &str, env: &RuntimeConfig, stored: bool) -> ValueSource {
    if stored {
        ValueSource::Database
    } else if env.get(name) != RuntimeConfig::default().get(name) {
        ValueSource::Environment
    } else {
        ValueSource::Default
    }
}

/// The restart fields whose configured value is not the running one.
fn pending_of(
    configured: &RuntimeConfig,
    live: &RuntimeConfig,
) -> BTreeMap<&'static str, PendingValue> {
    FIELDS
        .iter()
        .filter(|f| f.reload == Reload::Restart)
        .filter_map(|f| {
            let value = configured.get(f.name).unwrap_or_default();
            let running = live.get(f.name).unwrap_or_default();
            (running != value).then_some((
                f.name,
                PendingValue {
                    configured: value,
                    running,
                },
            ))
        })
        .collect()
}

/// The restart fields whose configured value (the environment's, then the
/// store's) is not the running one: they apply at the next start.
pub(crate) async fn pending_restart(
    app: &AppState,
) -> Result<BTreeMap<&'static str, PendingValue>, GatewayError> {
    let stored = stored_values(app.store()?).await?;
    let (configured, _) = overlay(app.env_runtime(), &stored);
    Ok(pending_of(&configured, &app.runtime()))
}

/// `GET /_ui/api/config`.
async fn get_config(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<ConfigAnswer>, GatewayError> {
    let store = app.store()?;
    let env = app.env_runtime().clone();
    let stored: BTreeMap<String, ConfigValue> = stored_values(store).await?.into_iter().collect();
    let (configured, _) = overlay(&env, &stored.clone().into_iter().collect::<Vec<_>>());
    let live = app.runtime();
    let mut values = BTreeMap::new();
    let mut sources = BTreeMap::new();
    let pending = pending_of(&configured, &live);
    for field in FIELDS {
        let value = configured.get(field.name).unwrap_or_default();
        let is_stored = stored.contains_key(field.name) && !ENVIRONMENT_ONLY.contains(&field.name);
        sources.insert(field.name, source(field.name, &env, is_stored));
        values.insert(field.name, Some(value));
    }
    for key in sso_keys::KEYS {
        let shown = match stored.get(key.name) {
            Some(v) if v.expose().is_empty() => None,
            Some(v) if key.secret || v.is_secret() => Some(MASK.to_owned()),
            Some(v) => Some(v.expose().to_owned()),
            None => None,
        };
        let origin = if stored.contains_key(key.name) {
            ValueSource::Database
        } else {
            ValueSource::Default
        };
        sources.insert(key.name, origin);
        values.insert(key.name, shown);
    }
    let sso_enabled = sso_keys::SsoSettings::from_values(
        stored.get(sso_keys::ISSUER_URL).map(ConfigValue::expose),
        stored.get(sso_keys::CLIENT_ID).map(ConfigValue::expose),
        stored.get(sso_keys::CLIENT_SECRET).map(ConfigValue::expose),
    )
    .is_some();
    Ok(Json(ConfigAnswer {
        values,
        sources,
        pending_restart: pending,
        sso_enabled,
    }))
}

/// One validated change of a PUT.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Planned {
    key: String,
    /// The text to store; `None` removes the stored value.
    value: Option<String>,
    secret: bool,
}

/// Validate a PUT body: the changes to store, or every problem found (one
/// per field, values never echoed).
fn plan(
    body: &Map<String, Value>,
    configured: &RuntimeConfig,
) -> Result<Vec<Planned>, Vec<String>> {
    let mut problems = Vec::new();
    let mut planned = Vec::new();
    let mut candidate = configured.clone();
    for (name, raw) in body {
        let text = match raw {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            Value::Array(_) | Value::Object(_) => {
                problems.push(format!(
                    "{name}: expected a string, number, boolean or null"
                ));
                continue;
            }
        };
        if let Some(key) = sso_keys::key(name) {
            match text {
                // The mask sent back unchanged: keep the stored secret.
                Some(t) if key.secret && t == MASK => {}
                Some(t) => match sso_keys::validate(name, &t) {
                    Ok(v) if v.is_empty() => planned.push(Planned {
                        key: name.clone(),
                        value: None,
                        secret: key.secret,
                    }),
                    Ok(v) => planned.push(Planned {
                        key: name.clone(),
                        value: Some(v),
                        secret: key.secret,
                    }),
                    Err(e) => problems.push(format!("{name}: {e}")),
                },
                None => planned.push(Planned {
                    key: name.clone(),
                    value: None,
                    secret: key.secret,
                }),
            }
            continue;
        }
        if ENVIRONMENT_ONLY.contains(&name.as_str()) {
            problems.push(format!(
                "{name}: set by the environment variable {} only (the listener is bound before the stored configuration is read)",
                name.to_ascii_uppercase()
            ));
            continue;
        }
        match text {
            None => {
                if FIELDS.iter().any(|f| f.name == name) {
                    planned.push(Planned {
                        key: name.clone(),
                        value: None,
                        secret: false,
                    });
                } else {
                    problems.push(format!("{name}: unknown configuration field"));
                }
            }
            Some(t) => match candidate.set(name, &t) {
                Ok(()) => planned.push(Planned {
                    key: name.clone(),
                    // The canonical form (`30` is stored as `30s`).
                    value: candidate.get(name),
                    secret: false,
                }),
                Err(e) => problems.push(format!("{name}: {e}")),
            },
        }
    }
    if problems.is_empty() {
        Ok(planned)
    } else {
        Err(problems)
    }
}

/// `PUT /_ui/api/config`.
async fn put_config(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<Map<String, Value>>,
) -> Result<Json<ConfigUpdate>, GatewayError> {
    let store = app.store()?;
    let env = app.env_runtime().clone();
    let before: BTreeMap<String, ConfigValue> = stored_values(store).await?.into_iter().collect();
    let before_list: Vec<(String, ConfigValue)> = before.clone().into_iter().collect();
    let (configured, _) = overlay(&env, &before_list);
    let planned = plan(&body, &configured).map_err(|problems| {
        GatewayError::Validation(format!("invalid configuration: {}", problems.join("; ")))
    })?;

    let changes: Vec<ConfigChange<'_>> = planned
        .iter()
        .map(|p| ConfigChange {
            key: &p.key,
            value: p.value.as_deref(),
            secret: p.secret,
        })
        .collect();
    store
        .config()
        .set_many(&changes, Some(admin.user.id))
        .await?;

    let changed: Vec<&str> = planned
        .iter()
        .filter(|p| before.get(&p.key).map(ConfigValue::expose) != p.value.as_deref())
        .map(|p| p.key.as_str())
        .collect();

    // Apply the hot fields now, from what is stored after the write.
    let after = stored_values(store).await?;
    let (target, _) = overlay(&env, &after);
    let live = app.runtime();
    let next = with_hot_fields(&live, &target);
    let mut applied = Vec::new();
    let mut pending = Vec::new();
    for p in &planned {
        let Some(field) = FIELDS.iter().find(|f| f.name == p.key) else {
            continue;
        };
        match field.reload {
            Reload::Hot if live.get(field.name) != next.get(field.name) => applied.push(field.name),
            Reload::Restart if target.get(field.name) != live.get(field.name) => {
                pending.push(field.name)
            }
            _ => {}
        }
    }
    if next != *live {
        app.set_runtime(next);
    }
    tracing::info!(by = %admin.user.id, changed = ?changed, applied = ?applied, pending_restart = ?pending, "configuration updated");
    Ok(Json(ConfigUpdate {
        ok: OK,
        changed: changed.into_iter().map(str::to_owned).collect(),
        applied,
        pending_restart: pending,
    }))
}

/// `GET /_ui/api/config/schema`.
async fn schema(_admin: Admin) -> Json<ConfigSchema> {
    let mut fields: Vec<ConfigField> = FIELDS
        .iter()
        .map(|f| ConfigField {
            name: f.name,
            kind: f.kind.as_str(),
            default: Some(f.default_text()),
            description: f.description,
            reload: f.reload,
            secret: false,
            editable: !ENVIRONMENT_ONLY.contains(&f.name),
            values: match f.kind {
                FieldKind::Enum(values) => Some(values.to_vec()),
                _ => None,
            },
        })
        .collect();
    for key in sso_keys::KEYS {
        fields.push(ConfigField {
            name: key.name,
            kind: if key.name == sso_keys::ISSUER_URL {
                "url"
            } else {
                "string"
            },
            default: None,
            description: key.description,
            reload: Reload::Hot,
            secret: key.secret,
            editable: true,
            values: None,
        });
    }
    Json(ConfigSchema { fields })
}

#[derive(Debug, Deserialize)]
struct HistoryQuery {
    limit: Option<i64>,
}

/// `GET /_ui/api/config/history`.
async fn history(
    State(app): State<AppState>,
    _admin: Admin,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<ConfigHistory>, GatewayError> {
    let limit = q.limit.unwrap_or(HISTORY_LIMIT);
    if !(1..=HISTORY_LIMIT).contains(&limit) {
        return Err(GatewayError::validation(format!(
            "limit: expected 1 to {HISTORY_LIMIT}"
        )));
    }
    let entries = app.store()?.config().history(limit).await?;
    let entries: Vec<ConfigHistoryEntry> = entries
        .into_iter()
        .map(|e| {
            let shown = |v: Option<String>| v.map(|v| if e.secret { MASK.to_owned() } else { v });
            ConfigHistoryEntry {
                id: e.id,
                old_value: shown(e.old_value),
                new_value: shown(e.new_value),
                key: e.key,
                secret: e.secret,
                changed_by: e.changed_by,
                changed_by_email: e.changed_by_email,
                changed_at: rfc3339(e.changed_at),
            }
        })
        .collect();
    Ok(Json(ConfigHistory {
        count: entries.len(),
        entries,
    }))
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
