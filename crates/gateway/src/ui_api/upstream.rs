//! The signed-in user's upstream credentials for the `primary` provider
//! (spec 2.4, 3.5, 5.8; interfaces.md 6), session + CSRF:
//!
//! - `GET /_ui/api/upstream/status` -> `{has_token, expired, sso_start_url?,
//!   sso_region?, upstream_region?}`: `expired` is true when the stored
//!   credentials no longer yield an access token (the SSO service refused the
//!   refresh: connect again). Checking uses the user's cached access token,
//!   so it reaches the SSO service at most once per 4 minutes.
//! - `POST /_ui/api/upstream/setup {sso_start_url?, sso_region?,
//!   upstream_region?}` -> `{device_code, user_code, verification_uri,
//!   verification_uri_complete, expires_in, interval}`: registers an OIDC
//!   client (or reuses the user's registration while it is valid for the
//!   same start URL and region) and starts a device authorization. Without
//!   a start URL: the deployment's (`UPSTREAM_SSO_URL`, else individual
//!   mode); without regions: `UPSTREAM_SSO_REGION` and the live
//!   `upstream_region`. Open `verification_uri_complete`, approve, and poll.
//! - `POST /_ui/api/upstream/poll {device_code}` -> `{status, message?}` with
//!   `status` one of `pending`, `slow_down` (poll less often: add 5 s),
//!   `success` (the refresh token, client id and encrypted secret are stored
//!   and used from the next request on, on every replica), `expired`,
//!   `denied`. Poll no faster than `interval`. A device code that is not
//!   the caller's (or already finished) is 404.
//! - `DELETE /_ui/api/upstream/token` -> `{ok: true}`: the credentials are
//!   deleted; `primary` requests get 403 until the user connects again.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::SessionUser;
use super::json::UiJson;
use super::reply::{Done, DONE};
use crate::config::endpoints::{normalize_start_url, INDIVIDUAL_START_URL};
use crate::config::value::FieldValue as _;
use crate::config::{Region, Secret};
use crate::crypto::random::sha256_hex;
use crate::error::GatewayError;
use crate::providers::primary::credentials::device_flow::registration_usable;
use crate::providers::primary::credentials::oidc::{OAuthCode, OidcError, Registration};
use crate::providers::primary::credentials::per_user::PrimaryAuth;
use crate::state::AppState;
use crate::store::clock::now;
use crate::store::ids::UserId;
use crate::store::upstream_credentials::{PendingDevice, UpstreamCredentials};

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "UpstreamSetupBody"))]
pub(crate) struct SetupBody {
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    sso_start_url: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    sso_region: Option<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(optional = nullable))]
    upstream_region: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "UpstreamPollBody"))]
pub(crate) struct PollBody {
    #[cfg_attr(test, ts(type = "string"))]
    device_code: Secret,
}

/// `GET /_ui/api/upstream/status`: the three places are there only when
/// credentials are stored.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct UpstreamStatus {
    has_token: bool,
    expired: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    sso_start_url: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    sso_region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    upstream_region: Option<String>,
}

/// `POST /_ui/api/upstream/setup`: the device authorization to approve.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct DeviceAuthorization {
    device_code: String,
    user_code: String,
    verification_uri: String,
    verification_uri_complete: String,
    expires_in: u64,
    interval: u64,
}

/// Where a device authorization stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub(crate) enum PollStatus {
    Pending,
    /// Poll less often: add 5 s to the interval.
    SlowDown,
    Success,
    Expired,
    Denied,
}

/// `POST /_ui/api/upstream/poll`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct PollAnswer {
    status: PollStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    message: Option<String>,
}

fn region(field: &str, value: Option<&str>, default: &str) -> Result<String, GatewayError> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(default.to_owned()),
        Some(v) => Region::parse_value(v)
            .map(|r| r.as_str().to_owned())
            .map_err(|e| GatewayError::validation(format!("{field}: {e}"))),
    }
}

fn oidc_failure(e: &OidcError) -> GatewayError {
    GatewayError::upstream(
        axum::http::StatusCode::BAD_GATEWAY,
        format!("the upstream SSO service refused or failed: {e}"),
    )
}

