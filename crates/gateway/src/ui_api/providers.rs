//! The signed-in user's providers (spec 2.5, 4.4.3; interfaces-full.md 2),
//! session + CSRF, each user sees and changes only their own:
//!
//! - `GET /_ui/api/providers/registry` -> `{providers: [{id, display_name,
//!   auth_kinds, enabled, multi_account}]}`, all five;
//! - `GET /_ui/api/providers/status` -> `{providers: [{id, enabled,
//!   connected, accounts, pool_available, expires_at}]}`;
//! - `GET /_ui/api/providers/{provider}/connect` -> how to connect it
//!   (`device` for `primary`, `api_key` with its fields for
//!   `completions_vendor` and `custom`);
//! - `GET /_ui/api/providers/{provider}/accounts` -> `{accounts: [account]}`;
//! - `POST /_ui/api/providers/{provider}/accounts {api_key, base_url?,
//!   label?, priority?}` -> 201 the account. The key is tried with one model
//!   listing first; a refusal is 400 `validation_error` carrying the
//!   provider's answer. `base_url` is required for `custom` and checked by
//!   [`crate::upstream::ssrf`];
//! - `PATCH /_ui/api/providers/{provider}/accounts/{id}` with any of
//!   `label`, `priority`, `api_key`, `base_url` -> the account (a new key or
//!   base is tried first);
//! - `DELETE /_ui/api/providers/{provider}?account_id=` -> `{ok: true,
//!   removed}`: one account, or all of the caller's for the provider;
//! - `GET` / `POST /_ui/api/providers/priority` -> `{order}`: the caller's
//!   provider order.
//!
//! An account is `{id, provider, label, priority, base_url, auth_kind,
//! status, expires_at, cooldown_until, last_error, last_used, created_at,
//! source}`. Every change reaches the caller's next request at once on this
//! replica and, with PostgreSQL, within a second on the others.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::{Admin, SessionUser};
use super::json::UiJson;
use super::provider_signin::code_host::web_flow_configured;
use crate::config::Secret;
use crate::error::GatewayError;
use crate::providers::cooldowns::Cooldowns;
use crate::providers::direct::{models, Auth, DirectProvider};
use crate::providers::id::ProviderId;
use crate::providers::Accounts;
use crate::state::AppState;
use crate::store::clock::{now, rfc3339};
use crate::store::ids::{ProviderAccountId, UserId};
use crate::store::provider_accounts::{
    AccountChange, NewAccount, ProviderAccount, DEFAULT_PRIORITY,
};
use crate::upstream::ssrf::check_user_url;

/// Longest account label, in characters.
const LABEL_MAX: usize = 100;
/// Longest API key accepted, in bytes.
const KEY_MAX: usize = 4096;
/// The priority range.
const PRIORITY_MAX: i64 = 10_000;

/// How a provider is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub(crate) enum AuthKind {
    Device,
    OauthPkce,
    OauthCodeHost,
    ApiKey,
}

/// One provider of the registry.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RegistryProvider {
    id: ProviderId,
    display_name: &'static str,
    auth_kinds: Vec<AuthKind>,
    enabled: bool,
    multi_account: bool,
}

/// `GET /_ui/api/providers/registry`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ProviderRegistry {
    providers: Vec<RegistryProvider>,
}

/// Where the caller stands with one provider.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ProviderState {
    id: ProviderId,
    enabled: bool,
    connected: bool,
    accounts: usize,
    pool_available: bool,
    expires_at: Option<String>,
}

/// `GET /_ui/api/providers/status`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ProviderStatusList {
    providers: Vec<ProviderState>,
}

/// A field of an API-key connection form.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ConnectField {
    name: &'static str,
    label: &'static str,
    secret: bool,
    required: bool,
}

/// `GET /_ui/api/providers/{provider}/connect`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "auth_kind", rename_all = "snake_case")]
pub(crate) enum ConnectInfo {
    Device {
        provider: ProviderId,
        setup_url: &'static str,
    },
    ApiKey {
        provider: ProviderId,
        fields: Vec<ConnectField>,
    },
    /// `auth_url` starts the sign-in; its JSON answer names the script.
    OauthPkce {
        provider: ProviderId,
        auth_url: &'static str,
        relay_script_url: &'static str,
    },
    /// `auth_url` (the web flow) is null when the gateway has no OAuth app
    /// on the code host; the device flow always works.
    OauthCodeHost {
        provider: ProviderId,
        auth_url: Option<&'static str>,
        device_code_url: &'static str,
    },
}

