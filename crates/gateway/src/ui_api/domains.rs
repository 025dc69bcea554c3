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
use serde::{Deserialize, Serialize};

use super::extract::Admin;
use super::json::UiJson;
use super::reply::{Done, DONE, OK};
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::domains::{normalize_domain, AllowedDomain};
use crate::store::ids::UserId;

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "AddDomainBody"))]
pub(crate) struct AddBody {
    domain: String,
}

/// One allowlisted domain.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "Domain"))]
pub(crate) struct DomainView {
    domain: String,
    added_by: Option<UserId>,
    created_at: String,
}

impl From<AllowedDomain> for DomainView {
    fn from(d: AllowedDomain) -> Self {
        DomainView {
            domain: d.domain,
            added_by: d.added_by,
            created_at: rfc3339(d.created_at),
        }
    }
}

/// `GET /_ui/api/domains`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct DomainList {
    count: usize,
    domains: Vec<DomainView>,
}

/// `POST /_ui/api/domains`: the domain as stored.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AddedDomain {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    domain: String,
}

/// `GET /_ui/api/domains`.
pub(crate) async fn list(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<DomainList>, GatewayError> {
    let domains: Vec<DomainView> = app
        .store()?
        .domains()
        .list()
        .await?
        .into_iter()
        .map(DomainView::from)
        .collect();
    Ok(Json(DomainList {
        count: domains.len(),
        domains,
    }))
}

/// `POST /_ui/api/domains`.
pub(crate) async fn add(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<AddBody>,
) -> Result<Json<AddedDomain>, GatewayError> {
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
    Ok(Json(AddedDomain { ok: OK, domain }))
}

/// `DELETE /_ui/api/domains/{domain}`.
pub(crate) async fn remove(
    State(app): State<AppState>,
    admin: Admin,
    Path(domain): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let domain = normalize_domain(&domain)
        .map_err(|_| GatewayError::NotFound("domain not on the allowlist".into()))?;
    if !app.store()?.domains().remove(&domain).await? {
        return Err(GatewayError::NotFound("domain not on the allowlist".into()));
    }
    tracing::info!(by = %admin.user.id, %domain, "domain removed from the allowlist");
    Ok(Json(DONE))
}
