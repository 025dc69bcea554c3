//! The models calls (spec 2.9, 3.6a; interfaces-full.md 4): what a
//! signed-in user can call now (`GET /models`), and the administrator's
//! model registry (`/models/registry`, `PATCH`/`DELETE /models/registry/{id}`,
//! `POST /models/registry/populate`) and visibility defaults
//! (`/models/visibility-defaults[/{provider_id}[/apply]]`,
//! `POST /models/visibility-defaults/apply-all`).
//!
//! A change of the registry applies to the next request on this replica at
//! once (the live view is reloaded before the answer) and on the others
//! within a second (the store announces it).

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::{Admin, SessionUser};
use super::json::UiJson;
use super::reply::{Done, DONE};
use crate::error::GatewayError;
use crate::providers::offer;
use crate::providers::populate::Populate;
use crate::providers::ProviderId;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::ids::ModelEntryId;
use crate::store::model_registry::{EntryChange, ModelEntry, VisibilityDefault};

/// Longest display name an administrator may give.
const DISPLAY_NAME_MAX: usize = 200;
/// Most model ids in one visibility default.
const DEFAULT_MODELS_MAX: usize = 1000;

/// One model the caller can call (`GET /_ui/api/models`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct CallableModel {
    /// The name to send on `/v1`.
    id: String,
    provider: ProviderId,
    display_name: String,
    context_window: Option<u32>,
    max_output_tokens: Option<u32>,
}

/// `GET /_ui/api/models`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct CallableModelList {
    models: Vec<CallableModel>,
}

/// One registry entry as the API shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RegistryModel {
    #[cfg_attr(test, ts(type = "string"))]
    id: ModelEntryId,
    provider: ProviderId,
    model_id: String,
    display_name: String,
    enabled: bool,
    /// `listing`, `static` or `manual`.
    source: String,
    #[cfg_attr(test, ts(type = "number | null"))]
    context_window: Option<i64>,
    #[cfg_attr(test, ts(type = "number | null"))]
    max_output_tokens: Option<i64>,
    input_price_per_mtok: Option<f64>,
    output_price_per_mtok: Option<f64>,
    cache_read_price_per_mtok: Option<f64>,
    cache_write_price_per_mtok: Option<f64>,
    created_at: String,
    updated_at: String,
}

impl RegistryModel {
    /// The view of a stored entry (`None` for a provider this build does
    /// not know).
    fn of(e: ModelEntry) -> Option<Self> {
        Some(RegistryModel {
            provider: ProviderId::parse(&e.provider)?,
            display_name: e.display_name.unwrap_or_else(|| e.model_id.clone()),
            id: e.id,
            model_id: e.model_id,
            enabled: e.enabled,
            source: e.source,
            context_window: e.context_window,
            max_output_tokens: e.max_output_tokens,
            input_price_per_mtok: e.input_price_per_mtok,
            output_price_per_mtok: e.output_price_per_mtok,
            cache_read_price_per_mtok: e.cache_read_price_per_mtok,
            cache_write_price_per_mtok: e.cache_write_price_per_mtok,
            created_at: rfc3339(e.created_at),
            updated_at: rfc3339(e.updated_at),
        })
    }
}

/// `GET /_ui/api/models/registry`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RegistryModelList {
    models: Vec<RegistryModel>,
}

/// `GET /_ui/api/models/registry?provider=`.
#[derive(Debug, Deserialize)]
pub(crate) struct RegistryQuery {
    provider: Option<String>,
}

/// `PATCH /_ui/api/models/registry/{id}`: each field present replaces the
/// stored one; `null` clears a price, or the display name (the model id is
/// then its name).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "RegistryEntryChange"))]
pub(crate) struct EntryPatch {
    #[cfg_attr(test, ts(optional))]
    enabled: Option<bool>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "string | null"))]
    display_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    input_price_per_mtok: Option<Option<f64>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    output_price_per_mtok: Option<Option<f64>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    cache_read_price_per_mtok: Option<Option<f64>>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "number | null"))]
    cache_write_price_per_mtok: Option<Option<f64>>,
}

