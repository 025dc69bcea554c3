//! `/_ui/api/guardrails/*` (issue 16; admin only; interfaces-full.md 5):
//! profiles (one configured call to the guardrail service), rules (a CEL
//! expression that chooses which requests the linked profiles check), the
//! expression check the editor calls as one types, and a profile tester.
//!
//! - `GET, POST /guardrails/profiles`; `GET, PUT, DELETE /guardrails/profiles/{id}`
//!   (secrets are write-only: `PUT` without them keeps the stored ones,
//!   `session_token: null` removes the token);
//! - `POST /guardrails/profiles/{id}/test {content, source}` -> `{action,
//!   violations, output, latency_ms}` (a service failure is 502 here: the
//!   admin is testing the profile, nothing fails open);
//! - `GET, POST /guardrails/rules`; `GET, PUT, DELETE /guardrails/rules/{id}`
//!   (an expression that does not compile is 400 `validation_error` naming
//!   its line and column);
//! - `POST /guardrails/validate {expression}` -> `{valid: true}` or
//!   `{valid: false, error: {message, line, column}}`.
//!
//! Every change applies to the next request here at once and on other
//! replicas at the `guardrails` announcement.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::Admin;
use super::json::UiJson;
use super::reply::{Done, DONE};
use crate::config::Secret;
use crate::error::GatewayError;
use crate::guardrails::engine::stored_target;
use crate::guardrails::expression::{ExpressionError, RuleExpression};
use crate::guardrails::service::{self, sign, Action, Source, Violation};
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::guardrails::{Profile, ProfileFields, Rule, RuleFields};
use crate::store::ids::{GuardrailProfileId, GuardrailRuleId};

const NAME_MAX: usize = 100;
const DESCRIPTION_MAX: usize = 1000;
const PROFILES_PER_RULE_MAX: usize = 20;
/// The tester's longest text, in characters.
const TEST_CONTENT_MAX: usize = 100_000;

/// A profile as the console shows it (no secret leaves).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailProfile"))]
pub(crate) struct ProfileView {
    id: GuardrailProfileId,
    name: String,
    guardrail_id: String,
    guardrail_version: String,
    region: String,
    access_key_id: String,
    has_secret: bool,
    enabled: bool,
    rule_ids: Vec<GuardrailRuleId>,
    created_at: String,
    updated_at: String,
}

