//! `assistant_vendor` sign-in through its code host (interfaces-full.md
//! 2.2), two ways to the same account:
//!
//! - web flow, with the gateway's own OAuth app on the code host
//!   (`ASSISTANT_VENDOR_OAUTH_CLIENT_ID` and `_SECRET`):
//!   `GET /_ui/api/providers/assistant_vendor/auth` (302 to the code host's
//!   authorize page; 400 when the app is not configured) and
//!   `GET /_ui/api/providers/assistant_vendor/callback?code&state`, which
//!   ends in a 302 to `/_ui/providers?connected=assistant_vendor` or
//!   `?error=<code>`;
//! - device flow with the vendor's public client: `POST
//!   /_ui/api/assistant/device-code`, then `POST /_ui/api/assistant/device-poll
//!   {device_code}` until `success` (or `expired`, `denied`); the device
//!   code is bound to the user who asked for it.
//!
//! Either way the code-host token is tried once with the token exchange
//! (an account without the assistant is refused at once), its `login`
//! becomes the account's label and `endpoints.api` its base URL.
//! `GET /_ui/api/assistant/status` and `DELETE /_ui/api/assistant/disconnect`
//! look at and remove the caller's accounts.

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::{keep_account, public_base, required_public_base, SignedInAccount, PENDING_TTL_SECS};
use crate::config::Secret;
use crate::error::GatewayError;
use crate::providers::direct::credentials::assistant_token::AssistantSession;
use crate::providers::direct::credentials::code_host::{CodeHost, DevicePoll};
use crate::providers::id::ProviderId;
use crate::sso::pkce::random_value;
use crate::state::AppState;
use crate::store::clock::rfc3339;
use crate::store::ids::{ProviderAccountId, UserId};
use crate::ui_api::extract::SessionUser;
use crate::ui_api::json::UiJson;
use crate::ui_api::reply::{redirect, Done, DONE};

/// The pending store's names of the two flows.
const WEB_FLOW: &str = "assistant_vendor";
const DEVICE_FLOW: &str = "assistant_vendor:device";
/// The path of the web flow's callback.
const CALLBACK_PATH: &str = "/_ui/api/providers/assistant_vendor/callback";
/// Where the browser goes when the web flow ends.
const PROVIDERS_PAGE: &str = "/_ui/providers";

/// `POST /_ui/api/assistant/device-code`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AssistantDeviceCode {
    device_code: String,
    user_code: String,
    verification_uri: String,
    expires_in: u64,
    interval: u64,
}

/// `POST /_ui/api/assistant/device-poll`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct DevicePollBody {
    device_code: String,
}

/// Where a device flow stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub(crate) enum DeviceFlowStatus {
    Pending,
    Success,
    Expired,
    Denied,
    SlowDown,
}

/// What `device-poll` answers.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AssistantPoll {
    status: DeviceFlowStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    account_id: Option<ProviderAccountId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    login: Option<String>,
}

/// `GET /_ui/api/assistant/status`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct AssistantStatus {
    connected: bool,
    login: Option<String>,
    expires_at: Option<String>,
    base_url: Option<String>,
}

/// The web flow's callback query.
#[derive(Debug, Deserialize)]
pub(crate) struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

fn code_host(app: &AppState) -> CodeHost {
    let config = app.config();
    CodeHost {
        http: app.http().clone(),
        base: config.upstream.assistant_vendor_code_host_url.clone(),
        timeout: config.tuning.oidc_timeout,
    }
}

/// The gateway's OAuth app, when configured.
fn web_app(app: &AppState) -> Option<(String, Secret)> {
    let keys = &app.config().providers;
    Some((
        keys.assistant_vendor_oauth_client_id.clone()?,
        keys.assistant_vendor_oauth_client_secret.clone()?,
    ))
}

/// Whether the web flow can be offered.
pub(crate) fn web_flow_configured(app: &AppState) -> bool {
    web_app(app).is_some()
}

/// The web flow's `redirect_uri`.
fn callback_url(app: &AppState, headers: &HeaderMap) -> Result<String, GatewayError> {
    let base = required_public_base(app, headers)?;
    Ok(format!("{base}{CALLBACK_PATH}"))
}

