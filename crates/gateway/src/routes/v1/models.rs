//! `GET /v1/models`: the models the caller can call now
//! ([`crate::providers::offer`]: primary's first, then each direct
//! provider's as `provider/model`; nothing an administrator switched off or
//! disabled in the model registry; for a key restricted to some models,
//! only those).
//!
//! Answered in the chat-completions list shape (spec 4.1); a client that
//! sends `anthropic-version` (the messages-format SDKs do) gets the
//! messages-format list shape instead.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Extension;
use axum::Json;
use serde_json::{json, Value};

use crate::auth::keys::AllowedModels;
use crate::auth::Caller;
use crate::config::RequestConfig;
use crate::error::GatewayError;
use crate::providers::offer;
use crate::state::AppState;

pub(super) async fn handle(
    State(app): State<AppState>,
    RequestConfig(rt): RequestConfig,
    caller: Caller,
    allowed: Option<Extension<AllowedModels>>,
    headers: HeaderMap,
) -> Result<Json<Value>, GatewayError> {
    let upstream = app.upstream(&rt);
    let user = match &caller {
        Caller::Proxy => None,
        Caller::User(owner) => Some(owner.user_id),
    };
    let mut models = offer::offered(&app.offer_sources(&upstream, &rt), user).await;
    // A key restricted to some models lists only those.
    if let Some(Extension(allowed)) = &allowed {
        models.retain(|m| allowed.allows(&m.id));
    }
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
                "owned_by": m.provider.as_str(),
            });
            if let Some(d) = m.description.as_deref().or(m.display_name.as_deref()) {
                entry["description"] = Value::String(d.to_owned());
            }
            entry
        })
        .collect();
    Ok(Json(json!({"object": "list", "data": data})))
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
