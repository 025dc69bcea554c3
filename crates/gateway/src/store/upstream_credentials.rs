//! Per-user upstream credentials of the `primary` provider (spec 2.4, 5.8)
//! and the device authorizations that obtain them from the web UI.
//!
//! - The refresh token and the client secret are encrypted at rest, each
//!   bound to its column and user (a value copied to another row does not
//!   decrypt); client id and regions are plain.
//! - A device authorization waits in `upstream_device_authorizations`, keyed
//!   by the SHA-256 of its device code, so the poll may reach any replica.
//! - Saving or deleting a user's credentials announces `creds:<user id>` on
//!   [`INVALIDATE_CHANNEL`] (PostgreSQL, at commit), so every replica drops
//!   its cached token source for that user. A rotated refresh token
//!   ([`UpstreamCredentialStore::update_refresh_token`]) is not announced: the
//!   replica that rotated keeps its access token, and another replica whose
//!   refresh is refused re-reads the row (see `credentials::per_user`).

use sqlx::{Postgres, Sqlite, Transaction};

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;

/// The PostgreSQL channel of cross-replica cache invalidation. Payloads:
/// `key:<hex sha-256>` (an API key was deleted; sent by a trigger) and
/// `creds:<user id>` (upstream credentials saved or deleted).
pub const INVALIDATE_CHANNEL: &str = "gateway_invalidate";

/// One user's upstream credentials, decrypted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamCredentials {
    pub user_id: UserId,
    pub refresh_token: Secret,
    /// Region of the primary API calls.
    pub upstream_region: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// Region of the SSO OIDC endpoint (may differ from `upstream_region`).
    pub sso_region: String,
    pub sso_start_url: Option<String>,
    /// Unix seconds after which the client registration is void.
    pub client_expires_at: Option<i64>,
    /// The organization account's profile (`None` for individual accounts).
    pub profile_arn: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A device authorization waiting for the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDevice {
    /// Lower-case hex SHA-256 of the device code.
    pub device_code_hash: String,
    pub user_id: UserId,
    pub client_id: String,
    pub client_secret: Secret,
    pub client_expires_at: Option<i64>,
    pub sso_start_url: String,
    pub sso_region: String,
    pub upstream_region: String,
    pub created_at: i64,
    pub expires_at: i64,
}

#[derive(sqlx::FromRow)]
struct CredentialRow {
    user_id: UserId,
    refresh_token: String,
    upstream_region: String,
    oauth_client_id: String,
    oauth_client_secret: String,
    oauth_sso_region: String,
    sso_start_url: Option<String>,
    client_expires_at: Option<i64>,
    profile_arn: Option<String>,
    created_at: i64,
    updated_at: i64,
}

#[derive(sqlx::FromRow)]
struct PendingRow {
    device_code_hash: String,
    user_id: UserId,
    client_id: String,
    client_secret: String,
    client_expires_at: Option<i64>,
    sso_start_url: String,
    sso_region: String,
    upstream_region: String,
    created_at: i64,
    expires_at: i64,
}

fn refresh_context(user: UserId) -> String {
    format!("user_upstream_credentials.refresh_token:{user}")
}

fn secret_context(user: UserId) -> String {
    format!("user_upstream_credentials.oauth_client_secret:{user}")
}

fn pending_context(hash: &str) -> String {
    format!("upstream_device_authorizations.client_secret:{hash}")
}

/// Announce a payload to every replica when the transaction commits
/// (PostgreSQL); SQLite serves one replica and has nothing to tell.
pub(crate) trait Announce {
    async fn announce(&mut self, payload: &str) -> Result<(), sqlx::Error>;
}

impl Announce for Transaction<'static, Sqlite> {
    async fn announce(&mut self, _payload: &str) -> Result<(), sqlx::Error> {
        Ok(())
    }
}

