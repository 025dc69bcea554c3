//! The signed-in user's API keys (spec 2.3, 4.3; interfaces.md 6), session +
//! CSRF, each user sees and deletes only their own:
//!
//! - `GET /_ui/api/keys` -> `{keys: [{id, key_prefix, label, last_used,
//!   created_at}], count}`, newest first; `last_used` is RFC 3339 or `null`
//!   (recorded off the hot path: within a few seconds of the first use, then
//!   at most every 30 s per key);
//! - `POST /_ui/api/keys {label?}` -> `{id, key, key_prefix, label,
//!   created_at}`: `key` (`sk-` + 43 characters, 256 random bits) is shown
//!   here only; the store keeps its SHA-256. `label`: up to
//!   [`LABEL_MAX`] characters, no control characters (default empty). At most
//!   100 keys per user (409 `conflict`);
//! - `PATCH /_ui/api/keys/{id}` with any of `label`, `expires_at`,
//!   `allowed_models` (`null` clears) -> the key without its secret; the
//!   change applies at once here and within a second on other replicas;
//! - `DELETE /_ui/api/keys/{id}` -> `{ok: true}`; 404 for an id that is not
//!   one of the caller's keys. The key stops working at once on this replica
//!   and, with PostgreSQL, within a second on the others.
//!
//! Rules a key may carry (issue 21): `expires_at` (RFC 3339; from then on
//! the key is 401 `auth_error`), `allowed_models` (names as sent on `/v1`;
//! any other model is 403 `forbidden`, and `/v1/models` lists only these),
//! and its budget and rate limits (`budget_usd`, `budget_period`,
//! `rpm_limit`, `tpm_limit`; see [`crate::limits`]). A listed key shows
//! `spend_usd` (in its budget's current period; without a periodic budget,
//! since it was created) and `budget_resets_at`.

use std::collections::HashMap;

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::SessionUser;
use super::json::UiJson;
use super::limit_fields::{LimitFields, LimitView};
use super::reply::{Done, DONE};
use crate::auth::keys;
use crate::error::GatewayError;
use crate::limits;
use crate::limits::policy::Limits;
use crate::state::AppState;
use crate::store::api_keys::{ApiKeyRecord, KeyChange, LimitColumns, NewApiKey};
use crate::store::clock::rfc3339;
use crate::store::ids::{ApiKeyId, UserId};
use crate::store::Store;

/// Longest label, in characters.
pub(crate) const LABEL_MAX: usize = 100;

/// Most models one key may be restricted to.
const ALLOWED_MODELS_MAX: usize = 100;

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "CreateKeyBody"))]
pub(crate) struct CreateBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    label: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    expires_at: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    allowed_models: Option<Vec<String>>,
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    limits: LimitFields,
    #[serde(flatten)]
    #[cfg_attr(test, ts(skip))]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// `PATCH /_ui/api/keys/{id}`: each field present replaces the stored one
/// (`null` clears `expires_at` and `allowed_models`).
#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "KeyPatchBody"))]
pub(crate) struct PatchBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    label: Option<String>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "string | null"))]
    expires_at: Option<Option<String>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "Array<string> | null"))]
    allowed_models: Option<Option<Vec<String>>>,
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    limits: LimitFields,
    #[serde(flatten)]
    #[cfg_attr(test, ts(skip))]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// 400 for a field this call does not take.
fn no_other_fields(rest: &serde_json::Map<String, serde_json::Value>) -> Result<(), GatewayError> {
    match rest.keys().next() {
        None => Ok(()),
        Some(k) => Err(GatewayError::validation(format!("{k}: unknown field"))),
    }
}

/// An RFC 3339 time as Unix seconds.
fn valid_expiry(text: &str) -> Result<i64, GatewayError> {
    time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc3339)
        .map(time::OffsetDateTime::unix_timestamp)
        .map_err(|_| {
            GatewayError::validation("expires_at: an RFC 3339 time, e.g. 2027-01-31T00:00:00Z")
        })
}

