//! `GET /v1/models`: the models clients can use. First the primary models,
//! under the ids the upstream listing gives (each accepted as a model name as
//! it is); then every configured direct provider's models with the provider
//! as prefix (`messages_vendor/claude-sonnet-4-5`, `custom/llama3`), from each
//! provider's listing (cached; a provider whose listing fails adds what was
//! known, with a warning in the log).
//!
//! In full deployment a user sees what they can reach: the primary models
//! only when they connected primary (and the shared primary list is filled
//! from the upstream with their credentials when it is still the built-in
//! one or stale), then their own and the pool's providers.
//!
//! Answered in the chat-completions list shape (spec 4.1); a client that
//! sends `anthropic-version` (the messages-format SDKs do) gets the
//! messages-format list shape instead.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use crate::auth::Caller;
use crate::config::{RequestConfig, RuntimeConfig};
use crate::error::GatewayError;
use crate::providers::{direct, ProviderId};
use crate::state::AppState;

/// One listed model, whatever its provider.
struct Listed {
    id: String,
    display_name: Option<String>,
    description: Option<String>,
    created: u64,
    owned_by: &'static str,
}

pub(super) async fn handle(
    State(app): State<AppState>,
    RequestConfig(rt): RequestConfig,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Json<Value>, GatewayError> {
    let models = collect(&app, &rt, &caller).await;
    if headers.contains_key("anthropic-version") {
        let data: Vec<Value> = models
            .iter()
            .map(|m| {
                json!({
                    "type": "model",
                    "id": m.id,
                    "display_name": m.display_name.as_deref().unwrap_or(&m.id),
                    "created_at": rfc3339(m.created),
                })
            })
            .collect();
        return Ok(Json(json!({
            "data": data,
            "has_more": false,
            "first_id": models.first().map(|m| m.id.as_str()),
            "last_id": models.last().map(|m| m.id.as_str()),
        })));
    }
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            let mut entry = json!({
                "id": m.id,
                "object": "model",
                "created": m.created,
                "owned_by": m.owned_by,
            });
            if let Some(d) = m.description.as_deref().or(m.display_name.as_deref()) {
                entry["description"] = Value::String(d.to_owned());
            }
            entry
        })
        .collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

/// Primary models, then each provider's the caller can reach (listings
/// fetched concurrently).
async fn collect(app: &AppState, rt: &RuntimeConfig, caller: &Caller) -> Vec<Listed> {
    let upstream = app.upstream(rt);
    let primary = match app.accounts().primary(caller).await {
        Ok(auth) => {
            if matches!(caller, Caller::User(_)) {
                if let Some(fetcher) = auth.model_fetcher(&upstream.http, upstream.policy.clone()) {
                    app.models()
                        .fill_from(&fetcher, rt.model_cache_refresh)
                        .await;
                }
            }
            app.models().list()
        }
        Err(GatewayError::ProviderNotConnected(_)) => Vec::new(),
        Err(e) => {
            tracing::warn!("the caller's primary credentials could not be read: {e}");
            Vec::new()
        }
    };
    let loaded = app.models().loaded_at_unix();
    let mut out: Vec<Listed> = primary
        .into_iter()
        .map(|m| Listed {
            id: m.id,
            display_name: m.name,
            description: m.description,
            created: loaded,
            owned_by: ProviderId::Primary.as_str(),
        })
        .collect();
    let available = match app.accounts().direct(caller).await {
        Ok(all) => all,
        Err(e) => {
            tracing::warn!("the caller's providers could not be read: {e}");
            return out;
        }
    };
    // One listing per provider (the preferred account's), none of a
    // provider an administrator switched off.
    let mut seen: Vec<ProviderId> = app.accounts().switches().disabled().to_vec();
    let available: Vec<_> = available
        .iter()
        .filter(|p| {
            let first = !seen.contains(&p.id);
            seen.push(p.id);
            first
        })
        .cloned()
        .collect();
    let lists = futures::future::join_all(
        available
            .iter()
            .map(|p| direct::models::list(&upstream, rt.model_cache_refresh, p)),
    )
    .await;
    for (p, list) in available.iter().zip(lists) {
        let id = p.id;
        for m in list.iter() {
            out.push(Listed {
                id: format!("{id}/{}", m.id),
                display_name: m.display_name.clone(),
                description: None,
                created: m.created.unwrap_or(loaded),
                owned_by: id.as_str(),
            });
        }
    }
    out
}

/// Unix seconds as RFC 3339 UTC (`2025-01-31T12:00:00Z`).
fn rfc3339(unix: u64) -> String {
    let t = i64::try_from(unix)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}
