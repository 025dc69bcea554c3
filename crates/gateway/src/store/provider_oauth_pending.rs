//! Provider sign-ins under way (spec 5.10; interfaces-full.md 2.1, 2.2): the
//! `state` of an authorization (or the `device_code` of a device flow), the
//! user it belongs to and, for PKCE, the verifier, kept until the flow ends.
//!
//! - In the store, so any replica can finish a flow another one started.
//! - The key is kept only as its SHA-256, the verifier encrypted and bound
//!   to that digest: a copy of the table finishes no flow.
//! - Single use: [`ProviderOAuthPending::take`] deletes atomically, so a
//!   `state` replayed (here or on another replica) finds nothing.
//! - Bounded: entries expire (10 minutes for an authorization, the device
//!   code's own life for a device flow), expired ones go with each new
//!   entry, and a user keeps at most [`MAX_PER_USER`] at once (the oldest go).

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;
use crate::crypto::random::sha256_hex;

/// Sign-ins one user may have under way at once.
pub const MAX_PER_USER: i64 = 5;

/// A pending sign-in, as the step that finishes it needs it.
#[derive(Debug, Clone)]
pub struct PendingFlow {
    pub user_id: UserId,
    pub provider: String,
    /// The PKCE verifier (empty for flows without one).
    pub verifier: Secret,
}

#[derive(sqlx::FromRow)]
struct Row {
    user_id: UserId,
    provider: String,
    pkce_verifier: String,
}

fn verifier_context(key_hash: &str) -> String {
    format!("provider_oauth_pending.pkce_verifier:{key_hash}")
}

/// The provider-OAuth pending store.
pub struct ProviderOAuthPending<'a> {
    store: &'a Store,
}

impl<'a> ProviderOAuthPending<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ProviderOAuthPending { store }
    }

    /// Keep a new flow of `user` under `key` (the `state` or device code)
    /// for `ttl_secs`.
    pub async fn create(
        &self,
        key: &str,
        user: UserId,
        provider: &str,
        verifier: &Secret,
        ttl_secs: i64,
    ) -> Result<(), StoreError> {
        let key_hash = sha256_hex(key);
        let sealed = self
            .store
            .cipher()
            .encrypt_secret(verifier, &verifier_context(&key_hash))?;
        let at = now();
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query("DELETE FROM provider_oauth_pending WHERE expires_at <= $1")
                .bind(at)
                .execute(&mut *tx)
                .await?;
            // Make room: the user's oldest flows beyond the limit go.
            sqlx::query(
                "DELETE FROM provider_oauth_pending WHERE user_id = $1 AND state_hash NOT IN (\
                 SELECT state_hash FROM provider_oauth_pending WHERE user_id = $1 \
                 ORDER BY created_at DESC, state_hash DESC LIMIT $2)",
            )
            .bind(user)
            .bind(MAX_PER_USER - 1)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO provider_oauth_pending \
                 (state_hash, user_id, provider, pkce_verifier, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&key_hash)
            .bind(user)
            .bind(provider)
            .bind(&sealed)
            .bind(at)
            .bind(at.saturating_add(ttl_secs))
            .execute(&mut *tx)
            .await?;
            Ok(())
        }));
        Ok(())
    }

    /// The flow under `key` of `provider`, unless it expired or ended; left
    /// in place (a device flow is polled several times).
    pub async fn find(&self, key: &str, provider: &str) -> Result<Option<PendingFlow>, StoreError> {
        let key_hash = sha256_hex(key);
        let at = now();
        let row: Option<Row> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT user_id, provider, pkce_verifier FROM provider_oauth_pending \
                 WHERE state_hash = $1 AND provider = $2 AND expires_at > $3",
            )
            .bind(&key_hash)
            .bind(provider)
            .bind(at)
            .fetch_optional(p)
            .await?
        });
        row.map(|r| self.unseal(&key_hash, r)).transpose()
    }

    /// End the flow under `key` of `provider` and return it; `None` when it
    /// is unknown, expired, or was ended already (by this or another replica).
    pub async fn take(&self, key: &str, provider: &str) -> Result<Option<PendingFlow>, StoreError> {
        let key_hash = sha256_hex(key);
        let at = now();
        let row: Option<Row> = with_pool!(self.store, p => {
            sqlx::query_as(
                "DELETE FROM provider_oauth_pending \
                 WHERE state_hash = $1 AND provider = $2 AND expires_at > $3 \
                 RETURNING user_id, provider, pkce_verifier",
            )
            .bind(&key_hash)
            .bind(provider)
            .bind(at)
            .fetch_optional(p)
            .await?
        });
        row.map(|r| self.unseal(&key_hash, r)).transpose()
    }

    fn unseal(&self, key_hash: &str, row: Row) -> Result<PendingFlow, StoreError> {
        let verifier = self
            .store
            .cipher()
            .decrypt_secret(&row.pkce_verifier, &verifier_context(key_hash))?;
        Ok(PendingFlow {
            user_id: row.user_id,
            provider: row.provider,
            verifier,
        })
    }
}
