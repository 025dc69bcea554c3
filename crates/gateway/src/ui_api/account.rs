//! The signed-in person's own account:
//!
//! - `GET /_ui/api/auth/me` -> `{user_id, email, role, auth_method,
//!   totp_enabled, must_change_password}` (`auth_method`: how this session
//!   signed in, `password` or `sso`);
//! - `POST /_ui/api/auth/logout` -> `{ok: true}`, the session deleted from the
//!   store (ended on every replica) and both cookies cleared;
//! - `POST /_ui/api/auth/password/change {current_password, new_password}` ->
//!   `{ok: true}`: the current password checked (failures count toward the
//!   lockout), the new one must follow the rules (12 to 128 characters, not
//!   the email, not the current one); clears `must_change_password` and ends
//!   the account's other sessions.
//!
//! All three are open to restricted sessions, except that a session that
//! must enroll 2FA (and has no password reset pending) cannot change the
//! password first.

use axum::extract::State;
use axum::response::{IntoResponse as _, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::SignedIn;
use super::json::UiJson;
use super::reply::{Done, DONE};
use super::session::{self, Restriction};
use super::signin;
use crate::config::Secret;
use crate::crypto::password;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::ids::UserId;
use crate::store::users::{AuthMethod, Role};

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct ChangePasswordBody {
    #[cfg_attr(test, ts(type = "string"))]
    current_password: Secret,
    #[cfg_attr(test, ts(type = "string"))]
    new_password: Secret,
}

/// `GET /_ui/api/auth/me`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct Me {
    user_id: UserId,
    email: String,
    role: Role,
    /// How this session signed in.
    auth_method: AuthMethod,
    totp_enabled: bool,
    must_change_password: bool,
}

/// `GET /_ui/api/auth/me`.
pub(crate) async fn me(who: SignedIn) -> Json<Me> {
    Json(Me {
        user_id: who.user.id,
        email: who.user.email.clone(),
        role: who.user.role,
        auth_method: who.session.auth_method,
        totp_enabled: who.user.totp_enabled,
        must_change_password: who.user.must_change_password,
    })
}

/// `POST /_ui/api/auth/logout`.
pub(crate) async fn logout(
    State(app): State<AppState>,
    who: SignedIn,
) -> Result<Response, GatewayError> {
    let cookies = session::end(&app, &who).await?;
    Ok((cookies, Json(DONE)).into_response())
}

/// `POST /_ui/api/auth/password/change`.
pub(crate) async fn change_password(
    State(app): State<AppState>,
    who: SignedIn,
    UiJson(body): UiJson<ChangePasswordBody>,
) -> Result<Json<Done>, GatewayError> {
    if let Some(r @ Restriction::TwoFactorSetup) = who.restriction() {
        return Err(GatewayError::Forbidden(r.message().into()));
    }
    if who.user.password_hash.is_none() {
        return Err(GatewayError::validation(
            "this account signs in by SSO and has no password",
        ));
    }
    signin::check_current_password(&app, &who.user, &body.current_password).await?;
    let new = body.new_password.expose();
    password::check_rules(new, &who.user.email)
        .map_err(|m| GatewayError::Validation(format!("new_{m}")))?;
    if new == body.current_password.expose() {
        return Err(GatewayError::validation(
            "new_password: must differ from the current password",
        ));
    }
    let hash = app
        .passwords()
        .hash(&body.new_password)
        .await
        .map_err(GatewayError::internal)?;
    let store = app.store()?;
    store
        .users()
        .set_password(who.user.id, &hash, false)
        .await?;
    let ended = store
        .sessions()
        .delete_for_user(who.user.id, Some(who.session.id))
        .await?;
    tracing::info!(user_id = %who.user.id, other_sessions_ended = ended, "password changed");
    Ok(Json(DONE))
}
