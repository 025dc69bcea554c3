//! The stored configuration overlay (spec 2.7): key/value pairs that admins
//! set, layered over the environment, and the history of every change.
//!
//! - Secret values are encrypted (AES-256-GCM, bound to `config:<key>`) and
//!   come back as [`ConfigValue::Secret`], which never prints.
//! - Every write is one transaction: the values, their history rows and the
//!   pruning of the history to the last [`HISTORY_LIMIT`] entries.
//! - A change that sets the value a key already has is not a change: nothing
//!   is written and no history row is added.
//! - History rows of secret keys hold [`MASK`] instead of values.

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;

/// History entries kept.
pub const HISTORY_LIMIT: i64 = 1000;
/// What history shows for a secret value.
pub const MASK: &str = "********";

/// A stored value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigValue {
    Plain(String),
    Secret(Secret),
}

impl ConfigValue {
    pub fn is_secret(&self) -> bool {
        matches!(self, ConfigValue::Secret(_))
    }

    /// The value itself (a secret in clear: only for use, never for display).
    pub fn expose(&self) -> &str {
        match self {
            ConfigValue::Plain(v) => v,
            ConfigValue::Secret(s) => s.expose(),
        }
    }

    /// The value for display: secrets masked.
    pub fn display(&self) -> &str {
        match self {
            ConfigValue::Plain(v) => v,
            ConfigValue::Secret(_) => MASK,
        }
    }
}

/// A stored key with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub key: String,
    pub value: ConfigValue,
    pub updated_at: i64,
    pub updated_by: Option<UserId>,
}

/// One change of [`ConfigStore::set_many`]: `value: None` removes the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigChange<'a> {
    pub key: &'a str,
    pub value: Option<&'a str>,
    pub secret: bool,
}

/// One history row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct HistoryEntry {
    pub id: i64,
    pub key: String,
    /// `None`: the key was not set before.
    pub old_value: Option<String>,
    /// `None`: the key was removed.
    pub new_value: Option<String>,
    pub secret: bool,
    pub changed_by: Option<UserId>,
    /// The email of `changed_by` while that user exists.
    pub changed_by_email: Option<String>,
    /// Unix seconds.
    pub changed_at: i64,
}

#[derive(sqlx::FromRow)]
struct Row {
    key: String,
    value: String,
    secret: bool,
    updated_at: i64,
    updated_by: Option<UserId>,
}

fn context(key: &str) -> String {
    format!("config:{key}")
}

/// The configuration repository.
pub struct ConfigStore<'a> {
    store: &'a Store,
}