/// Where an account stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub(crate) enum AccountStatus {
    Active,
    Expired,
    Cooldown,
    Error,
}

/// Whose an account is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub(crate) enum AccountSource {
    User,
    Pool,
}

/// One provider account, without its secret.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "Account"))]
pub(crate) struct AccountView {
    id: ProviderAccountId,
    #[cfg_attr(test, ts(type = "ProviderId"))]
    provider: String,
    label: String,
    priority: i64,
    base_url: Option<String>,
    #[cfg_attr(test, ts(type = "AuthKind"))]
    auth_kind: String,
    status: AccountStatus,
    expires_at: Option<String>,
    cooldown_until: Option<String>,
    last_error: Option<String>,
    last_used: Option<String>,
    created_at: String,
    source: AccountSource,
    /// A pool account an admin switched off, or a user's (always on).
    enabled: bool,
}

impl From<ProviderAccount> for AccountView {
    fn from(a: ProviderAccount) -> Self {
        let status = if a.expires_at.is_some_and(|at| at <= now()) {
            AccountStatus::Expired
        } else if a.last_error.is_some() {
            AccountStatus::Error
        } else {
            AccountStatus::Active
        };
        AccountView {
            id: a.id,
            provider: a.provider,
            label: a.label,
            priority: a.priority,
            base_url: a.base_url,
            auth_kind: a.auth_kind,
            status,
            expires_at: a.expires_at.map(rfc3339),
            cooldown_until: None,
            last_error: a.last_error,
            last_used: a.last_used_at.map(rfc3339),
            created_at: rfc3339(a.created_at),
            source: if a.pool {
                AccountSource::Pool
            } else {
                AccountSource::User
            },
            enabled: a.enabled,
        }
    }
}

impl AccountView {
    /// The account as this replica sees it: resting after a 429 until the
    /// time the cooldowns say, last used when it last answered here.
    fn seen_by(a: ProviderAccount, accounts: &Accounts) -> Self {
        let resting = cooldown_until(accounts.cooldowns(), a.id);
        // A use on this replica not written to the store yet.
        let unsaved = accounts.rate_limits().unsaved_use(a.id);
        let mut view = AccountView::from(a);
        if let Some(at) = unsaved {
            view.last_used = Some(rfc3339(at));
        }
        if resting.is_some() && view.status == AccountStatus::Active {
            view.status = AccountStatus::Cooldown;
        }
        view.cooldown_until = resting;
        view
    }
}

/// When account `id` may be used again (RFC 3339), if it rests now.
pub(crate) fn cooldown_until(cooldowns: &Cooldowns, id: ProviderAccountId) -> Option<String> {
    let until = cooldowns.resting_until(id)?;
    let left = until.saturating_duration_since(std::time::Instant::now());
    let secs = (std::time::SystemTime::now() + left)
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Some(rfc3339(i64::try_from(secs).unwrap_or(i64::MAX)))
}

/// `GET /_ui/api/providers/{provider}/accounts`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AccountList {
    accounts: Vec<AccountView>,
}

/// `POST /_ui/api/providers/{provider}/accounts`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct NewAccountBody {
    #[cfg_attr(test, ts(type = "string"))]
    api_key: Secret,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    base_url: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    label: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    priority: Option<i64>,
}

/// `PATCH /_ui/api/providers/{provider}/accounts/{id}`.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AccountPatchBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    label: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    priority: Option<i64>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable, type = "string"))]
    api_key: Option<Secret>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    base_url: Option<String>,
}

/// `DELETE /_ui/api/providers/{provider}`'s query.
#[derive(Debug, Deserialize)]
pub(crate) struct DeleteQuery {
    account_id: Option<String>,
}