impl Announce for Transaction<'static, Postgres> {
    async fn announce(&mut self, payload: &str) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(INVALIDATE_CHANNEL)
            .bind(payload)
            .execute(&mut **self)
            .await
            .map(|_| ())
    }
}

/// The `creds:` payload of `user`.
pub fn creds_payload(user: UserId) -> String {
    format!("creds:{user}")
}

/// The upstream-credential repository.
pub struct UpstreamCredentialStore<'a> {
    store: &'a Store,
}

impl<'a> UpstreamCredentialStore<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        UpstreamCredentialStore { store }
    }

    /// The credentials of `user`, if any.
    pub async fn get(&self, user: UserId) -> Result<Option<UpstreamCredentials>, StoreError> {
        let row: Option<CredentialRow> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT user_id, refresh_token, upstream_region, oauth_client_id, \
                 oauth_client_secret, oauth_sso_region, sso_start_url, client_expires_at, \
                 profile_arn, created_at, updated_at FROM user_upstream_credentials \
                 WHERE user_id = $1",
            )
            .bind(user)
            .fetch_optional(p)
            .await?
        });
        let Some(row) = row else {
            return Ok(None);
        };
        let cipher = self.store.cipher();
        Ok(Some(UpstreamCredentials {
            user_id: row.user_id,
            refresh_token: cipher.decrypt_secret(&row.refresh_token, &refresh_context(user))?,
            upstream_region: row.upstream_region,
            client_id: row.oauth_client_id,
            client_secret: cipher
                .decrypt_secret(&row.oauth_client_secret, &secret_context(user))?,
            sso_region: row.oauth_sso_region,
            sso_start_url: row.sso_start_url,
            client_expires_at: row.client_expires_at,
            profile_arn: row.profile_arn,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }))
    }

    /// Whether `user` has credentials (without decrypting them).
    pub async fn exists(&self, user: UserId) -> Result<bool, StoreError> {
        let (found,): (bool,) = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT EXISTS (SELECT 1 FROM user_upstream_credentials WHERE user_id = $1)",
            )
            .bind(user)
            .fetch_one(p)
            .await?
        });
        Ok(found)
    }

    /// Replace a rotated refresh token (not announced: see the module doc).
    pub async fn update_refresh_token(
        &self,
        user: UserId,
        refresh_token: &Secret,
    ) -> Result<bool, StoreError> {
        let sealed = self
            .store
            .cipher()
            .encrypt_secret(refresh_token, &refresh_context(user))?;
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "UPDATE user_upstream_credentials SET refresh_token = $1, updated_at = $2 \
                 WHERE user_id = $3",
            )
            .bind(&sealed)
            .bind(now())
            .bind(user)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Delete the credentials of `user` (and any pending authorization);
    /// false when there were none.
    pub async fn delete(&self, user: UserId) -> Result<bool, StoreError> {
        let done = with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query("DELETE FROM user_upstream_credentials WHERE user_id = $1")
                .bind(user)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query("DELETE FROM upstream_device_authorizations WHERE user_id = $1")
                .bind(user)
                .execute(&mut *tx)
                .await?;
            tx.announce(&creds_payload(user)).await?;
            Ok(done)
        }));
        Ok(done == 1)
    }

    /// Keep a started device authorization, replacing the user's earlier
    /// ones (one flow at a time per user) and dropping expired ones.
    pub async fn start_pending(&self, pending: &PendingDevice) -> Result<(), StoreError> {
        let sealed = self.store.cipher().encrypt_secret(
            &pending.client_secret,
            &pending_context(&pending.device_code_hash),
        )?;
        let now = now();
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query(
                "DELETE FROM upstream_device_authorizations WHERE user_id = $1 OR expires_at < $2",
            )
            .bind(pending.user_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO upstream_device_authorizations (device_code_hash, user_id, \
                 client_id, client_secret, client_expires_at, sso_start_url, sso_region, \
                 upstream_region, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(&pending.device_code_hash)
            .bind(pending.user_id)
            .bind(&pending.client_id)
            .bind(&sealed)
            .bind(pending.client_expires_at)
            .bind(&pending.sso_start_url)
            .bind(&pending.sso_region)
            .bind(&pending.upstream_region)
            .bind(pending.created_at)
            .bind(pending.expires_at)
            .execute(&mut *tx)
            .await?;
            Ok(())
        }));
        Ok(())
    }

    /// The pending authorization of `user` with this device-code hash.
    pub async fn pending(
        &self,
        user: UserId,
        device_code_hash: &str,
    ) -> Result<Option<PendingDevice>, StoreError> {
        let row: Option<PendingRow> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT device_code_hash, user_id, client_id, client_secret, client_expires_at, \
                 sso_start_url, sso_region, upstream_region, created_at, expires_at \
                 FROM upstream_device_authorizations WHERE device_code_hash = $1 AND user_id = $2",
            )
            .bind(device_code_hash)
            .bind(user)
            .fetch_optional(p)
            .await?
        });
        let Some(row) = row else {
            return Ok(None);
        };
        let client_secret = self
            .store
            .cipher()
            .decrypt_secret(&row.client_secret, &pending_context(&row.device_code_hash))?;
        Ok(Some(PendingDevice {
            device_code_hash: row.device_code_hash,
            user_id: row.user_id,
            client_id: row.client_id,
            client_secret,
            client_expires_at: row.client_expires_at,
            sso_start_url: row.sso_start_url,
            sso_region: row.sso_region,
            upstream_region: row.upstream_region,
            created_at: row.created_at,
            expires_at: row.expires_at,
        }))
    }

    /// Forget a pending authorization (it ended without credentials).
    pub async fn drop_pending(&self, device_code_hash: &str) -> Result<(), StoreError> {
        with_pool!(self.store, p => {
            sqlx::query("DELETE FROM upstream_device_authorizations WHERE device_code_hash = $1")
                .bind(device_code_hash)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// Finish a device authorization: store `creds` (replacing earlier ones)
    /// and forget the pending row, in one transaction; announced.
    pub async fn complete(
        &self,
        device_code_hash: &str,
        creds: &UpstreamCredentials,
    ) -> Result<(), StoreError> {
        let user = creds.user_id;
        let cipher = self.store.cipher();
        let refresh = cipher.encrypt_secret(&creds.refresh_token, &refresh_context(user))?;
        let secret = cipher.encrypt_secret(&creds.client_secret, &secret_context(user))?;
        let now = now();
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query(
                "INSERT INTO user_upstream_credentials (user_id, refresh_token, upstream_region, \
                 oauth_client_id, oauth_client_secret, oauth_sso_region, sso_start_url, \
                 client_expires_at, profile_arn, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) \
                 ON CONFLICT (user_id) DO UPDATE SET refresh_token = excluded.refresh_token, \
                 upstream_region = excluded.upstream_region, \
                 oauth_client_id = excluded.oauth_client_id, \
                 oauth_client_secret = excluded.oauth_client_secret, \
                 oauth_sso_region = excluded.oauth_sso_region, \
                 sso_start_url = excluded.sso_start_url, \
                 client_expires_at = excluded.client_expires_at, \
                 profile_arn = excluded.profile_arn, \
                 updated_at = excluded.updated_at",
            )
            .bind(user)
            .bind(&refresh)
            .bind(&creds.upstream_region)
            .bind(&creds.client_id)
            .bind(&secret)
            .bind(&creds.sso_region)
            .bind(&creds.sso_start_url)
            .bind(creds.client_expires_at)
            .bind(&creds.profile_arn)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM upstream_device_authorizations WHERE device_code_hash = $1")
                .bind(device_code_hash)
                .execute(&mut *tx)
                .await?;
            tx.announce(&creds_payload(user)).await?;
            Ok(())
        }));
        Ok(())
    }
}
