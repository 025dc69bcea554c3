//! API keys (spec 2.3): the hex SHA-256 of each key, never the key; a display
//! prefix, a label, creation and last-use times. Keys belong to a user and go
//! with the user (`ON DELETE CASCADE`).
//!
//! Deleting a key (or its user) is announced to every replica by a trigger
//! on PostgreSQL (migration 0002: `key:<hash>` on channel
//! `gateway_invalidate`), so no code path can forget it; the caller also
//! drops its own cache entry at once ([`crate::auth::keys::KeyCache`]). A
//! change of a key's rules (expiry, allowed models) is announced the same
//! way, from the transaction that makes it.

use super::clock::now;
use super::ids::{ApiKeyId, UserId};
use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, Store, StoreError};

/// Most keys one user may hold.
pub const MAX_KEYS_PER_USER: i64 = 100;

/// A stored key as its owner sees it in a list.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ApiKeyRecord {
    pub id: ApiKeyId,
    pub user_id: UserId,
    pub key_prefix: String,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    /// Unix seconds from which the key is refused.
    pub expires_at: Option<i64>,
    /// The only models the key may call (names as on `/v1`); `None`: any.
    #[sqlx(try_from = "ModelList")]
    pub allowed_models: Option<Vec<String>>,
    /// Budget and rate limits (read by `limits::policy::Limits::of`).
    #[sqlx(flatten)]
    pub limits: LimitColumns,
}

/// The four limit columns of a key or a user, as stored.
#[derive(Debug, Clone, PartialEq, Default, sqlx::FromRow)]
pub struct LimitColumns {
    pub budget_usd: Option<f64>,
    pub budget_period: Option<String>,
    pub rpm_limit: Option<i64>,
    pub tpm_limit: Option<i64>,
}

/// The user's limit columns beside a key's, as the lookup reads them.
#[derive(Debug, Clone, PartialEq, Default, sqlx::FromRow)]
pub struct UserLimitColumns {
    pub user_budget_usd: Option<f64>,
    pub user_budget_period: Option<String>,
    pub user_rpm_limit: Option<i64>,
    pub user_tpm_limit: Option<i64>,
}

/// `allowed_models` as stored: a JSON array of names, or NULL.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
struct ModelList(Option<String>);

impl TryFrom<ModelList> for Option<Vec<String>> {
    type Error = serde_json::Error;
    fn try_from(stored: ModelList) -> Result<Self, Self::Error> {
        stored.0.map(|json| serde_json::from_str(&json)).transpose()
    }
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
    pub expires_at: Option<i64>,
    pub allowed_models: Option<&'a [String]>,
    pub limits: &'a LimitColumns,
}

/// A found key: its owner and its rules.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FoundKey {
    #[sqlx(flatten)]
    pub owner: KeyOwner,
    pub expires_at: Option<i64>,
    #[sqlx(try_from = "ModelList")]
    pub allowed_models: Option<Vec<String>>,
    #[sqlx(flatten)]
    pub limits: LimitColumns,
    #[sqlx(flatten)]
    pub user_limits: UserLimitColumns,
}

/// A change of a key by its owner: each `Some` replaces the stored value
/// (`Some(None)` clears it).
#[derive(Debug, Clone, Default)]
pub struct KeyChange {
    pub label: Option<String>,
    pub expires_at: Option<Option<i64>>,
    pub allowed_models: Option<Option<Vec<String>>>,
    pub limits: LimitChange,
}

/// A change of the limit columns (of a key or a user): each `Some`
/// replaces the stored value (`Some(None)` clears it).
#[derive(Debug, Clone, Default)]
pub struct LimitChange {
    pub budget_usd: Option<Option<f64>>,
    pub budget_period: Option<Option<String>>,
    pub rpm_limit: Option<Option<i64>>,
    pub tpm_limit: Option<Option<i64>>,
}

impl LimitChange {
    /// `columns` with this change made.
    pub fn apply(&self, columns: &mut LimitColumns) {
        if let Some(v) = self.budget_usd {
            columns.budget_usd = v;
        }
        if let Some(v) = &self.budget_period {
            columns.budget_period.clone_from(v);
        }
        if let Some(v) = self.rpm_limit {
            columns.rpm_limit = v;
        }
        if let Some(v) = self.tpm_limit {
            columns.tpm_limit = v;
        }
    }
}

