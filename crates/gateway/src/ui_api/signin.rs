//! The checks of password sign-in (spec 3.3, 5.4, 5.7), apart from HTTP:
//!
//! 1. [`check_password`]: refuse a locked email (423) before any work; verify
//!    the password with Argon2id (against a dummy hash for unknown emails and
//!    SSO-only accounts: the same cost, the same answer); count a failure per
//!    email in the store, the fifth within 15 minutes locking it; on success
//!    clear the count and either finish, or (TOTP on) hand out a pending
//!    login token.
//! 2. [`check_second_factor`]: the token must be pending (5 minutes, single
//!    use); the code is a TOTP code of the previous, current or next step not
//!    accepted before, or an unused recovery code (then marked used). A wrong
//!    code counts as a failed sign-in of the email and against the token,
//!    which is dropped after five.

use crate::config::Secret;
use crate::crypto::totp;
use crate::error::{AuthFailure, GatewayError};
use crate::state::AppState;
use crate::store::clock::{self, secs};
use crate::store::ids::LoginToken;
use crate::store::users::{normalize_email, User};

/// Wrong codes a pending login token survives.
const MAX_CODE_ATTEMPTS: i64 = 5;

/// The result of a correct password.
#[derive(Debug)]
pub(crate) enum PasswordOutcome {
    /// Signed in (2FA not enabled: the session is restricted to enrollment).
    Complete(User),
    /// TOTP is on: the second step needs this token.
    NeedsSecondFactor(LoginToken),
}

fn limits(app: &AppState) -> (u32, i64) {
    let auth = &app.config().tuning.auth;
    (auth.lockout_threshold, secs(auth.lockout_window))
}

/// 423 when `email` is locked.
async fn refuse_if_locked(app: &AppState, email: &str) -> Result<(), GatewayError> {
    let (threshold, window) = limits(app);
    match app
        .store()?
        .login_failures()
        .locked_for(email, threshold, window)
        .await?
    {
        Some(retry_after_secs) => Err(GatewayError::AccountLocked { retry_after_secs }),
        None => Ok(()),
    }
}

/// Count a failure for `email`: 423 when it locks the email, else `failure`.
async fn fail(app: &AppState, email: &str, failure: GatewayError) -> GatewayError {
    let (threshold, window) = limits(app);
    let store = match app.store() {
        Ok(store) => store,
        Err(e) => return e,
    };
    match store
        .login_failures()
        .record(email, threshold, window)
        .await
    {
        Ok(Some(retry_after_secs)) => {
            tracing::warn!(
                "sign-in locked for {}s after repeated failures",
                retry_after_secs
            );
            GatewayError::AccountLocked { retry_after_secs }
        }
        Ok(None) => failure,
        Err(e) => e.into(),
    }
}

/// Step one: email and password.
pub(crate) async fn check_password(
    app: &AppState,
    email: &str,
    password: &Secret,
) -> Result<PasswordOutcome, GatewayError> {
    let email = normalize_email(email);
    refuse_if_locked(app, &email).await?;
    let store = app.store()?;
    let user = store.users().find_by_email(&email).await?;
    let hash = user
        .as_ref()
        .and_then(|u| u.password_hash.as_ref())
        .map(Secret::expose);
    let matched = app
        .passwords()
        .verify(password, hash)
        .await
        .map_err(GatewayError::internal)?;
    let user = match (matched, user) {
        (true, Some(user)) => user,
        _ => return Err(fail(app, &email, GatewayError::Auth(AuthFailure::BadCredentials)).await),
    };
    store.login_failures().clear(&email).await?;
    if user.totp_enabled {
        let ttl = secs(app.config().tuning.auth.pending_login_ttl);
        let token = store.pending_logins().create(user.id, ttl).await?;
        Ok(PasswordOutcome::NeedsSecondFactor(token))
    } else {
        Ok(PasswordOutcome::Complete(user))
    }
}

/// Step two: the pending login token and a TOTP or recovery code.
pub(crate) async fn check_second_factor(
    app: &AppState,
    login_token: &str,
    code: &str,
) -> Result<User, GatewayError> {
    let bad = || GatewayError::Auth(AuthFailure::BadSecondFactor);
    let token: LoginToken = login_token.trim().parse().map_err(|_| bad())?;
    let store = app.store()?;
    let pending = store.pending_logins().find(token).await?.ok_or_else(bad)?;
    let user = store.users().get(pending.user_id).await?.ok_or_else(bad)?;
    refuse_if_locked(app, &user.email).await?;

    let code = code.trim();
    let accepted = if totp::looks_like_code(code) {
        match store.users().totp_secret(user.id).await? {
            Some(secret) => {
                let now = u64::try_from(clock::now()).unwrap_or(0);
                match totp::matching_step(&secret, code, now) {
                    // Accepted once only: a step at or before the last one is refused.
                    Some(step) => store.users().claim_totp_step(user.id, step).await?,
                    None => false,
                }
            }
            None => false,
        }
    } else {
        store.recovery_codes().redeem(user.id, code).await?
    };
    if !accepted {
        store
            .pending_logins()
            .record_failure(token, MAX_CODE_ATTEMPTS)
            .await?;
        return Err(fail(app, &user.email, bad()).await);
    }
    // Single use: only one redemption of the token succeeds, on any replica.
    store
        .pending_logins()
        .consume(token)
        .await?
        .ok_or_else(bad)?;
    store.login_failures().clear(&user.email).await?;
    Ok(user)
}

/// A signed-in user's current password (password change): the same lockout
/// applies, so a stolen session cannot guess it without limit.
pub(crate) async fn check_current_password(
    app: &AppState,
    user: &User,
    password: &Secret,
) -> Result<(), GatewayError> {
    refuse_if_locked(app, &user.email).await?;
    let hash = user.password_hash.as_ref().map(Secret::expose);
    let matched = app
        .passwords()
        .verify(password, hash)
        .await
        .map_err(GatewayError::internal)?;
    if matched {
        Ok(())
    } else {
        Err(fail(
            app,
            &user.email,
            GatewayError::validation("current_password: is not correct"),
        )
        .await)
    }
}
