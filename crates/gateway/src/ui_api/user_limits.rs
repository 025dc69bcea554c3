//! An admin's budget and rate limits per user (issue 21):
//! `GET /_ui/api/admin/users/{id}/limits` -> `{budget_usd, budget_period,
//! rpm_limit, tpm_limit}` and `PATCH` of any of them (`null` removes) ->
//! `{ok: true}`. They apply to every key of the user together (a request
//! must fit both its key's limits and its user's), at once on this replica
//! and, with PostgreSQL, within a second on the others.

use axum::extract::{Path, State};
use axum::Json;

use super::extract::Admin;
use super::json::UiJson;
use super::limit_fields::{LimitFields, LimitView};
use super::reply::{Done, DONE};
use super::users::parse_id;
use crate::error::GatewayError;
use crate::state::AppState;

/// The `PATCH` body: the limit fields and nothing else.
#[derive(serde::Deserialize)]
pub(crate) struct Body {
    #[serde(flatten)]
    limits: LimitFields,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// `GET /_ui/api/admin/users/{id}/limits`.
pub(crate) async fn get(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<LimitView>, GatewayError> {
    let columns = app.store()?.users().limits(parse_id(&id)?).await?;
    Ok(Json(LimitView::from(&columns)))
}

/// `PATCH /_ui/api/admin/users/{id}/limits`.
pub(crate) async fn update(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(Body { limits: body, rest }): UiJson<Body>,
) -> Result<Json<Done>, GatewayError> {
    if let Some(k) = rest.keys().next() {
        return Err(GatewayError::validation(format!("{k}: unknown field")));
    }
    body.validate()?;
    let id = parse_id(&id)?;
    let columns = app.store()?.users().set_limits(id, &body.change()).await?;
    // Other replicas hear of each of the user's keys from the store.
    app.key_cache().invalidate_user(id);
    tracing::info!(
        by = %admin.user.id,
        user_id = %id,
        budget_usd = ?columns.budget_usd,
        budget_period = ?columns.budget_period,
        rpm_limit = ?columns.rpm_limit,
        tpm_limit = ?columns.tpm_limit,
        "user limits changed"
    );
    Ok(Json(DONE))
}
