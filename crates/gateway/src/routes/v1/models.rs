//! `GET /v1/models`: the models clients can use, under the ids the upstream
//! listing gives (each accepted as a model name as it is). Answered in the
//! chat-completions list shape (spec 4.1); a client that sends
//! `anthropic-version` (the messages-format SDKs do) gets the messages-format
//! list shape instead.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use crate::state::AppState;

/// `owned_by` of the primary provider's models.
const OWNER: &str = "primary";

pub async fn handle(State(app): State<AppState>, headers: HeaderMap) -> Json<Value> {
    let models = app.models().list();
    let created = app.models().loaded_at_unix();
    if headers.contains_key("anthropic-version") {
        let created_at = rfc3339(created);
        let data: Vec<Value> = models
            .iter()
            .map(|m| {
                json!({
                    "type": "model",
                    "id": m.id,
                    "display_name": m.name.as_deref().unwrap_or(&m.id),
                    "created_at": created_at,
                })
            })
            .collect();
        return Json(json!({
            "data": data,
            "has_more": false,
            "first_id": models.first().map(|m| m.id.as_str()),
            "last_id": models.last().map(|m| m.id.as_str()),
        }));
    }
    let data: Vec<Value> = models
        .iter()
        .map(|m| {
            let mut entry = json!({
                "id": m.id,
                "object": "model",
                "created": created,
                "owned_by": OWNER,
            });
            if let Some(d) = m.description.as_deref().or(m.name.as_deref()) {
                entry["description"] = Value::String(d.to_owned());
            }
            entry
        })
        .collect();
    Json(json!({"object": "list", "data": data}))
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