/// The change `patch` asks of `current`, checked: label and priority
/// validated; a new key or base URL (API-key accounts only) tried with one
/// model listing first, with the stored key when only the base changes.
async fn checked_change(
    app: &AppState,
    provider: ProviderId,
    current: &ProviderAccount,
    patch: &AccountPatchBody,
) -> Result<AccountChange, GatewayError> {
    let mut change = AccountChange {
        label: patch
            .label
            .as_deref()
            .map(|l| valid_label(Some(l)))
            .transpose()?,
        priority: valid_priority(patch.priority)?,
        ..AccountChange::default()
    };
    if patch.api_key.is_none() && patch.base_url.is_none() {
        return Ok(change);
    }
    if current.auth_kind != "api_key" {
        return Err(GatewayError::validation(
            "api_key and base_url change only on API-key accounts",
        ));
    }
    let base = match patch.base_url.as_deref() {
        Some(raw) => valid_base(app, provider, Some(raw)).await?,
        None => current.base_url.clone(),
    };
    let key = match patch.api_key.as_ref().map(valid_key).transpose()? {
        Some(k) => k,
        None => app
            .store()?
            .provider_accounts()
            .access_token(current.id)
            .await?
            .ok_or_else(|| GatewayError::NotFound("account not found".into()))?,
    };
    try_key(app, provider, &key, base.as_deref()).await?;
    change.base_url = patch.base_url.is_some().then_some(base);
    change.access_token = patch.api_key.is_some().then_some(key);
    Ok(change)
}

/// `DELETE /_ui/api/providers/{provider}`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct Removed {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    removed: u64,
}

/// The caller's provider order (`GET`, `POST /_ui/api/providers/priority`).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ProviderOrder {
    #[cfg_attr(test, ts(type = "Array<ProviderId>"))]
    order: Vec<String>,
}

fn display_name(id: ProviderId) -> &'static str {
    match id {
        ProviderId::Primary => "Code assistant (primary)",
        ProviderId::MessagesVendor => "Messages API vendor",
        ProviderId::CompletionsVendor => "Chat completions vendor",
        ProviderId::AssistantVendor => "Assistant vendor",
        ProviderId::Custom => "Custom OpenAI-compatible server",
    }
}

fn auth_kinds(id: ProviderId) -> Vec<AuthKind> {
    match id {
        ProviderId::Primary => vec![AuthKind::Device],
        ProviderId::MessagesVendor => vec![AuthKind::OauthPkce, AuthKind::ApiKey],
        ProviderId::CompletionsVendor | ProviderId::Custom => vec![AuthKind::ApiKey],
        ProviderId::AssistantVendor => vec![AuthKind::OauthCodeHost],
    }
}

/// The provider of a path, or 404.
fn provider(raw: &str) -> Result<ProviderId, GatewayError> {
    ProviderId::parse(raw).ok_or_else(|| GatewayError::NotFound(format!("no provider '{raw}'")))
}

/// A direct provider connected by API key (`primary` has its own flow).
fn key_provider(raw: &str) -> Result<ProviderId, GatewayError> {
    match provider(raw)? {
        id @ (ProviderId::CompletionsVendor | ProviderId::Custom | ProviderId::MessagesVendor) => {
            Ok(id)
        }
        ProviderId::Primary => Err(GatewayError::validation(
            "primary connects by the device flow: POST /_ui/api/upstream/setup",
        )),
        id => Err(GatewayError::validation(format!(
            "{id} is not connected by API key"
        ))),
    }
}

fn valid_label(label: Option<&str>) -> Result<String, GatewayError> {
    let label = label.unwrap_or("").trim();
    if label.chars().count() > LABEL_MAX || label.chars().any(char::is_control) {
        return Err(GatewayError::validation(format!(
            "label: at most {LABEL_MAX} characters, no control characters"
        )));
    }
    Ok(label.to_owned())
}

fn valid_priority(priority: Option<i64>) -> Result<Option<i64>, GatewayError> {
    match priority {
        Some(p) if !(0..=PRIORITY_MAX).contains(&p) => Err(GatewayError::validation(format!(
            "priority: expected 0 to {PRIORITY_MAX}"
        ))),
        other => Ok(other),
    }
}

fn valid_key(key: &Secret) -> Result<Secret, GatewayError> {
    let k = key.expose().trim();
    if k.is_empty() || k.len() > KEY_MAX || k.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(GatewayError::validation(format!(
            "api_key: 1 to {KEY_MAX} characters without spaces"
        )));
    }
    Ok(Secret::new(k))
}

