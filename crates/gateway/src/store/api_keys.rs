//! API keys (spec 2.3): the hex SHA-256 of each key, never the key; a display
//! prefix, a label, creation and last-use times. Keys belong to a user and go
//! with the user (`ON DELETE CASCADE`).
//!
//! Deleting a key (or its user) is announced to every replica by a trigger
//! on PostgreSQL (migration 0002: `key:<hash>` on channel
//! `gateway_invalidate`), so no code path can forget it; the caller also
//! drops its own cache entry at once ([`crate::auth::keys::KeyCache`]).

use super::clock::now;
use super::ids::{ApiKeyId, UserId};
use super::{with_pool, write_tx, Store, StoreError};

/// Most keys one user may hold.
pub const MAX_KEYS_PER_USER: i64 = 100;

/// A stored key as its owner sees it in a list.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ApiKeyRecord {
    pub id: ApiKeyId,
    pub user_id: UserId,
    pub key_prefix: String,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

/// Who a key belongs to: what a `/v1` request is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyOwner {
    pub key_id: ApiKeyId,
    pub user_id: UserId,
}

/// A new key to store (the caller generated and hashed it).
#[derive(Debug, Clone, Copy)]
pub struct NewApiKey<'a> {
    pub user_id: UserId,
    /// Lower-case hex SHA-256 of the key.
    pub key_hash: &'a str,
    pub key_prefix: &'a str,
    pub label: &'a str,
}

/// The API-key repository.
pub struct ApiKeys<'a> {
    store: &'a Store,
}

impl<'a> ApiKeys<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ApiKeys { store }
    }

    /// Store a new key; 409 `conflict` when the user holds
    /// [`MAX_KEYS_PER_USER`] already (counted in the same transaction).
    pub async fn create(&self, key: NewApiKey<'_>) -> Result<ApiKeyRecord, StoreError> {
        let record = ApiKeyRecord {
            id: ApiKeyId::new(),
            user_id: key.user_id,
            key_prefix: key.key_prefix.to_owned(),
            label: key.label.to_owned(),
            created_at: now(),
            last_used_at: None,
        };
        with_pool!(self.store, p => write_tx!(p, tx => {
            let (held,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM api_keys WHERE user_id = $1")
                .bind(key.user_id)
                .fetch_one(&mut *tx)
                .await?;
            if held >= MAX_KEYS_PER_USER {
                return Err(StoreError::KeyLimit {
                    max: MAX_KEYS_PER_USER,
                });
            }
            sqlx::query(
                "INSERT INTO api_keys (id, user_id, key_hash, key_prefix, label, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(record.id)
            .bind(record.user_id)
            .bind(key.key_hash)
            .bind(&record.key_prefix)
            .bind(&record.label)
            .bind(record.created_at)
            .execute(&mut *tx)
            .await?;
            Ok(())
        }));
        Ok(record)
    }

    /// The keys of `user_id`, newest first.
    pub async fn list_for_user(&self, user_id: UserId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT id, user_id, key_prefix, label, created_at, last_used_at FROM api_keys \
                 WHERE user_id = $1 ORDER BY created_at DESC, id",
            )
            .bind(user_id)
            .fetch_all(p)
            .await?
        }))
    }

    /// The owner of the key whose hex SHA-256 is `key_hash`.
    pub async fn find_by_hash(&self, key_hash: &str) -> Result<Option<KeyOwner>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as("SELECT id AS key_id, user_id FROM api_keys WHERE key_hash = $1")
                .bind(key_hash)
                .fetch_optional(p)
                .await?
        }))
    }

    /// Delete key `id` if `user_id` owns it; its hash (for cache
    /// invalidation), or `None` when there is no such key of this user.
    pub async fn delete(
        &self,
        user_id: UserId,
        id: ApiKeyId,
    ) -> Result<Option<String>, StoreError> {
        let hash: Option<(String,)> = with_pool!(self.store, p => {
            sqlx::query_as("DELETE FROM api_keys WHERE id = $1 AND user_id = $2 RETURNING key_hash")
                .bind(id)
                .bind(user_id)
                .fetch_optional(p)
                .await?
        });
        Ok(hash.map(|(h,)| h))
    }

    /// Which of `hashes` still name a stored key (the periodic safety check
    /// of the lookup cache).
    pub async fn existing_hashes(&self, hashes: &[String]) -> Result<Vec<String>, StoreError> {
        let mut found = Vec::with_capacity(hashes.len());
        for chunk in hashes.chunks(500) {
            let rows: Vec<(String,)> = with_pool!(self.store, p => {
                let mut q = sqlx::QueryBuilder::new("SELECT key_hash FROM api_keys WHERE key_hash IN (");
                let mut list = q.separated(", ");
                for h in chunk {
                    list.push_bind(h.as_str());
                }
                q.push(")");
                q.build_query_as().fetch_all(p).await?
            });
            found.extend(rows.into_iter().map(|(h,)| h));
        }
        Ok(found)
    }

    /// Record the last use of keys, `(key, Unix seconds)`, in one
    /// transaction; a time never moves backwards.
    pub async fn touch_many(&self, uses: &[(ApiKeyId, i64)]) -> Result<(), StoreError> {
        if uses.is_empty() {
            return Ok(());
        }
        with_pool!(self.store, p => write_tx!(p, tx => {
            for (id, at) in uses {
                sqlx::query(
                    "UPDATE api_keys SET last_used_at = $1 \
                     WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)",
                )
                .bind(*at)
                .bind(*id)
                .execute(&mut *tx)
                .await?;
            }
            Ok(())
        }));
        Ok(())
    }
}