/// `GET /_ui/api/upstream/status`.
pub(crate) async fn status(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<UpstreamStatus>, GatewayError> {
    let store = app.store()?;
    let Some(creds) = store.upstream_credentials().get(who.user.id).await? else {
        return Ok(Json(UpstreamStatus::default()));
    };
    let expired = match app.user_tokens().source(app.store()?, who.user.id).await? {
        Some(source) if source.refused() => true,
        Some(source) => match PrimaryAuth::User(source).access_token().await {
            Ok(_) => false,
            // Refused credentials; an unreachable service says nothing about them.
            Err(GatewayError::Forbidden(_)) => true,
            Err(e) => {
                tracing::warn!(user_id = %who.user.id, "upstream token check failed: {e}");
                false
            }
        },
        None => false,
    };
    Ok(Json(UpstreamStatus {
        has_token: true,
        expired,
        sso_start_url: Some(creds.sso_start_url),
        sso_region: Some(creds.sso_region),
        upstream_region: Some(creds.upstream_region),
    }))
}

/// `POST /_ui/api/upstream/setup`.
pub(crate) async fn setup(
    State(app): State<AppState>,
    who: SessionUser,
    UiJson(body): UiJson<SetupBody>,
) -> Result<Json<DeviceAuthorization>, GatewayError> {
    let config = app.config();
    let start_url = match body
        .sso_start_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        Some(url) => normalize_start_url(url)
            .map_err(|e| GatewayError::validation(format!("sso_start_url: {e}")))?,
        None => config.upstream.sso_mode.start_url().to_owned(),
    };
    let sso_region = region(
        "sso_region",
        body.sso_region.as_deref(),
        config.upstream.sso_region.as_str(),
    )?;
    let upstream_region = region(
        "upstream_region",
        body.upstream_region.as_deref(),
        app.runtime().upstream_region.as_str(),
    )?;
    let store = app.store()?;
    let oidc = app.user_tokens().oidc(&sso_region);

    // The user's registration is reused while valid for the same place.
    let reuse = store
        .upstream_credentials()
        .get(who.user.id)
        .await?
        .filter(|c| {
            c.sso_region == sso_region && c.sso_start_url.as_deref() == Some(start_url.as_str())
        })
        .map(|c| Registration {
            client_id: c.client_id,
            client_secret: c.client_secret,
            client_secret_expires_at: c.client_expires_at,
        })
        .filter(registration_usable);
    let registration = match reuse {
        Some(r) => r,
        None => {
            let issuer = (start_url != INDIVIDUAL_START_URL).then_some(start_url.as_str());
            oidc.register(&config.tuning.oidc_client_name, issuer)
                .await
                .map_err(|e| oidc_failure(&e))?
        }
    };
    let auth = oidc
        .start_device_authorization(&registration, &start_url)
        .await
        .map_err(|e| oidc_failure(&e))?;
    let created_at = now();
    let expires_in = i64::try_from(auth.expires_in).unwrap_or(i64::MAX);
    store
        .upstream_credentials()
        .start_pending(&PendingDevice {
            device_code_hash: sha256_hex(auth.device_code.expose()),
            user_id: who.user.id,
            client_id: registration.client_id.clone(),
            client_secret: registration.client_secret.clone(),
            client_expires_at: registration.client_secret_expires_at,
            sso_start_url: start_url.clone(),
            sso_region: sso_region.clone(),
            upstream_region,
            created_at,
            expires_at: created_at.saturating_add(expires_in),
        })
        .await?;
    tracing::info!(user_id = %who.user.id, %sso_region, "upstream device authorization started");
    Ok(Json(DeviceAuthorization {
        device_code: auth.device_code.expose().to_owned(),
        verification_uri_complete: auth.url().to_owned(),
        user_code: auth.user_code,
        verification_uri: auth.verification_uri,
        expires_in: auth.expires_in,
        interval: auth.interval.unwrap_or(5),
    }))
}

fn poll_answer(status: PollStatus, message: Option<String>) -> Json<PollAnswer> {
    Json(PollAnswer { status, message })
}