/// The base URL an account of `id` uses: a `custom` account must give one;
/// any given one passes the SSRF guard.
async fn valid_base(
    app: &AppState,
    id: ProviderId,
    base_url: Option<&str>,
) -> Result<Option<String>, GatewayError> {
    match base_url.map(str::trim).filter(|u| !u.is_empty()) {
        None if id == ProviderId::Custom => Err(GatewayError::validation(
            "base_url: required for custom (the server's OpenAI-compatible base, e.g. https://llm.example.com/v1)",
        )),
        None => Ok(None),
        Some(raw) => {
            let allow_private = app.runtime().custom_allow_private_networks;
            check_user_url(raw, allow_private)
                .await
                .map(Some)
                .map_err(|e| GatewayError::Validation(format!("base_url: {e}")))
        }
    }
}

/// Try a key with one model listing; the provider's refusal as a
/// validation error.
async fn try_key(
    app: &AppState,
    id: ProviderId,
    key: &Secret,
    base_url: Option<&str>,
) -> Result<(), GatewayError> {
    let config = app.config();
    let base = match (id, base_url) {
        (_, Some(base)) => base.to_owned(),
        (ProviderId::MessagesVendor, None) => config.upstream.messages_vendor_base_url.clone(),
        (_, None) => config.upstream.completions_vendor_base_url.clone(),
    };
    let auth = match id {
        ProviderId::MessagesVendor => Auth::ApiKey(key.clone()),
        _ => Auth::Bearer(Some(key.clone())),
    };
    let mut probe = DirectProvider::new(id, base, auth);
    if base_url.is_some() {
        // Resolved again at connect time, behind the guard.
        probe = probe.user_given(app.accounts().user_base());
    }
    let rt = app.runtime();
    models::fetch(&app.upstream(&rt), &probe)
        .await
        .map(|_| ())
        .map_err(|e| {
            GatewayError::Validation(format!(
                "api_key: the provider refused it or could not be reached: {e}"
            ))
        })
}

/// `GET /_ui/api/providers/registry`.
pub(crate) async fn registry(
    State(app): State<AppState>,
    _who: SessionUser,
) -> Json<ProviderRegistry> {
    let switches = app.accounts().switches();
    Json(ProviderRegistry {
        providers: ProviderId::ALL
            .into_iter()
            .map(|id| RegistryProvider {
                id,
                display_name: display_name(id),
                auth_kinds: auth_kinds(id),
                enabled: !switches.is_disabled(id),
                multi_account: id != ProviderId::Primary,
            })
            .collect(),
    })
}

