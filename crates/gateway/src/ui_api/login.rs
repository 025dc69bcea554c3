//! The public sign-in calls (spec 4.3, interfaces.md 6):
//!
//! - `POST /_ui/api/auth/login {email, password}` -> 200 signed in (both
//!   cookies), or 200 `{needs_2fa: true, login_token}`; 401 `auth_error`;
//!   423 `account_locked` with `retry_after_secs`;
//! - `POST /_ui/api/auth/login/2fa {login_token, code}` -> 200 signed in;
//! - `POST /_ui/api/setup {setup_code, email, password}` -> 200 signed in as
//!   the first admin, while no admin exists (the code is in the server log).
//!
//! "Signed in" is `{ok: true, user_id, email, role, must_change_password,
//! needs_2fa_setup}`; with `needs_2fa_setup` the session can reach only 2FA
//! enrollment, me, logout and status until TOTP is enabled.

use axum::extract::State;
use axum::response::{IntoResponse as _, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq as _;

use super::json::UiJson;
use super::reply::OK;
use super::session::establish;
use super::signin::{self, PasswordOutcome};
use crate::config::Secret;
use crate::crypto::password;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::ids::{LoginToken, UserId};
use crate::store::users::{validate_email, AuthMethod, NewUser, Role, RoleChoice, User};

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct LoginBody {
    email: String,
    #[cfg_attr(test, ts(type = "string"))]
    password: Secret,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct SecondFactorBody {
    login_token: String,
    code: String,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct SetupBody {
    #[cfg_attr(test, ts(type = "string"))]
    setup_code: Secret,
    email: String,
    #[cfg_attr(test, ts(type = "string"))]
    password: Secret,
}

/// Signed in: the session's cookies come with it.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct SignedIn {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    user_id: UserId,
    email: String,
    role: Role,
    must_change_password: bool,
    /// The session can reach only 2FA enrollment, me, logout and status
    /// until TOTP is enabled.
    needs_2fa_setup: bool,
}

/// The password was right; the second factor is next.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct NeedsSecondFactor {
    #[cfg_attr(test, ts(type = "true"))]
    needs_2fa: bool,
    login_token: LoginToken,
}

/// Start a password session for `user` and answer "signed in".
async fn signed_in(app: &AppState, user: &User) -> Result<Response, GatewayError> {
    let cookies = establish(app, user, AuthMethod::Password).await?;
    let body = SignedIn {
        ok: OK,
        user_id: user.id,
        email: user.email.clone(),
        role: user.role,
        must_change_password: user.must_change_password,
        needs_2fa_setup: !user.totp_enabled,
    };
    Ok((cookies, Json(body)).into_response())
}

/// `POST /_ui/api/auth/login`.
pub(crate) async fn login(
    State(app): State<AppState>,
    UiJson(body): UiJson<LoginBody>,
) -> Result<Response, GatewayError> {
    match signin::check_password(&app, &body.email, &body.password).await? {
        PasswordOutcome::Complete(user) => signed_in(&app, &user).await,
        PasswordOutcome::NeedsSecondFactor(token) => Ok(Json(NeedsSecondFactor {
            needs_2fa: true,
            login_token: token,
        })
        .into_response()),
    }
}

/// `POST /_ui/api/auth/login/2fa`.
pub(crate) async fn login_2fa(
    State(app): State<AppState>,
    UiJson(body): UiJson<SecondFactorBody>,
) -> Result<Response, GatewayError> {
    let user = signin::check_second_factor(&app, &body.login_token, &body.code).await?;
    signed_in(&app, &user).await
}

/// `POST /_ui/api/setup`: the first admin, by the one-time setup code.
pub(crate) async fn setup(
    State(app): State<AppState>,
    UiJson(body): UiJson<SetupBody>,
) -> Result<Response, GatewayError> {
    let store = app.store()?;
    if app.setup_complete().await? {
        return Err(GatewayError::Conflict("setup is already complete".into()));
    }
    let expected = store.meta().setup_code().await?;
    let given = body.setup_code.expose().trim();
    if !bool::from(given.as_bytes().ct_eq(expected.expose().as_bytes())) {
        // A concurrent setup may have used (and removed) the code meanwhile:
        // then the answer is "already complete", not "wrong code".
        if app.setup_complete().await? {
            return Err(GatewayError::Conflict("setup is already complete".into()));
        }
        return Err(GatewayError::Forbidden(
            "wrong setup code: it is printed in the gateway's log".into(),
        ));
    }
    let email = validate_email(&body.email).map_err(GatewayError::Validation)?;
    password::check_rules(body.password.expose(), &email).map_err(GatewayError::Validation)?;
    let hash = app
        .passwords()
        .hash(&body.password)
        .await
        .map_err(GatewayError::internal)?;
    let user = store
        .users()
        .create(NewUser {
            email: &email,
            role: RoleChoice::FirstAdmin,
            auth_method: AuthMethod::Password,
            password_hash: Some(&hash),
            sso_subject: None,
            totp_secret: None,
            must_change_password: false,
        })
        .await?;
    store.meta().delete_setup_code().await?;
    tracing::info!(user_id = %user.id, "setup complete: first admin created");
    signed_in(&app, &user).await
}
