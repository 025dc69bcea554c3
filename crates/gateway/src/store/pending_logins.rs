//! Pending 2FA logins (spec 2.5a, 3.3): after a correct password of an
//! account with TOTP, a `login_token` (UUID) that the second step redeems.
//! Stored so any replica can finish the sign-in; valid for 5 minutes; single
//! use ([`PendingLogins::consume`] deletes it atomically); dropped after too
//! many wrong codes.

use super::clock::now;
use super::ids::{LoginToken, UserId};
use super::{with_pool, Store, StoreError};

/// A pending login.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PendingLogin {
    pub token: LoginToken,
    pub user_id: UserId,
    pub attempts: i64,
    pub expires_at: i64,
}

/// The pending-logins repository.
pub struct PendingLogins<'a> {
    store: &'a Store,
}

impl<'a> PendingLogins<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        PendingLogins { store }
    }

    /// A new token for `user_id`, valid for `ttl_secs`.
    pub async fn create(&self, user_id: UserId, ttl_secs: i64) -> Result<LoginToken, StoreError> {
        let token = LoginToken::new();
        let now = now();
        with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO pending_2fa_logins (token, user_id, attempts, created_at, expires_at) \
                 VALUES ($1, $2, 0, $3, $4)",
            )
            .bind(token)
            .bind(user_id)
            .bind(now)
            .bind(now.saturating_add(ttl_secs))
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(token)
    }

    /// The pending login `token`, unless expired or gone.
    pub async fn find(&self, token: LoginToken) -> Result<Option<PendingLogin>, StoreError> {
        let now = now();
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT token, user_id, attempts, expires_at FROM pending_2fa_logins \
                 WHERE token = $1 AND expires_at > $2",
            )
            .bind(token)
            .bind(now)
            .fetch_optional(p)
            .await?
        }))
    }

    /// Count a wrong code; at `max_attempts` the token is deleted. Returns
    /// whether the token is still usable.
    pub async fn record_failure(
        &self,
        token: LoginToken,
        max_attempts: i64,
    ) -> Result<bool, StoreError> {
        let attempts: Option<i64> = with_pool!(self.store, p => {
            sqlx::query_scalar(
                "UPDATE pending_2fa_logins SET attempts = attempts + 1 WHERE token = $1 \
                 RETURNING attempts",
            )
            .bind(token)
            .fetch_optional(p)
            .await?
        });
        match attempts {
            Some(n) if n < max_attempts => Ok(true),
            Some(_) => {
                self.delete(token).await?;
                Ok(false)
            }
            None => Ok(false),
        }
    }

    /// Redeem `token`: delete it and return its user, or `None` when it was
    /// expired or already redeemed (by this or another replica).
    pub async fn consume(&self, token: LoginToken) -> Result<Option<UserId>, StoreError> {
        let now = now();
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar(
                "DELETE FROM pending_2fa_logins WHERE token = $1 AND expires_at > $2 \
                 RETURNING user_id",
            )
            .bind(token)
            .bind(now)
            .fetch_optional(p)
            .await?
        }))
    }

    pub async fn delete(&self, token: LoginToken) -> Result<(), StoreError> {
        with_pool!(self.store, p => {
            sqlx::query("DELETE FROM pending_2fa_logins WHERE token = $1")
                .bind(token)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// Delete expired tokens; the number deleted.
    pub async fn delete_expired(&self) -> Result<u64, StoreError> {
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM pending_2fa_logins WHERE expires_at <= $1")
                .bind(now)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(done)
    }
}
