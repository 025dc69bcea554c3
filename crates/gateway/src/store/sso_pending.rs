//! SSO sign-ins under way (spec 2.5a, 5.3): what the callback of an OpenID
//! Connect sign-in needs, kept from the redirect to the identity provider
//! until the provider sends the browser back.
//!
//! - In the store, so the callback may reach any replica.
//! - The `state` is kept only as its SHA-256; the code verifier and the
//!   nonce are encrypted, bound to the row (its key and every other column),
//!   so a copy of the table finishes no sign-in and an edited row decrypts
//!   nothing.
//! - Single use: [`SsoPending::take`] deletes the row atomically, so a
//!   replayed `state` finds nothing, here or on another replica.
//! - Bounded: a row lives [`SsoPendingLimits::ttl_secs`], expired rows go
//!   with each new one, and at most [`SsoPendingLimits::capacity`] are kept:
//!   when full, the oldest go to make room (docs/decisions.md says why).

use sqlx::{Postgres, Sqlite, Transaction};

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;
use crate::crypto::random::sha256_hex;

/// A sign-in to keep.
#[derive(Debug, Clone, Copy)]
pub struct NewSsoLogin<'a> {
    /// The `state` sent to the provider; stored as its SHA-256 only.
    pub state: &'a str,
    pub code_verifier: &'a Secret,
    pub nonce: &'a Secret,
    /// SHA-256 (hex) of the browser-binding cookie's value.
    pub binding_digest: &'a str,
    /// The `redirect_uri` sent to `/authorize`; the token request repeats it.
    pub redirect_uri: &'a str,
    pub issuer: &'a str,
    pub client_id: &'a str,
    /// `Some`: link the identity to this account; `None`: sign in.
    pub link_user: Option<UserId>,
}

/// A sign-in, as its callback needs it.
#[derive(Debug, Clone)]
pub struct SsoLogin {
    pub code_verifier: Secret,
    pub nonce: Secret,
    pub binding_digest: String,
    pub redirect_uri: String,
    pub issuer: String,
    pub client_id: String,
    pub link_user: Option<UserId>,
    /// Unix seconds.
    pub created_at: i64,
    pub expires_at: i64,
}

/// How long a sign-in may take and how many may be under way at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsoPendingLimits {
    pub ttl_secs: i64,
    pub capacity: i64,
}

const SIGN_IN: &str = "sign_in";
const LINK: &str = "link";

#[derive(sqlx::FromRow)]
struct Row {
    code_verifier: String,
    nonce: String,
    binding_digest: String,
    redirect_uri: String,
    issuer: String,
    client_id: String,
    purpose: String,
    link_user_id: Option<UserId>,
    created_at: i64,
    expires_at: i64,
}

/// The plain columns of a row, which the encrypted ones are bound to.
struct Plain<'a> {
    state_hash: &'a str,
    binding_digest: &'a str,
    redirect_uri: &'a str,
    issuer: &'a str,
    client_id: &'a str,
    link_user: Option<UserId>,
    created_at: i64,
    expires_at: i64,
}

impl Plain<'_> {
    /// The encryption context of `column`: every plain value, JSON-encoded
    /// so no two rows share one.
    fn context(&self, column: &str) -> String {
        let values = [
            format!("sso_pending_logins.{column}"),
            self.state_hash.to_owned(),
            self.binding_digest.to_owned(),
            self.redirect_uri.to_owned(),
            self.issuer.to_owned(),
            self.client_id.to_owned(),
            self.link_user.map(|u| u.to_string()).unwrap_or_default(),
            self.created_at.to_string(),
            self.expires_at.to_string(),
        ];
        serde_json::to_string(&values).unwrap_or_default()
    }
}

/// The SSO pending-sign-in store.
pub struct SsoPending<'a> {
    store: &'a Store,
}