/// `POST /_ui/api/models/registry/populate`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "PopulateBody"))]
pub(crate) struct PopulateBody {
    #[cfg_attr(test, ts(optional))]
    providers: Option<Vec<String>>,
}

/// How one provider was populated.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PopulatedProvider {
    provider: ProviderId,
    /// `listing`, `static`, or `error` (neither gave a model).
    #[cfg_attr(test, ts(type = r#""listing" | "static" | "error""#))]
    source: &'static str,
    added: u32,
    updated: u32,
    /// Why the listing was not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    error: Option<String>,
}

/// `POST /_ui/api/models/registry/populate`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PopulateResult {
    providers: Vec<PopulatedProvider>,
}

/// One provider's visibility default.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "VisibilityDefault"))]
pub(crate) struct VisibilityDefaultView {
    provider: ProviderId,
    enabled_models: Vec<String>,
    updated_at: String,
}

impl VisibilityDefaultView {
    /// The view of a stored default (`None` for a provider this build does
    /// not know).
    fn of(d: VisibilityDefault) -> Option<Self> {
        Some(VisibilityDefaultView {
            provider: ProviderId::parse(&d.provider)?,
            enabled_models: d.enabled_models,
            updated_at: rfc3339(d.updated_at),
        })
    }
}

/// `GET /_ui/api/models/visibility-defaults`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct VisibilityDefaultList {
    defaults: Vec<VisibilityDefaultView>,
}

/// `PUT /_ui/api/models/visibility-defaults/{provider_id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct VisibilityDefaultBody {
    enabled_models: Vec<String>,
}

/// What applying one provider's default changed.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ApplyResult {
    provider: ProviderId,
    /// Entries switched on.
    enabled: u32,
    /// Entries switched off.
    disabled: u32,
}

/// `POST /_ui/api/models/visibility-defaults/apply-all`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ApplyAllResult {
    providers: Vec<ApplyResult>,
}

/// A provider id of a path or a body (400 when unknown).
fn provider(raw: &str) -> Result<ProviderId, GatewayError> {
    ProviderId::parse(raw).ok_or_else(|| {
        GatewayError::validation(format!(
            "unknown provider '{raw}': one of primary, messages_vendor, completions_vendor, \
             assistant_vendor, custom"
        ))
    })
}

fn entry_id(raw: &str) -> Result<ModelEntryId, GatewayError> {
    raw.parse()
        .map_err(|_| GatewayError::NotFound(format!("no registry entry '{raw}'")))
}

/// `GET /_ui/api/models`: what the signed-in user can call now.
pub(crate) async fn usable(
    State(app): State<AppState>,
    who: SessionUser,
) -> Json<CallableModelList> {
    let rt = app.runtime();
    let upstream = app.upstream(&rt);
    let models = offer::offered(&app.offer_sources(&upstream, &rt), Some(who.user.id)).await;
    Json(CallableModelList {
        models: models
            .into_iter()
            .map(|m| CallableModel {
                display_name: m.display_name.unwrap_or_else(|| m.id.clone()),
                id: m.id,
                provider: m.provider,
                context_window: m.context_window,
                max_output_tokens: m.max_output_tokens,
            })
            .collect(),
    })
}

/// `GET /_ui/api/models/registry`.
pub(crate) async fn registry(
    State(app): State<AppState>,
    _admin: Admin,
    Query(query): Query<RegistryQuery>,
) -> Result<Json<RegistryModelList>, GatewayError> {
    let only = query.provider.as_deref().map(provider).transpose()?;
    let entries = app
        .store()?
        .model_registry()
        .list(only.map(ProviderId::as_str))
        .await?;
    Ok(Json(RegistryModelList {
        models: entries.into_iter().filter_map(RegistryModel::of).collect(),
    }))
}

