//! Connecting the OAuth providers from the console (spec 5.10;
//! interfaces-full.md 2.1, 2.2): `GET /_ui/api/providers/{provider}/auth`
//! starts a sign-in of the caller, and what ends it depends on the provider:
//!
//! - `messages_vendor` ([`relay`]): authorization code with PKCE whose
//!   redirect goes to a loopback port on the user's computer, where a script
//!   the gateway serves hands `code` and `state` back (`relay-script`,
//!   `relay`);
//! - `assistant_vendor` ([`code_host`]): the code host's web flow with the
//!   gateway's OAuth app (`callback`), or its device flow
//!   (`/_ui/api/assistant/*`).
//!
//! Every flow under way is a row of the provider-OAuth pending store (any
//! replica finishes it, each `state` once); what a flow ends with is an
//! account of the user who started it.

pub(crate) mod code_host;
pub(crate) mod relay;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::Response;

use super::extract::SessionUser;
use crate::error::GatewayError;
use crate::providers::id::ProviderId;
use crate::state::AppState;
use crate::store::ids::UserId;
use crate::store::provider_accounts::{NewAccount, ProviderAccount, DEFAULT_PRIORITY};
use crate::store::Store;

/// How long a sign-in may take (interfaces-full.md 2.1).
pub(crate) const PENDING_TTL_SECS: i64 = 600;

/// `GET /_ui/api/providers/{provider}/auth`.
pub(crate) async fn auth(
    State(app): State<AppState>,
    who: SessionUser,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, GatewayError> {
    let id = ProviderId::parse(&raw)
        .ok_or_else(|| GatewayError::NotFound(format!("no provider '{raw}'")))?;
    app.accounts().switches().check(id)?;
    match id {
        ProviderId::MessagesVendor => relay::start(&app, who.user.id, &headers).await,
        ProviderId::AssistantVendor => code_host::start_web(&app, who.user.id, &headers).await,
        other => Err(GatewayError::validation(format!(
            "{other} has no OAuth sign-in (GET /_ui/api/providers/{other}/connect says how to connect it)"
        ))),
    }
}

/// Whether the caller asked for JSON instead of a redirect.
fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"))
}

/// The gateway's public base for links the user follows from elsewhere:
/// `public_url`, else the request's host; `None` when neither is usable.
fn public_base(app: &AppState, headers: &HeaderMap) -> Option<String> {
    let runtime = app.runtime();
    crate::sso::redirect::public_base(runtime.public_url.as_deref(), headers).ok()
}

/// [`public_base`] for a link that cannot do without it.
fn required_public_base(app: &AppState, headers: &HeaderMap) -> Result<String, GatewayError> {
    public_base(app, headers)
        .ok_or_else(|| GatewayError::validation("the gateway's address is unknown: set public_url"))
}

/// A signed-in OAuth account of `user`: a new one, or, when the user has
/// one with the same label (the vendor account's name), that one with the
/// new tokens (signing in again renews, it does not duplicate).
struct SignedInAccount<'a> {
    user: UserId,
    provider: ProviderId,
    auth_kind: &'a str,
    label: &'a str,
    access_token: &'a crate::config::Secret,
    refresh_token: Option<&'a crate::config::Secret>,
    expires_at: Option<i64>,
    base_url: Option<&'a str>,
}

async fn keep_account(
    store: &Store,
    new: SignedInAccount<'_>,
) -> Result<ProviderAccount, GatewayError> {
    let accounts = store.provider_accounts();
    let same = accounts
        .list_for_user(new.user, Some(new.provider.as_str()))
        .await?
        .into_iter()
        .find(|a| !new.label.is_empty() && a.label == new.label && a.auth_kind == new.auth_kind);
    if let Some(existing) = same {
        accounts
            .store_tokens(
                existing.id,
                new.access_token,
                new.refresh_token,
                new.expires_at,
            )
            .await?;
        if let Some(found) = accounts.get(new.user, existing.id).await? {
            return Ok(found);
        }
    }
    Ok(accounts
        .create(NewAccount {
            user_id: new.user,
            provider: new.provider.as_str(),
            label: new.label,
            auth_kind: new.auth_kind,
            access_token: new.access_token,
            refresh_token: new.refresh_token,
            expires_at: new.expires_at,
            base_url: new.base_url,
            priority: DEFAULT_PRIORITY,
        })
        .await?)
}