impl<'a> SsoPending<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        SsoPending { store }
    }

    /// Keep a new sign-in for `limits.ttl_secs`. Expired sign-ins go first;
    /// when `limits.capacity` are still under way, the oldest go to make
    /// room. Returns how many went for room (not counting expired ones).
    pub async fn create(
        &self,
        new: &NewSsoLogin<'_>,
        limits: SsoPendingLimits,
    ) -> Result<u64, StoreError> {
        let state_hash = sha256_hex(new.state);
        let created_at = now();
        let expires_at = created_at.saturating_add(limits.ttl_secs);
        let purpose = if new.link_user.is_some() {
            LINK
        } else {
            SIGN_IN
        };
        let plain = Plain {
            state_hash: &state_hash,
            binding_digest: new.binding_digest,
            redirect_uri: new.redirect_uri,
            issuer: new.issuer,
            client_id: new.client_id,
            link_user: new.link_user,
            created_at,
            expires_at,
        };
        let cipher = self.store.cipher();
        let verifier = cipher.encrypt_secret(new.code_verifier, &plain.context("code_verifier"))?;
        let nonce = cipher.encrypt_secret(new.nonce, &plain.context("nonce"))?;
        let keep = limits.capacity.max(1);
        let dropped = with_pool!(self.store, p => write_tx!(p, tx => {
            tx.serialise_sso_inserts().await?;
            sqlx::query("DELETE FROM sso_pending_logins WHERE expires_at <= $1")
                .bind(created_at)
                .execute(&mut *tx)
                .await?;
            let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sso_pending_logins")
                .fetch_one(&mut *tx)
                .await?;
            let over = held.saturating_sub(keep - 1);
            let mut dropped = 0;
            if over > 0 {
                dropped = sqlx::query(
                    "DELETE FROM sso_pending_logins WHERE state_hash IN (\
                     SELECT state_hash FROM sso_pending_logins \
                     ORDER BY created_at, state_hash LIMIT $1)",
                )
                .bind(over)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            }
            sqlx::query(
                "INSERT INTO sso_pending_logins (state_hash, code_verifier, nonce, \
                 binding_digest, redirect_uri, issuer, client_id, purpose, link_user_id, \
                 created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(&state_hash)
            .bind(&verifier)
            .bind(&nonce)
            .bind(new.binding_digest)
            .bind(new.redirect_uri)
            .bind(new.issuer)
            .bind(new.client_id)
            .bind(purpose)
            .bind(new.link_user)
            .bind(created_at)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
            Ok(dropped)
        }));
        Ok(dropped)
    }

    /// End the sign-in of `state` and return it; `None` when it is unknown,
    /// expired, or was ended already (by this or another replica). An
    /// expired sign-in is deleted too: a `state` is spent by its first use.
    pub async fn take(&self, state: &str) -> Result<Option<SsoLogin>, StoreError> {
        let state_hash = sha256_hex(state);
        let row: Option<Row> = with_pool!(self.store, p => {
            sqlx::query_as(
                "DELETE FROM sso_pending_logins WHERE state_hash = $1 \
                 RETURNING code_verifier, nonce, binding_digest, redirect_uri, issuer, \
                 client_id, purpose, link_user_id, created_at, expires_at",
            )
            .bind(&state_hash)
            .fetch_optional(p)
            .await?
        });
        match row {
            Some(row) if row.expires_at > now() => self.unseal(&state_hash, row).map(Some),
            _ => Ok(None),
        }
    }

    /// Sign-ins kept (expired ones included until the next insert).
    pub async fn count(&self) -> Result<i64, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar("SELECT COUNT(*) FROM sso_pending_logins")
                .fetch_one(p)
                .await?
        }))
    }

    fn unseal(&self, state_hash: &str, row: Row) -> Result<SsoLogin, StoreError> {
        let link_user = match (row.purpose.as_str(), row.link_user_id) {
            (SIGN_IN, None) => None,
            (LINK, Some(user)) => Some(user),
            (other, _) => {
                return Err(StoreError::Corrupt(format!(
                    "sso_pending_logins.purpose '{other}'"
                )))
            }
        };
        let plain = Plain {
            state_hash,
            binding_digest: &row.binding_digest,
            redirect_uri: &row.redirect_uri,
            issuer: &row.issuer,
            client_id: &row.client_id,
            link_user,
            created_at: row.created_at,
            expires_at: row.expires_at,
        };
        let cipher = self.store.cipher();
        let code_verifier =
            cipher.decrypt_secret(&row.code_verifier, &plain.context("code_verifier"))?;
        let nonce = cipher.decrypt_secret(&row.nonce, &plain.context("nonce"))?;
        Ok(SsoLogin {
            code_verifier,
            nonce,
            binding_digest: row.binding_digest,
            redirect_uri: row.redirect_uri,
            issuer: row.issuer,
            client_id: row.client_id,
            link_user,
            created_at: row.created_at,
            expires_at: row.expires_at,
        })
    }
}

/// Serialises new sign-ins, so concurrent ones (on any replica) cannot
/// together keep more than the capacity.
trait SerialiseSsoInserts {
    async fn serialise_sso_inserts(&mut self) -> Result<(), sqlx::Error>;
}

impl SerialiseSsoInserts for Transaction<'static, Sqlite> {
    /// `BEGIN IMMEDIATE` already holds SQLite's single write lock.
    async fn serialise_sso_inserts(&mut self) -> Result<(), sqlx::Error> {
        Ok(())
    }
}

impl SerialiseSsoInserts for Transaction<'static, Postgres> {
    /// A transaction-scoped advisory lock of this schema (as the role lock).
    async fn serialise_sso_inserts(&mut self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))")
            .bind(SSO_INSERT_LOCK_CLASS)
            .execute(&mut **self)
            .await
            .map(|_| ())
    }
}