impl From<Profile> for ProfileView {
    fn from(p: Profile) -> Self {
        ProfileView {
            id: p.id,
            name: p.name,
            guardrail_id: p.guardrail_id,
            guardrail_version: p.guardrail_version,
            region: p.region,
            access_key_id: p.access_key_id,
            has_secret: true,
            enabled: p.enabled,
            rule_ids: p.rule_ids,
            created_at: rfc3339(p.created_at),
            updated_at: rfc3339(p.updated_at),
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailProfileList"))]
pub(crate) struct ProfileList {
    profiles: Vec<ProfileView>,
}

/// `POST` (every field but `session_token` and `enabled` required) and
/// `PUT` (any field) of a profile.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailProfileBody"))]
pub(crate) struct ProfileBody {
    #[cfg_attr(test, ts(optional))]
    name: Option<String>,
    #[cfg_attr(test, ts(optional))]
    guardrail_id: Option<String>,
    #[cfg_attr(test, ts(optional))]
    guardrail_version: Option<String>,
    #[cfg_attr(test, ts(optional))]
    region: Option<String>,
    #[cfg_attr(test, ts(optional))]
    access_key_id: Option<String>,
    #[cfg_attr(test, ts(optional))]
    secret_access_key: Option<String>,
    #[serde(default, deserialize_with = "super::json::present")]
    #[cfg_attr(test, ts(optional, type = "string | null"))]
    session_token: Option<Option<String>>,
    #[cfg_attr(test, ts(optional))]
    enabled: Option<bool>,
}

/// A rule as the console shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailRule"))]
pub(crate) struct RuleView {
    id: GuardrailRuleId,
    name: String,
    description: String,
    cel_expression: String,
    #[cfg_attr(test, ts(type = "\"Input\" | \"Output\" | \"Both\""))]
    apply_to: String,
    sampling_rate: i64,
    enabled: bool,
    profile_ids: Vec<GuardrailProfileId>,
    created_at: String,
    updated_at: String,
}

impl From<Rule> for RuleView {
    fn from(r: Rule) -> Self {
        RuleView {
            id: r.id,
            name: r.name,
            description: r.description,
            cel_expression: r.cel_expression,
            apply_to: r.apply_to,
            sampling_rate: r.sampling_rate,
            enabled: r.enabled,
            profile_ids: r.profile_ids,
            created_at: rfc3339(r.created_at),
            updated_at: rfc3339(r.updated_at),
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailRuleList"))]
pub(crate) struct RuleList {
    rules: Vec<RuleView>,
}

/// `POST` (`name`, `cel_expression`, `apply_to`, `sampling_rate` and
/// `profile_ids` required) and `PUT` (any field) of a rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailRuleBody"))]
pub(crate) struct RuleBody {
    #[cfg_attr(test, ts(optional))]
    name: Option<String>,
    #[cfg_attr(test, ts(optional))]
    description: Option<String>,
    #[cfg_attr(test, ts(optional))]
    cel_expression: Option<String>,
    #[cfg_attr(test, ts(optional, type = "\"Input\" | \"Output\" | \"Both\""))]
    apply_to: Option<String>,
    #[cfg_attr(test, ts(optional))]
    sampling_rate: Option<i64>,
    #[cfg_attr(test, ts(optional))]
    enabled: Option<bool>,
    #[cfg_attr(test, ts(optional))]
    profile_ids: Option<Vec<GuardrailProfileId>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailValidateBody"))]
pub(crate) struct ValidateBody {
    expression: String,
}

/// `POST /guardrails/validate`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailValidation"))]
pub(crate) struct Validation {
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    error: Option<ExpressionError>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailTestBody"))]
pub(crate) struct TestBody {
    content: String,
    source: Source,
}

/// `POST /guardrails/profiles/{id}/test`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailTestResult"))]
pub(crate) struct TestResult {
    action: Action,
    violations: Vec<Violation>,
    /// The service's text: the masked content of a redaction, its message
    /// for a block, the content itself when nothing was found.
    output: String,
    latency_ms: u64,
}

/// A name: trimmed, 1 to [`NAME_MAX`] characters, no control characters.
fn valid_name(name: &str) -> Result<String, GatewayError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > NAME_MAX || name.chars().any(char::is_control) {
        return Err(GatewayError::validation(format!(
            "name: 1 to {NAME_MAX} characters, no control characters"
        )));
    }
    Ok(name.to_owned())
}

fn required<T>(value: Option<T>, field: &str) -> Result<T, GatewayError> {
    value.ok_or_else(|| GatewayError::validation(format!("{field}: required")))
}

/// AWS access key ids: 16 to 128 upper-case letters and digits.
fn valid_access_key_id(id: &str) -> bool {
    (16..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// The profile `body` describes, over `base` (a stored profile on `PUT`).
fn profile_fields(
    body: ProfileBody,
    base: Option<&Profile>,
) -> Result<ProfileFields, GatewayError> {
    let pick = |new: Option<String>, old: Option<&String>, field: &str| {
        new.or_else(|| old.cloned())
            .map(|v| v.trim().to_owned())
            .ok_or_else(|| GatewayError::validation(format!("{field}: required")))
    };
    let name = valid_name(&pick(body.name, base.map(|b| &b.name), "name")?)?;
    let guardrail_id = pick(
        body.guardrail_id,
        base.map(|b| &b.guardrail_id),
        "guardrail_id",
    )?;
    if !sign::valid_guardrail_id(&guardrail_id) {
        return Err(GatewayError::validation(
            "guardrail_id: the guardrail's id (lower-case letters and digits) or its ARN",
        ));
    }
    let guardrail_version = pick(
        body.guardrail_version,
        base.map(|b| &b.guardrail_version),
        "guardrail_version",
    )?;
    if !sign::valid_version(&guardrail_version) {
        return Err(GatewayError::validation(
            "guardrail_version: DRAFT or a version number from 1 to 99999999",
        ));
    }
    let region = pick(body.region, base.map(|b| &b.region), "region")?;
    if !sign::valid_region(&region) {
        return Err(GatewayError::validation(
            "region: an AWS region such as us-east-1",
        ));
    }
    let access_key_id = pick(
        body.access_key_id,
        base.map(|b| &b.access_key_id),
        "access_key_id",
    )?;
    if !valid_access_key_id(&access_key_id) {
        return Err(GatewayError::validation(
            "access_key_id: 16 to 128 upper-case letters and digits",
        ));
    }
    let secret_access_key = match body.secret_access_key.map(|s| s.trim().to_owned()) {
        Some(s) if s.is_empty() || s.len() > 256 => {
            return Err(GatewayError::validation(
                "secret_access_key: 1 to 256 characters",
            ))
        }
        Some(s) => Some(Secret::new(s)),
        None if base.is_none() => {
            return Err(GatewayError::validation("secret_access_key: required"))
        }
        None => None,
    };
    let session_token = match body.session_token {
        Some(Some(t)) if t.trim().is_empty() || t.len() > 4096 => {
            return Err(GatewayError::validation(
                "session_token: 1 to 4096 characters, or null to remove it",
            ))
        }
        Some(t) => Some(t.map(|t| Secret::new(t.trim().to_owned()))),
        None => None,
    };
    Ok(ProfileFields {
        name,
        guardrail_id,
        guardrail_version,
        region,
        access_key_id,
        secret_access_key,
        session_token,
        enabled: body.enabled.or(base.map(|b| b.enabled)).unwrap_or(true),
    })
}

/// The rule `body` describes, over `base` (a stored rule on `PUT`).
fn rule_fields(body: RuleBody, base: Option<&Rule>) -> Result<RuleFields, GatewayError> {
    let name = valid_name(&required(
        body.name.or_else(|| base.map(|b| b.name.clone())),
        "name",
    )?)?;
    let description = body
        .description
        .or_else(|| base.map(|b| b.description.clone()))
        .unwrap_or_default()
        .trim()
        .to_owned();
    if description.chars().count() > DESCRIPTION_MAX {
        return Err(GatewayError::validation(format!(
            "description: at most {DESCRIPTION_MAX} characters"
        )));
    }
    let cel_expression = required(
        body.cel_expression
            .or_else(|| base.map(|b| b.cel_expression.clone())),
        "cel_expression",
    )?;
    RuleExpression::compile(&cel_expression)
        .map_err(|e| GatewayError::validation(format!("cel_expression: {e}")))?;
    let apply_to = required(
        body.apply_to.or_else(|| base.map(|b| b.apply_to.clone())),
        "apply_to",
    )?;
    if !matches!(apply_to.as_str(), "Input" | "Output" | "Both") {
        return Err(GatewayError::validation("apply_to: Input, Output or Both"));
    }
    let sampling_rate = required(
        body.sampling_rate.or(base.map(|b| b.sampling_rate)),
        "sampling_rate",
    )?;
    if !(0..=100).contains(&sampling_rate) {
        return Err(GatewayError::validation(
            "sampling_rate: a percentage from 0 to 100",
        ));
    }
    let mut profile_ids = required(
        body.profile_ids
            .or_else(|| base.map(|b| b.profile_ids.clone())),
        "profile_ids",
    )?;
    profile_ids.sort();
    profile_ids.dedup();
    if profile_ids.len() > PROFILES_PER_RULE_MAX {
        return Err(GatewayError::validation(format!(
            "profile_ids: at most {PROFILES_PER_RULE_MAX} profiles"
        )));
    }
    Ok(RuleFields {
        name,
        description,
        cel_expression,
        apply_to,
        sampling_rate,
        enabled: body.enabled.or(base.map(|b| b.enabled)).unwrap_or(true),
        profile_ids,
    })
}

fn profile_id(raw: &str) -> Result<GuardrailProfileId, GatewayError> {
    raw.parse()
        .map_err(|_| GatewayError::NotFound("guardrail profile not found".into()))
}

fn rule_id(raw: &str) -> Result<GuardrailRuleId, GatewayError> {
    raw.parse()
        .map_err(|_| GatewayError::NotFound("guardrail rule not found".into()))
}

/// Apply a change here at once (other replicas reload on the announcement).
async fn reload(app: &AppState) -> Result<(), GatewayError> {
    app.guardrails().reload(app.store()?).await?;
    Ok(())
}

/// `GET /guardrails/profiles`.
pub(crate) async fn profiles(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<ProfileList>, GatewayError> {
    let profiles = app.store()?.guardrails().profiles().await?;
    Ok(Json(ProfileList {
        profiles: profiles.into_iter().map(ProfileView::from).collect(),
    }))
}

/// `POST /guardrails/profiles`.
pub(crate) async fn create_profile(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<ProfileBody>,
) -> Result<(StatusCode, Json<ProfileView>), GatewayError> {
    let fields = profile_fields(body, None)?;
    let profile = app.store()?.guardrails().create_profile(fields).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, profile = %profile.name, "guardrail profile added");
    Ok((StatusCode::CREATED, Json(profile.into())))
}

/// `GET /guardrails/profiles/{id}`.
pub(crate) async fn profile(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<ProfileView>, GatewayError> {
    let profile = app.store()?.guardrails().profile(profile_id(&id)?).await?;
    Ok(Json(profile.into()))
}

/// `PUT /guardrails/profiles/{id}`.
pub(crate) async fn update_profile(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<ProfileBody>,
) -> Result<Json<ProfileView>, GatewayError> {
    let id = profile_id(&id)?;
    let repo = app.store()?.guardrails();
    let stored = repo.profile(id).await?;
    let fields = profile_fields(body, Some(&stored))?;
    let profile = repo.update_profile(id, fields).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, profile = %profile.name, "guardrail profile changed");
    Ok(Json(profile.into()))
}

/// `DELETE /guardrails/profiles/{id}`.
pub(crate) async fn delete_profile(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let id = profile_id(&id)?;
    app.store()?.guardrails().delete_profile(id).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, profile_id = %id, "guardrail profile deleted");
    Ok(Json(DONE))
}

/// `POST /guardrails/profiles/{id}/test`.
pub(crate) async fn test_profile(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<TestBody>,
) -> Result<Json<TestResult>, GatewayError> {
    let id = profile_id(&id)?;
    if body.content.trim().is_empty() || body.content.chars().count() > TEST_CONTENT_MAX {
        return Err(GatewayError::validation(format!(
            "content: 1 to {TEST_CONTENT_MAX} characters"
        )));
    }
    let repo = app.store()?.guardrails();
    let target = stored_target(repo.profile(id).await?, repo.keys(id).await?);
    let started = Instant::now();
    let verdict = service::apply(
        app.http(),
        app.config().upstream.guardrail_endpoint.as_deref(),
        &target,
        body.source,
        &[body.content.as_str()],
        app.runtime().guardrail_timeout,
    )
    .await
    .map_err(|e| GatewayError::upstream(StatusCode::BAD_GATEWAY, e.to_string()))?;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let output = if verdict.outputs.is_empty() {
        body.content
    } else {
        verdict.outputs.join("\n")
    };
    Ok(Json(TestResult {
        action: verdict.action,
        violations: verdict.violations,
        output,
        latency_ms,
    }))
}

/// `GET /guardrails/rules`.
pub(crate) async fn rules(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<RuleList>, GatewayError> {
    let rules = app.store()?.guardrails().rules().await?;
    Ok(Json(RuleList {
        rules: rules.into_iter().map(RuleView::from).collect(),
    }))
}

/// `POST /guardrails/rules`.
pub(crate) async fn create_rule(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<RuleBody>,
) -> Result<(StatusCode, Json<RuleView>), GatewayError> {
    let fields = rule_fields(body, None)?;
    let rule = app.store()?.guardrails().create_rule(fields).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, rule = %rule.name, "guardrail rule added");
    Ok((StatusCode::CREATED, Json(rule.into())))
}

/// `GET /guardrails/rules/{id}`.
pub(crate) async fn rule(
    State(app): State<AppState>,
    _admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<RuleView>, GatewayError> {
    let rule = app.store()?.guardrails().rule(rule_id(&id)?).await?;
    Ok(Json(rule.into()))
}

/// `PUT /guardrails/rules/{id}`.
pub(crate) async fn update_rule(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
    UiJson(body): UiJson<RuleBody>,
) -> Result<Json<RuleView>, GatewayError> {
    let id = rule_id(&id)?;
    let repo = app.store()?.guardrails();
    let stored = repo.rule(id).await?;
    let fields = rule_fields(body, Some(&stored))?;
    let rule = repo.update_rule(id, fields).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, rule = %rule.name, "guardrail rule changed");
    Ok(Json(rule.into()))
}

/// `DELETE /guardrails/rules/{id}`.
pub(crate) async fn delete_rule(
    State(app): State<AppState>,
    admin: Admin,
    Path(id): Path<String>,
) -> Result<Json<Done>, GatewayError> {
    let id = rule_id(&id)?;
    app.store()?.guardrails().delete_rule(id).await?;
    reload(&app).await?;
    tracing::info!(by = %admin.user.id, rule_id = %id, "guardrail rule deleted");
    Ok(Json(DONE))
}

/// `POST /guardrails/validate`.
pub(crate) async fn validate(
    _admin: Admin,
    UiJson(body): UiJson<ValidateBody>,
) -> Json<Validation> {
    Json(match RuleExpression::compile(&body.expression) {
        Ok(_) => Validation {
            valid: true,
            error: None,
        },
        Err(e) => Validation {
            valid: false,
            error: Some(e),
        },
    })
}
