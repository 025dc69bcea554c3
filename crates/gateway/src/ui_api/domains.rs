//! The SSO domain allowlist (spec 4.3), Admin only:
//!
//! - `GET /_ui/api/domains` -> `{domains: [{domain, added_by, created_at}], count}`;
//! - `POST /_ui/api/domains {domain}` -> `{ok: true, domain}` (normalised:
//!   lower case, no `@`); 409 `conflict` when listed already;
//! - `DELETE /_ui/api/domains/{domain}` -> `{ok: true}`; 404 when not listed.
//!
//! The rule that uses the list is in [`crate::store::domains`].

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::Admin;
use super::json::UiJson;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::domains::normalize_domain;

#[derive(Deserialize)]
pub struct AddBody {
    domain: String,
}

/// `GET /_ui/api/domains`.
pub async fn list(State(app): State<AppState>, _admin: Admin) -> Result<Json<Value>, GatewayError> {
    let domains = app.store()?.domains().list().await?;
    let list: Vec<Value> = domains
        .iter()
        .map(|d| {
            json!({
                "domain": d.domain,
                "added_by": d.added_by,
                "created_at": rfc3339(d.created_at),
            })
        })
        .collect();
    Ok(Json(json!({"count": list.len(), "domains": list})))
}

/// `POST /_ui/api/domains`.
pub async fn add(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<AddBody>,
) -> Result<Json<Value>, GatewayError> {
    let domain = normalize_domain(&body.domain).map_err(GatewayError::Validation)?;
    if !app
        .store()?
        .domains()
        .add(&domain, Some(admin.user.id))
        .await?
    {
        return Err(GatewayError::Conflict(format!(
            "{domain} is already on the allowlist"
        )));
    }
    tracing::info!(by = %admin.user.id, %domain, "domain allowlisted");
    Ok(Json(json!({"ok": true, "domain": domain})))
}

/// `DELETE /_ui/api/domains/{domain}`.
pub async fn remove(
    State(app): State<AppState>,
    admin: Admin,
    Path(domain): Path<String>,
) -> Result<Json<Value>, GatewayError> {
    let domain = normalize_domain(&domain)
        .map_err(|_| GatewayError::NotFound("domain not on the allowlist".into()))?;
    if !app.store()?.domains().remove(&domain).await? {
        return Err(GatewayError::NotFound("domain not on the allowlist".into()));
    }
    tracing::info!(by = %admin.user.id, %domain, "domain removed from the allowlist");
    Ok(Json(json!({"ok": true})))
}