/// `POST /_ui/api/upstream/poll`.
pub(crate) async fn poll(
    State(app): State<AppState>,
    who: SessionUser,
    UiJson(body): UiJson<PollBody>,
) -> Result<Json<PollAnswer>, GatewayError> {
    let store = app.store()?;
    let hash = sha256_hex(body.device_code.expose());
    let pending = store
        .upstream_credentials()
        .pending(who.user.id, &hash)
        .await?
        .ok_or_else(|| {
            GatewayError::NotFound("no device authorization of yours with this device_code".into())
        })?;
    if now() >= pending.expires_at {
        store.upstream_credentials().drop_pending(&hash).await?;
        return Ok(poll_answer(PollStatus::Expired, None));
    }
    let registration = Registration {
        client_id: pending.client_id.clone(),
        client_secret: pending.client_secret.clone(),
        client_secret_expires_at: pending.client_expires_at,
    };
    let oidc = app.user_tokens().oidc(&pending.sso_region);
    match oidc
        .poll_device_token(&registration, &body.device_code)
        .await
    {
        Ok(grant) => match grant.refresh_token {
            Some(refresh_token) => {
                let access_token = grant.access_token.clone();
                finish(
                    &app,
                    who.user.id,
                    &hash,
                    pending,
                    refresh_token,
                    &access_token,
                )
                .await?;
                Ok(poll_answer(PollStatus::Success, None))
            }
            None => {
                store.upstream_credentials().drop_pending(&hash).await?;
                Ok(poll_answer(
                    PollStatus::Denied,
                    Some("the SSO service issued no refresh token".into()),
                ))
            }
        },
        Err(OidcError::OAuth {
            code: OAuthCode::AuthorizationPending,
            ..
        }) => Ok(poll_answer(PollStatus::Pending, None)),
        Err(OidcError::OAuth {
            code: OAuthCode::SlowDown,
            ..
        }) => Ok(poll_answer(PollStatus::SlowDown, None)),
        Err(OidcError::OAuth {
            code: OAuthCode::ExpiredToken,
            ..
        }) => {
            store.upstream_credentials().drop_pending(&hash).await?;
            Ok(poll_answer(PollStatus::Expired, None))
        }
        Err(e) if e.is_rejection() => {
            store.upstream_credentials().drop_pending(&hash).await?;
            let message = match &e {
                OidcError::OAuth {
                    code: OAuthCode::AccessDenied,
                    ..
                } => None,
                other => Some(other.to_string()),
            };
            Ok(poll_answer(PollStatus::Denied, message))
        }
        // Unreachable or failing: the authorization may still complete.
        Err(e) => Ok(poll_answer(
            PollStatus::Pending,
            Some(format!(
                "the SSO service could not be asked, still waiting: {e}"
            )),
        )),
    }
}

/// Store the credentials of a completed authorization and make every
/// replica use them from the next request on.
async fn finish(
    app: &AppState,
    user: UserId,
    hash: &str,
    pending: PendingDevice,
    refresh_token: Secret,
    access_token: &Secret,
) -> Result<(), GatewayError> {
    let now = now();
    // An organization account names its profile on every call: looked up
    // once, now, and kept with the credentials.
    let profile_arn = if pending.sso_start_url == INDIVIDUAL_START_URL {
        None
    } else {
        app.user_tokens()
            .discover_profile(&pending.upstream_region, access_token)
            .await
    };
    let creds = UpstreamCredentials {
        user_id: user,
        refresh_token,
        upstream_region: pending.upstream_region,
        client_id: pending.client_id,
        client_secret: pending.client_secret,
        sso_region: pending.sso_region,
        sso_start_url: Some(pending.sso_start_url),
        client_expires_at: pending.client_expires_at,
        profile_arn,
        created_at: now,
        updated_at: now,
    };
    app.store()?
        .upstream_credentials()
        .complete(hash, &creds)
        .await?;
    app.user_tokens().invalidate(user);
    tracing::info!(user_id = %user, "upstream credentials connected");
    Ok(())
}

/// `DELETE /_ui/api/upstream/token`.
pub(crate) async fn delete_token(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<Done>, GatewayError> {
    let removed = app
        .store()?
        .upstream_credentials()
        .delete(who.user.id)
        .await?;
    app.user_tokens().invalidate(who.user.id);
    if removed {
        tracing::info!(user_id = %who.user.id, "upstream credentials removed");
    }
    Ok(Json(DONE))
}
