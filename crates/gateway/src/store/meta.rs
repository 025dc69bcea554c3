//! Store-wide facts in the `meta` table:
//!
//! - the key check: a known text encrypted with the key of the first start.
//!   Every start decrypts it; a different key is [`StoreError::WrongKey`], a
//!   clear start-up error instead of garbage secrets later;
//! - the one-time setup code (encrypted) that lets the first person create the
//!   first admin account when no admin exists and none was seeded. Every
//!   replica shows the same code; it is deleted once setup is complete;
//! - whether the model registry was seeded (the first start with it).

use super::clock::now;
use super::{with_pool, Store, StoreError};
use crate::config::Secret;
use crate::crypto::{random, CryptoError};

const KEY_CHECK: &str = "key_check";
const KEY_CHECK_TEXT: &str = "chat-gateway key check v1";
const SETUP_CODE: &str = "setup_code";
const MODEL_REGISTRY_SEEDED: &str = "model_registry_seeded";
/// Bytes of randomness in a setup code (128 bits).
const SETUP_CODE_BYTES: usize = 16;

/// The meta repository.
pub struct Meta<'a> {
    store: &'a Store,
}

impl<'a> Meta<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Meta { store }
    }

    /// The version of the last migration applied (the schema's version).
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: Option<i64> = with_pool!(self.store, p => {
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(p)
                .await?
        });
        Ok(version.unwrap_or(0))
    }

    async fn get(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
                .bind(key)
                .fetch_optional(p)
                .await?
        }))
    }

    /// Insert unless present; the value now stored.
    async fn get_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        let now = now();
        with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(value)
            .bind(now)
            .execute(p)
            .await?
            .rows_affected()
        });
        self.get(key)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("meta.{key} vanished")))
    }

    /// Check the cipher's key against the stored check value (written on
    /// first start).
    pub(crate) async fn verify_key(&self) -> Result<(), StoreError> {
        let cipher = self.store.cipher();
        let stored = match self.get(KEY_CHECK).await? {
            Some(v) => v,
            None => {
                let fresh = cipher.encrypt(KEY_CHECK_TEXT.as_bytes(), KEY_CHECK)?;
                self.get_or_insert(KEY_CHECK, &fresh).await?
            }
        };
        match cipher.decrypt(&stored, KEY_CHECK) {
            Ok(text) if text == KEY_CHECK_TEXT.as_bytes() => Ok(()),
            Ok(_) | Err(CryptoError::Decrypt) => Err(StoreError::WrongKey),
            Err(other) => Err(other.into()),
        }
    }

    /// The setup code, created on first call.
    pub async fn setup_code(&self) -> Result<Secret, StoreError> {
        let cipher = self.store.cipher();
        let stored = match self.get(SETUP_CODE).await? {
            Some(v) => v,
            None => {
                let code = Secret::new(random::token(SETUP_CODE_BYTES));
                let fresh = cipher.encrypt_secret(&code, SETUP_CODE)?;
                self.get_or_insert(SETUP_CODE, &fresh).await?
            }
        };
        Ok(cipher.decrypt_secret(&stored, SETUP_CODE)?)
    }

    /// Claim the one-time seeding of the model registry: true for the one
    /// caller (of every replica, ever) that should seed it.
    pub async fn claim_registry_seeding(&self) -> Result<bool, StoreError> {
        if self.get(MODEL_REGISTRY_SEEDED).await?.is_some() {
            return Ok(false);
        }
        let mine = random::token(16);
        Ok(self.get_or_insert(MODEL_REGISTRY_SEEDED, &mine).await? == mine)
    }

    /// Forget the setup code (setup is complete).
    pub async fn delete_setup_code(&self) -> Result<(), StoreError> {
        with_pool!(self.store, p => {
            sqlx::query("DELETE FROM meta WHERE key = $1")
                .bind(SETUP_CODE)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(())
    }
}