/// `GET /_ui/api/providers/status`.
pub(crate) async fn status(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<ProviderStatusList>, GatewayError> {
    let store = app.store()?;
    let mine = store
        .provider_accounts()
        .list_for_user(who.user.id, None)
        .await?;
    let has_primary = store.upstream_credentials().exists(who.user.id).await?;
    let pool = store.provider_accounts().list_pool().await?;
    let providers = ProviderId::ALL
        .into_iter()
        .map(|id| {
            let (count, expires_at) = if id == ProviderId::Primary {
                (usize::from(has_primary), None)
            } else {
                let active: Vec<&ProviderAccount> = mine
                    .iter()
                    .filter(|a| a.provider == id.as_str() && a.enabled)
                    .collect();
                let soonest = active.iter().filter_map(|a| a.expires_at).min();
                (active.len(), soonest.map(rfc3339))
            };
            ProviderState {
                id,
                enabled: !app.accounts().switches().is_disabled(id),
                connected: count > 0,
                accounts: count,
                pool_available: pool.iter().any(|a| a.enabled && a.provider == id.as_str()),
                expires_at,
            }
        })
        .collect();
    Ok(Json(ProviderStatusList { providers }))
}

/// `GET /_ui/api/providers/{provider}/connect`.
pub(crate) async fn connect(
    State(app): State<AppState>,
    _who: SessionUser,
    Path(raw): Path<String>,
) -> Result<Json<ConnectInfo>, GatewayError> {
    let id = provider(&raw)?;
    let api_key = ConnectField {
        name: "api_key",
        label: "API key",
        secret: true,
        required: true,
    };
    Ok(Json(match id {
        ProviderId::Primary => ConnectInfo::Device {
            provider: id,
            setup_url: "/_ui/api/upstream/setup",
        },
        ProviderId::Custom => ConnectInfo::ApiKey {
            provider: id,
            fields: vec![
                ConnectField {
                    name: "base_url",
                    label: "Base URL (OpenAI-compatible, e.g. https://llm.example.com/v1)",
                    secret: false,
                    required: true,
                },
                ConnectField {
                    required: false,
                    ..api_key
                },
            ],
        },
        ProviderId::CompletionsVendor => ConnectInfo::ApiKey {
            provider: id,
            fields: vec![api_key],
        },
        // An API key works too (POST .../accounts); the console offers the sign-in.
        ProviderId::MessagesVendor => ConnectInfo::OauthPkce {
            provider: id,
            auth_url: "/_ui/api/providers/messages_vendor/auth",
            relay_script_url: "/_ui/api/providers/messages_vendor/relay-script",
        },
        ProviderId::AssistantVendor => ConnectInfo::OauthCodeHost {
            provider: id,
            auth_url: web_flow_configured(&app)
                .then_some("/_ui/api/providers/assistant_vendor/auth"),
            device_code_url: "/_ui/api/assistant/device-code",
        },
    }))
}

/// `GET /_ui/api/providers/{provider}/accounts`.
pub(crate) async fn accounts(
    State(app): State<AppState>,
    who: SessionUser,
    Path(raw): Path<String>,
) -> Result<Json<AccountList>, GatewayError> {
    let id = provider(&raw)?;
    let list = app
        .store()?
        .provider_accounts()
        .list_for_user(who.user.id, Some(id.as_str()))
        .await?;
    Ok(Json(AccountList {
        accounts: list
            .into_iter()
            .map(|a| AccountView::seen_by(a, app.accounts()))
            .collect(),
    }))
}

/// `POST /_ui/api/providers/{provider}/accounts`.
pub(crate) async fn add_account(
    State(app): State<AppState>,
    who: SessionUser,
    Path(raw): Path<String>,
    UiJson(body): UiJson<NewAccountBody>,
) -> Result<(StatusCode, Json<AccountView>), GatewayError> {
    let id = key_provider(&raw)?;
    app.accounts().switches().check(id)?;
    let label = valid_label(body.label.as_deref())?;
    let priority = valid_priority(body.priority)?.unwrap_or(DEFAULT_PRIORITY);
    let key = valid_key(&body.api_key)?;
    let base_url = valid_base(&app, id, body.base_url.as_deref()).await?;
    try_key(&app, id, &key, base_url.as_deref()).await?;
    let account = app
        .store()?
        .provider_accounts()
        .create(NewAccount {
            user_id: who.user.id,
            provider: id.as_str(),
            label: &label,
            auth_kind: "api_key",
            access_token: &key,
            refresh_token: None,
            expires_at: None,
            base_url: base_url.as_deref(),
            priority,
        })
        .await?;
    app.accounts().invalidate_user(who.user.id);
    tracing::info!(user_id = %who.user.id, provider = %id, account_id = %account.id, "provider account connected");
    Ok((StatusCode::CREATED, Json(AccountView::from(account))))
}

fn account_id(raw: &str) -> Result<ProviderAccountId, GatewayError> {
    raw.parse()
        .map_err(|_| GatewayError::NotFound("account not found".into()))
}

/// `PATCH /_ui/api/providers/{provider}/accounts/{id}`.
pub(crate) async fn update_account(
    State(app): State<AppState>,
    who: SessionUser,
    Path((raw, raw_id)): Path<(String, String)>,
    UiJson(body): UiJson<AccountPatchBody>,
) -> Result<Json<AccountView>, GatewayError> {
    let id = provider(&raw)?;
    let account_id = account_id(&raw_id)?;
    let not_found = || GatewayError::NotFound("account not found".into());
    let store = app.store()?;
    let current = store
        .provider_accounts()
        .get(who.user.id, account_id)
        .await?
        .filter(|a| a.provider == id.as_str())
        .ok_or_else(not_found)?;
    let change = checked_change(&app, id, &current, &body).await?;
    let account = store
        .provider_accounts()
        .update(who.user.id, account_id, change)
        .await?
        .ok_or_else(not_found)?;
    app.accounts().invalidate_user(who.user.id);
    Ok(Json(AccountView::from(account)))
}

/// `DELETE /_ui/api/providers/{provider}`.
pub(crate) async fn remove(
    State(app): State<AppState>,
    who: SessionUser,
    Path(raw): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> Result<Json<Removed>, GatewayError> {
    let id = provider(&raw)?;
    let one = q.account_id.as_deref().map(account_id).transpose()?;
    let removed = app
        .store()?
        .provider_accounts()
        .delete(who.user.id, id.as_str(), one)
        .await?;
    if one.is_some() && removed == 0 {
        return Err(GatewayError::NotFound("account not found".into()));
    }
    app.accounts().invalidate_user(who.user.id);
    tracing::info!(user_id = %who.user.id, provider = %id, removed, "provider accounts removed");
    Ok(Json(Removed { ok: true, removed }))
}

/// The caller's order: the stored one, known ids only, then the rest in
/// registry order.
async fn order_of(app: &AppState, user: UserId) -> Result<Vec<String>, GatewayError> {
    let stored = app.store()?.provider_accounts().order(user).await?;
    let mut order: Vec<String> = stored
        .into_iter()
        .filter(|p| ProviderId::parse(p).is_some())
        .collect();
    for id in ProviderId::ALL {
        if !order.iter().any(|o| o == id.as_str()) {
            order.push(id.as_str().to_owned());
        }
    }
    Ok(order)
}

/// `GET /_ui/api/providers/priority`.
pub(crate) async fn get_order(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<ProviderOrder>, GatewayError> {
    Ok(Json(ProviderOrder {
        order: order_of(&app, who.user.id).await?,
    }))
}

/// `POST /_ui/api/providers/priority`.
pub(crate) async fn set_order(
    State(app): State<AppState>,
    who: SessionUser,
    UiJson(body): UiJson<ProviderOrder>,
) -> Result<Json<ProviderOrder>, GatewayError> {
    let mut ids: Vec<&str> = Vec::new();
    for raw in &body.order {
        let id = ProviderId::parse(raw)
            .ok_or_else(|| GatewayError::validation(format!("order: unknown provider '{raw}'")))?;
        if ids.contains(&id.as_str()) {
            return Err(GatewayError::validation(format!(
                "order: '{raw}' is listed twice"
            )));
        }
        ids.push(id.as_str());
    }
    app.store()?
        .provider_accounts()
        .set_order(who.user.id, &ids)
        .await?;
    app.accounts().invalidate_user(who.user.id);
    Ok(Json(ProviderOrder {
        order: order_of(&app, who.user.id).await?,
    }))
}

/// One provider's switch (`GET /_ui/api/admin/providers`, `PATCH
/// /_ui/api/admin/providers/{provider_id}`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "AdminProviderSwitch"))]
pub(crate) struct ProviderSwitch {
    id: ProviderId,
    enabled: bool,
}

/// `GET /_ui/api/admin/providers`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "AdminProviderList"))]
pub(crate) struct ProviderSwitchList {
    providers: Vec<ProviderSwitch>,
}

/// `PATCH /_ui/api/admin/providers/{provider_id}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "AdminProviderSwitchBody"))]
pub(crate) struct SwitchBody {
    enabled: bool,
}

/// `GET /_ui/api/admin/providers`.
pub(crate) async fn switches(
    State(app): State<AppState>,
    _admin: Admin,
) -> Json<ProviderSwitchList> {
    let switches = app.accounts().switches();
    Json(ProviderSwitchList {
        providers: ProviderId::ALL
            .into_iter()
            .map(|id| ProviderSwitch {
                id,
                enabled: !switches.is_disabled(id),
            })
            .collect(),
    })
}

/// `PATCH /_ui/api/admin/providers/{provider_id}`: applies to the next
/// request on this replica at once, on the others within a second.
pub(crate) async fn set_switch(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw): Path<String>,
    UiJson(body): UiJson<SwitchBody>,
) -> Result<Json<ProviderSwitch>, GatewayError> {
    let id = provider(&raw)?;
    if id == ProviderId::Primary && !body.enabled {
        return Err(GatewayError::validation(
            "primary cannot be disabled: it is the default provider",
        ));
    }
    let store = app.store()?;
    store
        .provider_switches()
        .set(id.as_str(), body.enabled, admin.user.id)
        .await?;
    app.accounts().switches().reload(store).await?;
    tracing::info!(by = %admin.user.id, provider = %id, enabled = body.enabled, "provider switched");
    Ok(Json(ProviderSwitch {
        id,
        enabled: body.enabled,
    }))
}

/// `GET /_ui/api/admin/pool`.
pub(crate) async fn pool(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<AccountList>, GatewayError> {
    let list = app.store()?.provider_accounts().list_pool().await?;
    Ok(Json(AccountList {
        accounts: list
            .into_iter()
            .map(|a| AccountView::seen_by(a, app.accounts()))
            .collect(),
    }))
}

/// `POST /_ui/api/admin/pool`: a new API-key account, or one of the admin's
/// own accounts moved into the pool.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PoolAddBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable, type = "ProviderId"))]
    provider: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    label: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable, type = "string"))]
    api_key: Option<Secret>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    base_url: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    priority: Option<i64>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    enabled: Option<bool>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    from_account_id: Option<String>,
}