/// Model names as stored: trimmed, unique, bounded.
fn valid_models(models: &[String]) -> Result<Vec<String>, GatewayError> {
    if models.len() > ALLOWED_MODELS_MAX {
        return Err(GatewayError::validation(format!(
            "allowed_models: at most {ALLOWED_MODELS_MAX} names"
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(models.len());
    for m in models {
        let m = m.trim();
        if m.is_empty() || m.len() > 256 || m.chars().any(char::is_control) {
            return Err(GatewayError::validation(
                "allowed_models: model names as sent on /v1, none empty",
            ));
        }
        if !out.iter().any(|o| o == m) {
            out.push(m.to_owned());
        }
    }
    Ok(out)
}

/// The label as stored, or what is wrong with it.
fn valid_label(label: Option<&str>) -> Result<String, GatewayError> {
    let label = label.unwrap_or("").trim();
    if label.chars().count() > LABEL_MAX {
        return Err(GatewayError::validation(format!(
            "label: at most {LABEL_MAX} characters"
        )));
    }
    if label.chars().any(char::is_control) {
        return Err(GatewayError::validation(
            "label: control characters are not allowed",
        ));
    }
    Ok(label.to_owned())
}

/// One of the caller's keys, without its secret.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ApiKey"))]
pub(crate) struct KeyView {
    id: ApiKeyId,
    key_prefix: String,
    label: String,
    last_used: Option<String>,
    created_at: String,
    expires_at: Option<String>,
    allowed_models: Option<Vec<String>>,
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    limits: LimitView,
    /// USD spent in the budget's current period (without a periodic
    /// budget: since the key was created).
    spend_usd: f64,
    /// When the budget's period ends (RFC 3339); `null` without one.
    budget_resets_at: Option<String>,
}

impl KeyView {
    /// The views of `records` (keys of `user`), each with what it spent in
    /// its budget's current period, else since it was created (no usage row
    /// predates its key): one grouped query per distinct period start, so
    /// at most four (all time, this day, week and month) for any number of
    /// keys.
    async fn read_all(
        store: &Store,
        user: UserId,
        records: &[ApiKeyRecord],
    ) -> Result<Vec<Self>, GatewayError> {
        let now = limits::clock::now();
        let windows: Vec<Option<(i64, Option<i64>)>> = records
            .iter()
            .map(|k| Limits::of(&k.limits).budget.map(|b| b.window(now)))
            .collect();
        let mut spent: HashMap<i64, HashMap<ApiKeyId, f64>> = HashMap::new();
        for since in windows.iter().map(|w| w.map_or(0, |(start, _)| start)) {
            if let std::collections::hash_map::Entry::Vacant(slot) = spent.entry(since) {
                let by_key = store.usage().spent_by_key_since(user, since).await?;
                slot.insert(by_key.into_iter().collect());
            }
        }
        Ok(records
            .iter()
            .zip(windows)
            .map(|(k, window)| {
                let since = window.map_or(0, |(start, _)| start);
                KeyView {
                    id: k.id,
                    key_prefix: k.key_prefix.clone(),
                    label: k.label.clone(),
                    last_used: k.last_used_at.map(rfc3339),
                    created_at: rfc3339(k.created_at),
                    expires_at: k.expires_at.map(rfc3339),
                    allowed_models: k.allowed_models.clone(),
                    limits: LimitView::from(&k.limits),
                    spend_usd: spent
                        .get(&since)
                        .and_then(|by_key| by_key.get(&k.id))
                        .copied()
                        .unwrap_or(0.0),
                    budget_resets_at: window.and_then(|(_, end)| end).map(rfc3339),
                }
            })
            .collect())
    }
}

/// `GET /_ui/api/keys`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ApiKeyList"))]
pub(crate) struct KeyList {
    count: usize,
    keys: Vec<KeyView>,
}

/// `POST /_ui/api/keys`: the new key, its secret shown this once.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct CreatedKey {
    id: ApiKeyId,
    key: String,
    key_prefix: String,
    label: String,
    created_at: String,
    expires_at: Option<String>,
    allowed_models: Option<Vec<String>>,
    #[serde(flatten)]
    #[cfg_attr(test, ts(flatten))]
    limits: LimitView,
}

/// `GET /_ui/api/keys`.
pub(crate) async fn list(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<KeyList>, GatewayError> {
    let store = app.store()?;
    let records = store.api_keys().list_for_user(who.user.id).await?;
    let keys = KeyView::read_all(store, who.user.id, &records).await?;
    Ok(Json(KeyList {
        count: keys.len(),
        keys,
    }))
}

/// `POST /_ui/api/keys`.
pub(crate) async fn create(
    State(app): State<AppState>,
    who: SessionUser,
    UiJson(body): UiJson<CreateBody>,
) -> Result<Json<CreatedKey>, GatewayError> {
    no_other_fields(&body.rest)?;
    body.limits.validate()?;
    let mut limit_columns = LimitColumns::default();
    body.limits.change().apply(&mut limit_columns);
    let label = valid_label(body.label.as_deref())?;
    let expires_at = body.expires_at.as_deref().map(valid_expiry).transpose()?;
    let allowed = body
        .allowed_models
        .as_deref()
        .map(valid_models)
        .transpose()?;
    let generated = keys::generate();
    let record = app
        .store()?
        .api_keys()
        .create(NewApiKey {
            user_id: who.user.id,
            key_hash: &generated.hash_hex,
            key_prefix: &generated.display_prefix,
            label: &label,
            expires_at,
            allowed_models: allowed.as_deref(),
            limits: &limit_columns,
        })
        .await?;
    tracing::info!(user_id = %who.user.id, key_id = %record.id, "API key created");
    Ok(Json(CreatedKey {
        id: record.id,
        key: generated.key.expose().to_owned(),
        key_prefix: record.key_prefix,
        label: record.label,
        created_at: rfc3339(record.created_at),
        expires_at: record.expires_at.map(rfc3339),
        allowed_models: record.allowed_models,
        limits: LimitView::from(&record.limits),
    }))
}

/// `PATCH /_ui/api/keys/{id}`.
pub(crate) async fn update(
    State(app): State<AppState>,
    who: SessionUser,
    Path(id): Path<String>,
    UiJson(body): UiJson<PatchBody>,
) -> Result<Json<KeyView>, GatewayError> {
    let not_found = || GatewayError::NotFound("API key not found".into());
    let id: ApiKeyId = id.parse().map_err(|_| not_found())?;
    no_other_fields(&body.rest)?;
    body.limits.validate()?;
    let change = KeyChange {
        limits: body.limits.change(),
        label: body
            .label
            .as_deref()
            .map(|l| valid_label(Some(l)))
            .transpose()?,
        expires_at: body
            .expires_at
            .map(|e| e.as_deref().map(valid_expiry).transpose())
            .transpose()?,
        allowed_models: body
            .allowed_models
            .map(|m| m.as_deref().map(valid_models).transpose())
            .transpose()?,
    };
    let store = app.store()?;
    let (record, hash) = store
        .api_keys()
        .update(who.user.id, id, &change)
        .await?
        .ok_or_else(not_found)?;
    // Other replicas hear of it from the store's announcement (PostgreSQL).
    app.key_cache().invalidate_hex(&hash);
    tracing::info!(user_id = %who.user.id, key_id = %id, "API key changed");
    let mut view = KeyView::read_all(store, who.user.id, std::slice::from_ref(&record)).await?;
    Ok(Json(view.remove(0)))
}

/// `DELETE /_ui/api/keys/{id}`.
pub(crate) async fn delete(
    State(app): State<AppState>,
    who: SessionUser,
    Path(id): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let not_found = || GatewayError::NotFound("API key not found".into());
    let id: ApiKeyId = id.parse().map_err(|_| not_found())?;
    let hash = app
        .store()?
        .api_keys()
        .delete(who.user.id, id)
        .await?
        .ok_or_else(not_found)?;
    // Other replicas hear of it from the store's trigger (PostgreSQL).
    app.key_cache().invalidate_hex(&hash);
    tracing::info!(user_id = %who.user.id, key_id = %id, "API key deleted");
    Ok(Json(DONE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_trimmed_bounded_and_printable() {
        assert_eq!(valid_label(None).unwrap(), "");
        assert_eq!(valid_label(Some("  laptop ")).unwrap(), "laptop");
        assert_eq!(
            valid_label(Some(&"é".repeat(100))).unwrap().chars().count(),
            100
        );
        assert!(valid_label(Some(&"x".repeat(101))).is_err());
        assert!(valid_label(Some("a\nb")).is_err());
    }
}