/// The advisory lock class of new SSO sign-ins (an arbitrary constant).
const SSO_INSERT_LOCK_CLASS: i32 = 0x6777_7370;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{memory_store, user};

    const LIMITS: SsoPendingLimits = SsoPendingLimits {
        ttl_secs: 600,
        capacity: 10_000,
    };

    fn new_login<'a>(state: &'a str, secret: &'a Secret) -> NewSsoLogin<'a> {
        NewSsoLogin {
            state,
            code_verifier: secret,
            nonce: secret,
            binding_digest: "b1",
            redirect_uri: "http://gw.test/cb",
            issuer: "http://idp.test",
            client_id: "client",
            link_user: None,
        }
    }

    #[tokio::test]
    async fn a_state_is_taken_once_with_everything_the_callback_needs() {
        let store = memory_store().await;
        let ann = user(&store, "ann@example.com").await;
        let pending = store.sso_pending();
        let (verifier, nonce) = (Secret::new("the-verifier"), Secret::new("the-nonce"));
        let new = NewSsoLogin {
            nonce: &nonce,
            link_user: Some(ann),
            ..new_login("state-1", &verifier)
        };
        assert_eq!(pending.create(&new, LIMITS).await.unwrap(), 0);
        let taken = pending.take("state-1").await.unwrap().unwrap();
        assert_eq!(taken.code_verifier.expose(), "the-verifier");
        assert_eq!(taken.nonce.expose(), "the-nonce");
        assert_eq!(taken.binding_digest, "b1");
        assert_eq!(taken.redirect_uri, "http://gw.test/cb");
        assert_eq!(taken.issuer, "http://idp.test");
        assert_eq!(taken.client_id, "client");
        assert_eq!(taken.link_user, Some(ann));
        assert_eq!(taken.expires_at - taken.created_at, 600);
        assert!(pending.take("state-1").await.unwrap().is_none());
        assert!(pending.take("never").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_state_and_secrets_are_not_stored_in_the_clear() {
        let store = memory_store().await;
        let secret = Secret::new("verifier-in-the-clear");
        store
            .sso_pending()
            .create(&new_login("state-in-the-clear", &secret), LIMITS)
            .await
            .unwrap();
        let crate::store::Pool::Sqlite(p) = store.pool() else {
            unreachable!("the unit-test store is SQLite")
        };
        let (hash, verifier, nonce): (String, String, String) =
            sqlx::query_as("SELECT state_hash, code_verifier, nonce FROM sso_pending_logins")
                .fetch_one(p)
                .await
                .unwrap();
        assert_eq!(hash, sha256_hex("state-in-the-clear"));
        assert!(!verifier.contains("verifier-in-the-clear"));
        assert!(!nonce.contains("verifier-in-the-clear"));

        // An edited row decrypts nothing: the secrets are bound to it.
        sqlx::query("UPDATE sso_pending_logins SET binding_digest = 'attacker'")
            .execute(p)
            .await
            .unwrap();
        assert!(store
            .sso_pending()
            .take("state-in-the-clear")
            .await
            .is_err());
    }

    #[tokio::test]
    async fn an_expired_sign_in_is_spent_and_refused() {
        let store = memory_store().await;
        let secret = Secret::new("v");
        let expired = SsoPendingLimits {
            ttl_secs: 0,
            ..LIMITS
        };
        let pending = store.sso_pending();
        pending
            .create(&new_login("old", &secret), expired)
            .await
            .unwrap();
        assert!(pending.take("old").await.unwrap().is_none());
        assert_eq!(pending.count().await.unwrap(), 0);
        // Expired rows also go with the next new one.
        pending
            .create(&new_login("old-2", &secret), expired)
            .await
            .unwrap();
        pending
            .create(&new_login("fresh", &secret), LIMITS)
            .await
            .unwrap();
        assert_eq!(pending.count().await.unwrap(), 1);
    }

    #[tokio::test]
    async fn when_full_the_oldest_go() {
        let store = memory_store().await;
        let secret = Secret::new("v");
        let small = SsoPendingLimits {
            capacity: 3,
            ..LIMITS
        };
        let pending = store.sso_pending();
        for state in ["s1", "s2", "s3"] {
            assert_eq!(
                pending
                    .create(&new_login(state, &secret), small)
                    .await
                    .unwrap(),
                0
            );
        }
        // Older by a second than the rest, whatever the clock's second.
        let crate::store::Pool::Sqlite(p) = store.pool() else {
            unreachable!("the unit-test store is SQLite")
        };
        sqlx::query(
            "UPDATE sso_pending_logins SET created_at = created_at - 1 WHERE state_hash = $1",
        )
        .bind(sha256_hex("s2"))
        .execute(p)
        .await
        .unwrap();
        assert_eq!(
            pending
                .create(&new_login("s4", &secret), small)
                .await
                .unwrap(),
            1
        );
        assert_eq!(pending.count().await.unwrap(), 3);
        assert!(
            pending.take("s2").await.unwrap().is_none(),
            "the oldest went"
        );
        for state in ["s4", "s1"] {
            assert!(pending.take(state).await.unwrap().is_some(), "{state}");
        }
    }
}
