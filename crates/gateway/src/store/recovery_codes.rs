//! 2FA recovery codes (spec 2.6): eight per enrollment, stored as SHA-256
//! hashes with a used marker; written by [`super::users::Users::enable_totp`].
//! A code is spent with one conditional update, so it works once even when
//! two replicas race.

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, Store, StoreError};
use crate::crypto::random;

/// The recovery-codes repository.
pub struct RecoveryCodes<'a> {
    store: &'a Store,
}

impl<'a> RecoveryCodes<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        RecoveryCodes { store }
    }

    /// Spend the code `typed` (any case, spaces and hyphens ignored): true
    /// when it was one of the user's unused codes, which is now used.
    pub async fn redeem(&self, user_id: UserId, typed: &str) -> Result<bool, StoreError> {
        let hash = random::sha256_hex(&random::normalize_recovery_code(typed));
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "UPDATE totp_recovery_codes SET used_at = $3 \
                 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL",
            )
            .bind(user_id)
            .bind(&hash)
            .bind(now)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// How many unused codes the user has.
    pub async fn remaining(&self, user_id: UserId) -> Result<i64, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar::<_, i64>(
                "SELECT COUNT(*) FROM totp_recovery_codes WHERE user_id = $1 AND used_at IS NULL",
            )
            .bind(user_id)
            .fetch_one(p)
            .await?
        }))
    }
}