/// `PATCH /_ui/api/models/registry/{id}`.
pub(crate) async fn update(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
    UiJson(patch): UiJson<EntryPatch>,
) -> Result<Json<RegistryModel>, GatewayError> {
    let id = entry_id(&raw)?;
    let change = valid_change(patch)?;
    let store = app.store()?;
    let entry = store
        .model_registry()
        .update(id, &change)
        .await?
        .ok_or_else(|| GatewayError::NotFound(format!("no registry entry '{raw}'")))?;
    app.model_gate().reload(store).await?;
    tracing::info!(
        by = %admin.user.id,
        provider = %entry.provider,
        model = %entry.model_id,
        enabled = entry.enabled,
        "model registry entry changed"
    );
    RegistryModel::of(entry)
        .map(Json)
        .ok_or_else(|| GatewayError::NotFound(format!("no registry entry '{raw}'")))
}

fn valid_change(patch: EntryPatch) -> Result<EntryChange, GatewayError> {
    let display_name = match patch.display_name {
        Some(Some(name)) => {
            let name = name.trim();
            if name.chars().count() > DISPLAY_NAME_MAX || name.chars().any(char::is_control) {
                return Err(GatewayError::validation(format!(
                    "display_name: at most {DISPLAY_NAME_MAX} characters, no control characters"
                )));
            }
            // An empty name gives the model its id back.
            Some((!name.is_empty()).then(|| name.to_owned()))
        }
        other => other,
    };
    let price = |field: &str, value: Option<Option<f64>>| match value {
        Some(Some(p)) if !p.is_finite() || p < 0.0 => Err(GatewayError::validation(format!(
            "{field}: a price in USD per million tokens, 0 or more"
        ))),
        other => Ok(other),
    };
    Ok(EntryChange {
        enabled: patch.enabled,
        display_name,
        input_price_per_mtok: price("input_price_per_mtok", patch.input_price_per_mtok)?,
        output_price_per_mtok: price("output_price_per_mtok", patch.output_price_per_mtok)?,
        cache_read_price_per_mtok: price(
            "cache_read_price_per_mtok",
            patch.cache_read_price_per_mtok,
        )?,
        cache_write_price_per_mtok: price(
            "cache_write_price_per_mtok",
            patch.cache_write_price_per_mtok,
        )?,
    })
}

/// `DELETE /_ui/api/models/registry/{id}` (populating may bring it back).
pub(crate) async fn delete(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let id = entry_id(&raw)?;
    let store = app.store()?;
    if !store.model_registry().delete(id).await? {
        return Err(GatewayError::NotFound(format!("no registry entry '{raw}'")));
    }
    app.model_gate().reload(store).await?;
    tracing::info!(by = %admin.user.id, entry = %id, "model registry entry deleted");
    Ok(Json(DONE))
}