/// Start the web flow of `user`.
pub(super) async fn start_web(
    app: &AppState,
    user: UserId,
    headers: &HeaderMap,
) -> Result<Response, GatewayError> {
    let (client_id, _) = web_app(app).ok_or_else(|| {
        GatewayError::validation(
            "web flow not configured (ASSISTANT_VENDOR_OAUTH_CLIENT_ID and \
             ASSISTANT_VENDOR_OAUTH_CLIENT_SECRET); use the device flow: POST /_ui/api/assistant/device-code",
        )
    })?;
    let redirect_uri = callback_url(app, headers)?;
    let state = random_value();
    app.store()?
        .provider_oauth_pending()
        .create(&state, user, WEB_FLOW, &Secret::default(), PENDING_TTL_SECS)
        .await?;
    Ok(redirect(&code_host(app).authorize_url(
        &client_id,
        &redirect_uri,
        &state,
    )))
}

/// `GET /_ui/api/providers/assistant_vendor/callback`.
pub(crate) async fn callback(
    State(app): State<AppState>,
    who: SessionUser,
    Query(query): Query<CallbackQuery>,
    headers: HeaderMap,
) -> Response {
    let base = public_base(&app, &headers).unwrap_or_default();
    match finish_web(&app, who.user.id, query, &headers).await {
        Ok(()) => redirect(&format!(
            "{base}{PROVIDERS_PAGE}?connected=assistant_vendor"
        )),
        Err(code) => redirect(&format!("{base}{PROVIDERS_PAGE}?error={code}")),
    }
}

/// End the web flow; the failure as a short code for the page.
async fn finish_web(
    app: &AppState,
    user: UserId,
    query: CallbackQuery,
    headers: &HeaderMap,
) -> Result<(), &'static str> {
    if let Some(error) = query.error.as_deref() {
        tracing::info!(user_id = %user, error, "assistant_vendor web sign-in refused");
        return Err(if error == "access_denied" {
            "access_denied"
        } else {
            "sign_in_refused"
        });
    }
    let (Some(code), Some(state)) = (query.code, query.state) else {
        return Err("state_invalid");
    };
    let store = app.store().map_err(|_| "unavailable")?;
    let flow = store
        .provider_oauth_pending()
        .take(&state, WEB_FLOW)
        .await
        .map_err(|_| "unavailable")?
        .filter(|f| f.user_id == user)
        .ok_or("state_invalid")?;
    let (client_id, secret) = web_app(app).ok_or("not_configured")?;
    let redirect_uri = callback_url(app, headers).map_err(|_| "state_invalid")?;
    let token = code_host(app)
        .exchange_code(&client_id, &secret, &code, &redirect_uri)
        .await
        .map_err(|e| {
            tracing::warn!(user_id = %flow.user_id, "assistant_vendor code exchange failed: {e}");
            "exchange_failed"
        })?;
    connect(app, user, &token).await.map_err(|e| {
        tracing::warn!(user_id = %user, "assistant_vendor account refused: {e}");
        "no_assistant"
    })?;
    Ok(())
}

/// Keep a code-host token as an account of `user`: its login, and one
/// exchange to prove the account has the assistant and learn its API base.
async fn connect(
    app: &AppState,
    user: UserId,
    token: &Secret,
) -> Result<(ProviderAccountId, String), GatewayError> {
    let login = code_host(app).login(token).await?;
    let config = app.config();
    let probe = AssistantSession::new(
        app.http().clone(),
        config.upstream.assistant_vendor_token_url.clone(),
        token.clone(),
        config.tuning.oidc_timeout,
    );
    let exchanged = probe.token().await.map_err(|e| {
        GatewayError::Validation(format!(
            "the code-host account {login} cannot use the assistant: {e}"
        ))
    })?;
    let account = keep_account(
        app.store()?,
        SignedInAccount {
            user,
            provider: ProviderId::AssistantVendor,
            auth_kind: "oauth_code_host",
            label: &login,
            access_token: token,
            refresh_token: None,
            expires_at: None,
            base_url: Some(&exchanged.api_base),
        },
    )
    .await?;
    app.accounts().invalidate_user(user);
    tracing::info!(user_id = %user, account_id = %account.id, "assistant_vendor connected");
    Ok((account.id, login))
}

