//! Full deployment at start: the initial admin, the setup code, and the
//! periodic clean-up of expired sign-in state.
//!
//! - `INITIAL_ADMIN_EMAIL` + `INITIAL_ADMIN_PASSWORD` (+ optional
//!   `INITIAL_ADMIN_TOTP_SECRET`, base32) create the first admin when the
//!   users table is empty, and are ignored afterwards (first run only). With
//!   the TOTP secret, 2FA is on from the start (no recovery codes: they could
//!   not be shown to anyone); without it, the first sign-in must enroll.
//! - With no admin afterwards, the one-time setup code is logged: entering it
//!   at `POST /_ui/api/setup` creates the first admin. Every replica logs the
//!   same code; it is deleted once an admin exists.

use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::crypto::{password, TotpSecret};
use crate::state::AppState;
use crate::store::clock::secs;
use crate::store::users::{validate_email, AuthMethod, NewUser, RoleChoice};
use crate::store::{Store, StoreError};

/// Seed the initial admin and announce the setup state.
pub(crate) async fn prepare(app: &AppState) -> anyhow::Result<()> {
    let store = app.store()?;
    app.passwords()
        .warm_up()
        .await
        .context("preparing password hashing")?;
    seed_initial_admin(app, store).await?;
    if app.setup_complete().await? {
        store.meta().delete_setup_code().await?;
    } else {
        let code = store.meta().setup_code().await?;
        tracing::warn!(
            "setup required: no admin exists yet. Open /_ui/ and create the first admin \
             with the setup code {} (or set INITIAL_ADMIN_EMAIL and INITIAL_ADMIN_PASSWORD)",
            code.expose()
        );
    }
    Ok(())
}

async fn seed_initial_admin(app: &AppState, store: &Store) -> anyhow::Result<()> {
    let config = app.config();
    let (Some(email), Some(password)) = (
        config.initial_admin_email.as_deref(),
        config.initial_admin_password.as_ref(),
    ) else {
        return Ok(());
    };
    if store.users().count().await? > 0 {
        tracing::info!("users exist: INITIAL_ADMIN_* is ignored (it seeds the first run only)");
        return Ok(());
    }
    let email = validate_email(email).map_err(|m| anyhow::anyhow!("INITIAL_ADMIN_EMAIL: {m}"))?;
    password::check_rules(password.expose(), &email)
        .map_err(|m| anyhow::anyhow!("INITIAL_ADMIN_PASSWORD: {m}"))?;
    let totp = match &config.initial_admin_totp_secret {
        Some(s) => Some(TotpSecret::from_base32(s.expose()).ok_or_else(|| {
            anyhow::anyhow!("INITIAL_ADMIN_TOTP_SECRET: expected a base32 secret")
        })?),
        None => None,
    };
    let hash = app
        .passwords()
        .hash(password)
        .await
        .context("hashing INITIAL_ADMIN_PASSWORD")?;
    let created = store
        .users()
        .create(NewUser {
            email: &email,
            role: RoleChoice::FirstAdmin,
            auth_method: AuthMethod::Password,
            password_hash: Some(&hash),
            sso_subject: None,
            totp_secret: totp.as_ref(),
            must_change_password: false,
        })
        .await;
    match created {
        Ok(user) => {
            tracing::info!(
                user_id = %user.id,
                totp = user.totp_enabled,
                "seeded the initial admin from INITIAL_ADMIN_EMAIL"
            );
            Ok(())
        }
        // Another replica seeded at the same moment.
        Err(StoreError::Conflict(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Delete expired sessions, expired pending logins and stale failure
/// counters every `cleanup_interval`, until `stop`.
pub(crate) fn spawn_cleanup(app: AppState, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits this handle at shutdown"
    )]
    tokio::spawn(async move {
        let auth = app.config().tuning.auth.clone();
        let interval = auth.cleanup_interval.max(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(interval) => {}
            }
            let Some(store) = app.store_opt() else { return };
            let result = async {
                let sessions = store.sessions().delete_expired().await?;
                let logins = store.pending_logins().delete_expired().await?;
                let failures = store
                    .login_failures()
                    .delete_stale(secs(auth.lockout_window))
                    .await?;
                Ok::<_, StoreError>((sessions, logins, failures))
            }
            .await;
            match result {
                Ok((s, l, f)) if s + l + f > 0 => tracing::debug!(
                    sessions = s,
                    pending_logins = l,
                    login_failures = f,
                    "deleted expired sign-in state"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("cleaning up expired sign-in state: {e}"),
            }
        }
    })
}