/// `POST /_ui/api/models/registry/populate`: every provider (or those
/// named), in registry order.
pub(crate) async fn populate(
    State(app): State<AppState>,
    admin: Admin,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<PopulateResult>, GatewayError> {
    // The body is optional: none populates every provider.
    let body: PopulateBody = if body.iter().all(u8::is_ascii_whitespace) {
        PopulateBody::default()
    } else {
        crate::body::parse_json(&headers, &body)?
    };
    let providers = match body.providers {
        Some(names) => {
            let mut ids = Vec::with_capacity(names.len());
            for name in &names {
                let id = provider(name)?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            ids
        }
        None => ProviderId::ALL.to_vec(),
    };
    let store = app.store()?;
    let rt = app.runtime();
    let upstream = app.upstream(&rt);
    let outcomes = Populate {
        store,
        accounts: app.accounts(),
        models: app.models(),
        upstream: &upstream,
        admin: Some(admin.user.id),
    }
    .run(&providers)
    .await?;
    app.model_gate().reload(store).await?;
    let providers: Vec<PopulatedProvider> = outcomes
        .into_iter()
        .map(|o| PopulatedProvider {
            provider: o.provider,
            source: o.source.map_or("error", |s| s.as_str()),
            added: o.merged.added,
            updated: o.merged.updated,
            error: o.error,
        })
        .collect();
    tracing::info!(
        by = %admin.user.id,
        added = providers.iter().map(|p| p.added).sum::<u32>(),
        updated = providers.iter().map(|p| p.updated).sum::<u32>(),
        "model registry populated"
    );
    Ok(Json(PopulateResult { providers }))
}

/// `GET /_ui/api/models/visibility-defaults`.
pub(crate) async fn defaults(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<VisibilityDefaultList>, GatewayError> {
    let defaults = app.store()?.model_registry().defaults().await?;
    Ok(Json(VisibilityDefaultList {
        defaults: defaults
            .into_iter()
            .filter_map(VisibilityDefaultView::of)
            .collect(),
    }))
}

/// `PUT /_ui/api/models/visibility-defaults/{provider_id}`: what new
/// entries of the provider get as enabled (existing ones change when it is
/// applied).
pub(crate) async fn set_default(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
    UiJson(body): UiJson<VisibilityDefaultBody>,
) -> Result<Json<VisibilityDefaultView>, GatewayError> {
    let id = provider(&raw)?;
    if body.enabled_models.len() > DEFAULT_MODELS_MAX
        || body
            .enabled_models
            .iter()
            .any(|m| m.trim().is_empty() || m.len() > 512)
    {
        return Err(GatewayError::validation(format!(
            "enabled_models: at most {DEFAULT_MODELS_MAX} model ids, none empty"
        )));
    }
    let saved = app
        .store()?
        .model_registry()
        .set_default(id.as_str(), &body.enabled_models)
        .await?;
    tracing::info!(by = %admin.user.id, provider = %id, models = saved.enabled_models.len(), "visibility default set");
    Ok(Json(VisibilityDefaultView {
        provider: id,
        enabled_models: saved.enabled_models,
        updated_at: rfc3339(saved.updated_at),
    }))
}

/// `DELETE /_ui/api/models/visibility-defaults/{provider_id}`: new entries
/// of that provider are then enabled.
pub(crate) async fn delete_default(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let id = provider(&raw)?;
    if !app
        .store()?
        .model_registry()
        .delete_default(id.as_str())
        .await?
    {
        return Err(GatewayError::NotFound(format!(
            "the provider '{id}' has no visibility default"
        )));
    }
    tracing::info!(by = %admin.user.id, provider = %id, "visibility default removed");
    Ok(Json(DONE))
}

/// `POST /_ui/api/models/visibility-defaults/{provider_id}/apply`.
pub(crate) async fn apply_default(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
) -> Result<Json<ApplyResult>, GatewayError> {
    let id = provider(&raw)?;
    let applied = apply(&app, &admin, &[id]).await?;
    applied
        .into_iter()
        .next()
        .map(Json)
        .ok_or_else(|| GatewayError::internal(anyhow::anyhow!("applying gave no answer")))
}

/// `POST /_ui/api/models/visibility-defaults/apply-all`.
pub(crate) async fn apply_all(
    State(app): State<AppState>,
    admin: Admin,
) -> Result<Json<ApplyAllResult>, GatewayError> {
    let providers = apply(&app, &admin, &ProviderId::ALL).await?;
    Ok(Json(ApplyAllResult { providers }))
}

async fn apply(
    app: &AppState,
    admin: &Admin,
    providers: &[ProviderId],
) -> Result<Vec<ApplyResult>, GatewayError> {
    let store = app.store()?;
    let mut out = Vec::with_capacity(providers.len());
    for &id in providers {
        let applied = store.model_registry().apply_default(id.as_str()).await?;
        out.push(ApplyResult {
            provider: id,
            enabled: applied.enabled,
            disabled: applied.disabled,
        });
    }
    app.model_gate().reload(store).await?;
    tracing::info!(by = %admin.user.id, providers = providers.len(), "visibility defaults applied");
    Ok(out)
}