/// `POST /_ui/api/assistant/device-code`.
pub(crate) async fn device_code(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<AssistantDeviceCode>, GatewayError> {
    app.accounts()
        .switches()
        .check(ProviderId::AssistantVendor)?;
    let started = code_host(&app).device_code().await?;
    let ttl = i64::try_from(started.expires_in).unwrap_or(PENDING_TTL_SECS);
    app.store()?
        .provider_oauth_pending()
        .create(
            &started.device_code,
            who.user.id,
            DEVICE_FLOW,
            &Secret::default(),
            ttl,
        )
        .await?;
    Ok(Json(AssistantDeviceCode {
        device_code: started.device_code,
        user_code: started.user_code,
        verification_uri: started.verification_uri,
        expires_in: started.expires_in,
        interval: started.interval,
    }))
}

fn polled(status: DeviceFlowStatus) -> Json<AssistantPoll> {
    Json(AssistantPoll {
        status,
        account_id: None,
        login: None,
    })
}

/// `POST /_ui/api/assistant/device-poll`.
pub(crate) async fn device_poll(
    State(app): State<AppState>,
    who: SessionUser,
    UiJson(body): UiJson<DevicePollBody>,
) -> Result<Json<AssistantPoll>, GatewayError> {
    let store = app.store()?;
    let pending = store.provider_oauth_pending();
    // Another user's (or an unknown, or an ended) device code: nothing to poll.
    let mine = pending
        .find(&body.device_code, DEVICE_FLOW)
        .await?
        .is_some_and(|f| f.user_id == who.user.id);
    if !mine {
        return Ok(polled(DeviceFlowStatus::Expired));
    }
    let status = match code_host(&app).poll_device(&body.device_code).await? {
        DevicePoll::Pending => DeviceFlowStatus::Pending,
        DevicePoll::SlowDown => DeviceFlowStatus::SlowDown,
        DevicePoll::Expired => DeviceFlowStatus::Expired,
        DevicePoll::Denied => DeviceFlowStatus::Denied,
        DevicePoll::Approved(token) => {
            if pending
                .take(&body.device_code, DEVICE_FLOW)
                .await?
                .is_none()
            {
                // A concurrent poll ended the flow and keeps the account.
                return Ok(polled(DeviceFlowStatus::Pending));
            }
            let (account_id, login) = connect(&app, who.user.id, &token).await?;
            return Ok(Json(AssistantPoll {
                status: DeviceFlowStatus::Success,
                account_id: Some(account_id),
                login: Some(login),
            }));
        }
    };
    if matches!(status, DeviceFlowStatus::Expired | DeviceFlowStatus::Denied) {
        pending.take(&body.device_code, DEVICE_FLOW).await?;
    }
    Ok(polled(status))
}

/// `GET /_ui/api/assistant/status`.
pub(crate) async fn status(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<AssistantStatus>, GatewayError> {
    let first = app
        .store()?
        .provider_accounts()
        .list_for_user(who.user.id, Some(ProviderId::AssistantVendor.as_str()))
        .await?
        .into_iter()
        .find(|a| a.enabled && a.last_error.is_none());
    Ok(Json(match first {
        Some(a) => AssistantStatus {
            connected: true,
            login: Some(a.label),
            expires_at: a.expires_at.map(rfc3339),
            base_url: a.base_url,
        },
        None => AssistantStatus {
            connected: false,
            login: None,
            expires_at: None,
            base_url: None,
        },
    }))
}

/// `DELETE /_ui/api/assistant/disconnect`: every account of the caller's.
pub(crate) async fn disconnect(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<Done>, GatewayError> {
    let removed = app
        .store()?
        .provider_accounts()
        .delete(who.user.id, ProviderId::AssistantVendor.as_str(), None)
        .await?;
    app.accounts().invalidate_user(who.user.id);
    tracing::info!(user_id = %who.user.id, removed, "assistant_vendor disconnected");
    Ok(Json(DONE))
}
