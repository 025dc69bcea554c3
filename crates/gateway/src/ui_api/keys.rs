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
//! - `DELETE /_ui/api/keys/{id}` -> `{ok: true}`; 404 for an id that is not
//!   one of the caller's keys. The key stops working at once on this replica
//!   and, with PostgreSQL, within a second on the others.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::SessionUser;
use super::json::UiJson;
use super::reply::{Done, DONE};
use crate::auth::keys;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::api_keys::{ApiKeyRecord, NewApiKey};
use crate::store::clock::rfc3339;
use crate::store::ids::ApiKeyId;

/// Longest label, in characters.
pub(crate) const LABEL_MAX: usize = 100;

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "CreateKeyBody"))]
pub(crate) struct CreateBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    label: Option<String>,
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
}

impl From<&ApiKeyRecord> for KeyView {
    fn from(k: &ApiKeyRecord) -> Self {
        KeyView {
            id: k.id,
            key_prefix: k.key_prefix.clone(),
            label: k.label.clone(),
            last_used: k.last_used_at.map(rfc3339),
            created_at: rfc3339(k.created_at),
        }
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
}

/// `GET /_ui/api/keys`.
pub(crate) async fn list(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<KeyList>, GatewayError> {
    let keys = app.store()?.api_keys().list_for_user(who.user.id).await?;
    let keys: Vec<KeyView> = keys.iter().map(KeyView::from).collect();
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
    let label = valid_label(body.label.as_deref())?;
    let generated = keys::generate();
    let record = app
        .store()?
        .api_keys()
        .create(NewApiKey {
            user_id: who.user.id,
            key_hash: &generated.hash_hex,
            key_prefix: &generated.display_prefix,
            label: &label,
        })
        .await?;
    tracing::info!(user_id = %who.user.id, key_id = %record.id, "API key created");
    Ok(Json(CreatedKey {
        id: record.id,
        key: generated.key.expose().to_owned(),
        key_prefix: record.key_prefix,
        label: record.label,
        created_at: rfc3339(record.created_at),
    }))
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
    app.key_cache().invalidate_hex(&hash).await;
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