const RECORD_COLUMNS: &str = "id, user_id, key_prefix, label, created_at, last_used_at, \
     expires_at, allowed_models, budget_usd, budget_period, rpm_limit, tpm_limit";

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
            expires_at: key.expires_at,
            allowed_models: key.allowed_models.map(<[String]>::to_vec),
            limits: key.limits.clone(),
        };
        let allowed = record
            .allowed_models
            .as_ref()
            .map(|m| serde_json::to_string(m).unwrap_or_else(|_| "[]".to_owned()));
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
                "INSERT INTO api_keys (id, user_id, key_hash, key_prefix, label, created_at, \
                 expires_at, allowed_models, budget_usd, budget_period, rpm_limit, tpm_limit) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(record.id)
            .bind(record.user_id)
            .bind(key.key_hash)
            .bind(&record.key_prefix)
            .bind(&record.label)
            .bind(record.created_at)
            .bind(record.expires_at)
            .bind(&allowed)
            .bind(record.limits.budget_usd)
            .bind(&record.limits.budget_period)
            .bind(record.limits.rpm_limit)
            .bind(record.limits.tpm_limit)
            .execute(&mut *tx)
            .await?;
            Ok(())
        }));
        Ok(record)
    }

    /// The keys of `user_id`, newest first.
    pub async fn list_for_user(&self, user_id: UserId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(&format!(
                "SELECT {RECORD_COLUMNS} FROM api_keys \
                 WHERE user_id = $1 ORDER BY created_at DESC, id"
            ))
            .bind(user_id)
            .fetch_all(p)
            .await?
        }))
    }

    /// The owner of the key whose hex SHA-256 is `key_hash`.
    pub async fn find_by_hash(&self, key_hash: &str) -> Result<Option<FoundKey>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT k.id AS key_id, k.user_id, k.expires_at, k.allowed_models, \
                 k.budget_usd, k.budget_period, k.rpm_limit, k.tpm_limit, \
                 u.budget_usd AS user_budget_usd, u.budget_period AS user_budget_period, \
                 u.rpm_limit AS user_rpm_limit, u.tpm_limit AS user_tpm_limit \
                 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = $1",
            )
                .bind(key_hash)
                .fetch_optional(p)
                .await?
        }))
    }

    /// Change one of `user_id`'s keys; `None` when it has no such key. The
    /// change is announced (`key:<hash>`) so every replica looks the key up
    /// again.
    pub async fn update(
        &self,
        user_id: UserId,
        id: ApiKeyId,
        change: &KeyChange,
    ) -> Result<Option<(ApiKeyRecord, String)>, StoreError> {
        let updated = with_pool!(self.store, p => write_tx!(p, tx => {
            let current: Option<ApiKeyRecord> = sqlx::query_as(&format!(
                "SELECT {RECORD_COLUMNS} FROM api_keys WHERE id = $1 AND user_id = $2"
            ))
            .bind(id)
            .bind(user_id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(mut record) = current else {
                return Ok(None);
            };
            if let Some(label) = &change.label {
                record.label.clone_from(label);
            }
            if let Some(expires_at) = change.expires_at {
                record.expires_at = expires_at;
            }
            if let Some(allowed) = &change.allowed_models {
                record.allowed_models.clone_from(allowed);
            }
            change.limits.apply(&mut record.limits);
            let allowed = record
                .allowed_models
                .as_ref()
                .map(|m| serde_json::to_string(m).unwrap_or_else(|_| "[]".to_owned()));
            let (hash,): (String,) = sqlx::query_as(
                "UPDATE api_keys SET label = $1, expires_at = $2, allowed_models = $3, \
                 budget_usd = $4, budget_period = $5, rpm_limit = $6, tpm_limit = $7 \
                 WHERE id = $8 RETURNING key_hash",
            )
            .bind(&record.label)
            .bind(record.expires_at)
            .bind(&allowed)
            .bind(record.limits.budget_usd)
            .bind(&record.limits.budget_period)
            .bind(record.limits.rpm_limit)
            .bind(record.limits.tpm_limit)
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
            tx.announce(&format!("key:{hash}")).await?;
            Ok(Some((record, hash)))
        }));
        Ok(updated)
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