/// `PATCH /_ui/api/admin/pool/{id}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PoolPatchBody {
    #[serde(flatten)]
    change: AccountPatchBody,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    enabled: Option<bool>,
}

/// `POST /_ui/api/admin/pool`.
pub(crate) async fn add_pool(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<PoolAddBody>,
) -> Result<(StatusCode, Json<AccountView>), GatewayError> {
    let store = app.store()?;
    let accounts = store.provider_accounts();
    let account = if let Some(raw) = body.from_account_id.as_deref() {
        let label = body
            .label
            .as_deref()
            .map(|l| valid_label(Some(l)))
            .transpose()?;
        accounts
            .move_to_pool(admin.user.id, account_id(raw)?, label.as_deref())
            .await?
            .ok_or_else(|| GatewayError::NotFound("account not found among yours".into()))?
    } else {
        let raw = body
            .provider
            .as_deref()
            .ok_or_else(|| GatewayError::validation("provider: required (or from_account_id)"))?;
        let id = key_provider(raw)?;
        let key = body
            .api_key
            .as_ref()
            .ok_or_else(|| GatewayError::validation("api_key: required"))
            .and_then(valid_key)?;
        let label = valid_label(body.label.as_deref())?;
        let priority = valid_priority(body.priority)?.unwrap_or(DEFAULT_PRIORITY);
        let base_url = valid_base(&app, id, body.base_url.as_deref()).await?;
        try_key(&app, id, &key, base_url.as_deref()).await?;
        accounts
            .create_pool(
                NewAccount {
                    user_id: admin.user.id,
                    provider: id.as_str(),
                    label: &label,
                    auth_kind: "api_key",
                    access_token: &key,
                    refresh_token: None,
                    expires_at: None,
                    base_url: base_url.as_deref(),
                    priority,
                },
                body.enabled.unwrap_or(true),
            )
            .await?
    };
    app.accounts().invalidate_all_users();
    tracing::info!(by = %admin.user.id, provider = %account.provider, account_id = %account.id, "pool account added");
    Ok((StatusCode::CREATED, Json(AccountView::from(account))))
}