impl<'a> ConfigStore<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ConfigStore { store }
    }

    fn decode(&self, row: Row) -> Result<ConfigEntry, StoreError> {
        let value = if row.secret {
            ConfigValue::Secret(
                self.store
                    .cipher()
                    .decrypt_secret(&row.value, &context(&row.key))?,
            )
        } else {
            ConfigValue::Plain(row.value)
        };
        Ok(ConfigEntry {
            key: row.key,
            value,
            updated_at: row.updated_at,
            updated_by: row.updated_by,
        })
    }

    /// The stored value of `key`.
    pub async fn get(&self, key: &str) -> Result<Option<ConfigValue>, StoreError> {
        let row: Option<Row> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT key, value, secret, updated_at, updated_by FROM config WHERE key = $1",
            )
            .bind(key)
            .fetch_optional(p)
            .await?
        });
        row.map(|r| self.decode(r).map(|e| e.value)).transpose()
    }

    /// Every stored key, alphabetically.
    pub async fn list(&self) -> Result<Vec<ConfigEntry>, StoreError> {
        let rows: Vec<Row> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT key, value, secret, updated_at, updated_by FROM config ORDER BY key")
                .fetch_all(p)
                .await?
        });
        rows.into_iter().map(|r| self.decode(r)).collect()
    }

    /// Set one key. Returns whether the stored value changed.
    pub async fn set(
        &self,
        key: &str,
        value: &str,
        secret: bool,
        changed_by: Option<UserId>,
    ) -> Result<bool, StoreError> {
        let change = ConfigChange {
            key,
            value: Some(value),
            secret,
        };
        Ok(self.set_many(&[change], changed_by).await? == 1)
    }

    /// Remove one key. Returns whether it was set.
    pub async fn delete(&self, key: &str, changed_by: Option<UserId>) -> Result<bool, StoreError> {
        let change = ConfigChange {
            key,
            value: None,
            secret: false,
        };
        Ok(self.set_many(&[change], changed_by).await? == 1)
    }

    /// Apply `changes` all together or not at all, recording each real
    /// change in the history; returns how many changed.
    pub async fn set_many(
        &self,
        changes: &[ConfigChange<'_>],
        changed_by: Option<UserId>,
    ) -> Result<usize, StoreError> {
        // Encrypt before the transaction: no CPU work while holding the lock.
        let mut stored = Vec::with_capacity(changes.len());
        for c in changes {
            stored.push(match (c.value, c.secret) {
                (Some(v), true) => {
                    Some(self.store.cipher().encrypt(v.as_bytes(), &context(c.key))?)
                }
                (Some(v), false) => Some(v.to_owned()),
                (None, _) => None,
            });
        }
        let now = now();
        let cipher = self.store.cipher().clone();
        let changed = with_pool!(self.store, p => write_tx!(p, tx => {
            let mut changed = 0usize;
            for (c, new_stored) in changes.iter().zip(&stored) {
                let old: Option<(String, bool)> =
                    sqlx::query_as("SELECT value, secret FROM config WHERE key = $1")
                        .bind(c.key)
                        .fetch_optional(&mut *tx)
                        .await?;
                let old_plain = match &old {
                    Some((v, true)) => Some(cipher.decrypt_secret(v, &context(c.key))?.expose().to_owned()),
                    Some((v, false)) => Some(v.clone()),
                    None => None,
                };
                let same_secrecy = old.as_ref().is_none_or(|(_, s)| *s == c.secret);
                if old_plain.as_deref() == c.value && same_secrecy {
                    continue;
                }
                match new_stored {
                    Some(value) => {
                        sqlx::query(
                            "INSERT INTO config (key, value, secret, updated_at, updated_by) \
                             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO UPDATE SET \
                             value = excluded.value, secret = excluded.secret, \
                             updated_at = excluded.updated_at, updated_by = excluded.updated_by",
                        )
                        .bind(c.key)
                        .bind(value)
                        .bind(c.secret)
                        .bind(now)
                        .bind(changed_by)
                        .execute(&mut *tx)
                        .await?;
                    }
                    None => {
                        sqlx::query("DELETE FROM config WHERE key = $1")
                            .bind(c.key)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                let secret = c.secret || old.as_ref().is_some_and(|(_, s)| *s);
                let shown = |v: Option<&str>| v.map(|v| if secret { MASK.to_owned() } else { v.to_owned() });
                sqlx::query(
                    "INSERT INTO config_history (key, old_value, new_value, secret, changed_by, changed_at) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(c.key)
                .bind(shown(old_plain.as_deref()))
                .bind(shown(c.value))
                .bind(secret)
                .bind(changed_by)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                changed += 1;
            }
            if changed > 0 {
                // Keep the newest HISTORY_LIMIT rows. With fewer rows the
                // subquery is NULL and nothing matches.
                sqlx::query(
                    "DELETE FROM config_history WHERE id <= \
                     (SELECT id FROM config_history ORDER BY id DESC LIMIT 1 OFFSET $1)",
                )
                .bind(HISTORY_LIMIT)
                .execute(&mut *tx)
                .await?;
            }
            Ok(changed)
        }));
        Ok(changed)
    }

    /// The newest `limit` history entries (at most [`HISTORY_LIMIT`]), newest first.
    pub async fn history(&self, limit: i64) -> Result<Vec<HistoryEntry>, StoreError> {
        let limit = limit.clamp(0, HISTORY_LIMIT);
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT h.id, h.key, h.old_value, h.new_value, h.secret, h.changed_by, \
                        u.email AS changed_by_email, h.changed_at \
                 FROM config_history h LEFT JOIN users u ON u.id = h.changed_by \
                 ORDER BY h.id DESC LIMIT $1",
            )
            .bind(limit)
            .fetch_all(p)
            .await?
        }))
    }
}