/// `PATCH /_ui/api/admin/pool/{id}`.
pub(crate) async fn update_pool(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw_id): Path<String>,
    UiJson(body): UiJson<PoolPatchBody>,
) -> Result<Json<AccountView>, GatewayError> {
    let id = account_id(&raw_id)?;
    let not_found = || GatewayError::NotFound("pool account not found".into());
    let store = app.store()?;
    let current = store
        .provider_accounts()
        .get_pool(id)
        .await?
        .ok_or_else(not_found)?;
    let provider = ProviderId::parse(&current.provider).ok_or_else(not_found)?;
    let change = checked_change(&app, provider, &current, &body.change).await?;
    let account = store
        .provider_accounts()
        .update_pool(id, change, body.enabled)
        .await?
        .ok_or_else(not_found)?;
    app.accounts().invalidate_all_users();
    tracing::info!(by = %admin.user.id, account_id = %id, "pool account changed");
    Ok(Json(AccountView::from(account)))
}

/// `DELETE /_ui/api/admin/pool/{id}`.
pub(crate) async fn delete_pool(
    State(app): State<AppState>,
    admin: Admin,
    Path(raw_id): Path<String>,
) -> Result<Json<super::reply::Done>, GatewayError> {
    let id = account_id(&raw_id)?;
    if !app.store()?.provider_accounts().delete_pool(id).await? {
        return Err(GatewayError::NotFound("pool account not found".into()));
    }
    app.accounts().invalidate_all_users();
    tracing::info!(by = %admin.user.id, account_id = %id, "pool account removed");
    Ok(Json(super::reply::DONE))
}
