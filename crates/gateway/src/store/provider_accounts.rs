//! Provider accounts (spec 2.5, 4.4.3; interfaces-full.md 2): one credential
//! of one user for one direct provider, several per provider, each with a
//! priority (lower first); and each user's provider order.
//!
//! - The access token (an API key, or an OAuth access token) and the refresh
//!   token are encrypted at rest, bound to their column and the account's id
//!   (a value copied to another row does not decrypt).
//! - A user sees, changes and deletes only their own accounts: every query
//!   names the user.
//! - Every write is one transaction that announces `accounts:<user id>` on
//!   PostgreSQL, so every replica drops its cached provider list of that user
//!   ([`crate::providers::accounts`]); a change of the shared pool (accounts
//!   an admin shares with every user, `pool`) announces `accounts:pool`,
//!   which drops every user's list.

use super::clock::now;
use super::ids::{ProviderAccountId, UserId};
use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;

/// Most accounts one user may hold for one provider.
pub const MAX_ACCOUNTS_PER_PROVIDER: i64 = 20;

/// The priority of an account created without one.
pub const DEFAULT_PRIORITY: i64 = 100;

/// An account as its owner sees it (no secret).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProviderAccount {
    pub id: ProviderAccountId,
    pub user_id: UserId,
    pub provider: String,
    pub label: String,
    /// `api_key`, `oauth_pkce` or `oauth_code_host`.
    pub auth_kind: String,
    pub expires_at: Option<i64>,
    pub base_url: Option<String>,
    pub priority: i64,
    pub pool: bool,
    pub enabled: bool,
    pub last_error: Option<String>,
    pub last_used_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// An account with its access token decrypted: what a request uses.
#[derive(Debug, Clone)]
pub struct UsableAccount {
    pub account: ProviderAccount,
    pub access_token: Secret,
    /// OAuth accounts: what renews the access token.
    pub refresh_token: Option<Secret>,
}

/// A new account to store.
#[derive(Debug, Clone)]
pub struct NewAccount<'a> {
    pub user_id: UserId,
    pub provider: &'a str,
    pub label: &'a str,
    pub auth_kind: &'a str,
    pub access_token: &'a Secret,
    pub refresh_token: Option<&'a Secret>,
    pub expires_at: Option<i64>,
    pub base_url: Option<&'a str>,
    pub priority: i64,
}

/// A change of an account: each `Some` field replaces the stored one
/// (`base_url: Some(None)` removes it).
#[derive(Debug, Clone, Default)]
pub struct AccountChange {
    pub label: Option<String>,
    pub priority: Option<i64>,
    pub access_token: Option<Secret>,
    pub base_url: Option<Option<String>>,
}

const COLUMNS: &str = "id, user_id, provider, label, auth_kind, expires_at, base_url, priority, \
     pool, enabled, last_error, last_used_at, created_at, updated_at";

fn access_context(id: ProviderAccountId) -> String {
    format!("user_provider_tokens.access_token:{id}")
}

fn refresh_context(id: ProviderAccountId) -> String {
    format!("user_provider_tokens.refresh_token:{id}")
}

/// The payload of a pool change: every user's provider list drops.
pub const POOL_PAYLOAD: &str = "accounts:pool";

/// The `accounts:` payload of `user`.
pub fn accounts_payload(user: UserId) -> String {
    format!("accounts:{user}")
}

/// The announcement of a change of an account of `(user, pool)`.
fn owner_payload((user, pool): (UserId, bool)) -> String {
    if pool {
        POOL_PAYLOAD.to_owned()
    } else {
        accounts_payload(user)
    }
}

/// The provider-account repository.
pub struct ProviderAccounts<'a> {
    store: &'a Store,
}

/// A row with its access token still encrypted.
#[derive(sqlx::FromRow)]
struct SealedRow {
    #[sqlx(flatten)]
    account: ProviderAccount,
    access_token: String,
    refresh_token: Option<String>,
}

impl<'a> ProviderAccounts<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ProviderAccounts { store }
    }

    /// Store a new account; 409 `conflict` when the user holds
    /// [`MAX_ACCOUNTS_PER_PROVIDER`] for the provider already.
    pub async fn create(&self, new: NewAccount<'_>) -> Result<ProviderAccount, StoreError> {
        self.insert(new, false, true).await
    }

    /// Insert an account (a user's own, or with `pool` the pool's) in one
    /// transaction that counts a user's accounts first and announces it.
    async fn insert(
        &self,
        new: NewAccount<'_>,
        pool: bool,
        enabled: bool,
    ) -> Result<ProviderAccount, StoreError> {
        let at = now();
        let account = ProviderAccount {
            id: ProviderAccountId::new(),
            user_id: new.user_id,
            provider: new.provider.to_owned(),
            label: new.label.to_owned(),
            auth_kind: new.auth_kind.to_owned(),
            expires_at: new.expires_at,
            base_url: new.base_url.map(str::to_owned),
            priority: new.priority,
            pool,
            enabled,
            last_error: None,
            last_used_at: None,
            created_at: at,
            updated_at: at,
        };
        let cipher = self.store.cipher();
        let access = cipher.encrypt_secret(new.access_token, &access_context(account.id))?;
        let refresh = new
            .refresh_token
            .map(|r| cipher.encrypt_secret(r, &refresh_context(account.id)))
            .transpose()?;
        let payload = if pool {
            POOL_PAYLOAD.to_owned()
        } else {
            accounts_payload(new.user_id)
        };
        with_pool!(self.store, p => write_tx!(p, tx => {
            if !pool {
                let (held,): (i64,) = sqlx::query_as(
                    "SELECT COUNT(*) FROM user_provider_tokens \
                     WHERE user_id = $1 AND provider = $2 AND pool = $3",
                )
                .bind(new.user_id)
                .bind(new.provider)
                .bind(false)
                .fetch_one(&mut *tx)
                .await?;
                if held >= MAX_ACCOUNTS_PER_PROVIDER {
                    return Err(StoreError::Conflict(format!(
                        "you hold {MAX_ACCOUNTS_PER_PROVIDER} {} accounts already; delete one first",
                        new.provider
                    )));
                }
            }
            sqlx::query(
                "INSERT INTO user_provider_tokens (id, user_id, provider, label, auth_kind, \
                 access_token, refresh_token, expires_at, base_url, priority, pool, enabled, \
                 created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(account.id)
            .bind(account.user_id)
            .bind(&account.provider)
            .bind(&account.label)
            .bind(&account.auth_kind)
            .bind(&access)
            .bind(&refresh)
            .bind(account.expires_at)
            .bind(&account.base_url)
            .bind(account.priority)
            .bind(pool)
            .bind(enabled)
            .bind(at)
            .bind(at)
            .execute(&mut *tx)
            .await?;
            tx.announce(&payload).await?;
            Ok(())
        }));
        Ok(account)
    }

    /// The user's own accounts (of one provider when given), by priority,
    /// ties the older first.
    pub async fn list_for_user(
        &self,
        user: UserId,
        provider: Option<&str>,
    ) -> Result<Vec<ProviderAccount>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM user_provider_tokens \
             WHERE user_id = $1 AND pool = $2 AND ($3 IS NULL OR provider = $3) \
             ORDER BY priority, created_at, id"
        );
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(&sql)
                .bind(user)
                .bind(false)
                .bind(provider)
                .fetch_all(p)
                .await?
        }))
    }

    /// One of the user's own accounts.
    pub async fn get(
        &self,
        user: UserId,
        id: ProviderAccountId,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM user_provider_tokens \
             WHERE id = $1 AND user_id = $2 AND pool = $3"
        );
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(&sql)
                .bind(id)
                .bind(user)
                .bind(false)
                .fetch_optional(p)
                .await?
        }))
    }

    /// The user's enabled own accounts with their access tokens, by
    /// priority (what requests choose from).
    pub async fn usable(&self, user: UserId) -> Result<Vec<UsableAccount>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS}, access_token, refresh_token FROM user_provider_tokens \
             WHERE user_id = $1 AND pool = $2 AND enabled = $3 \
             ORDER BY priority, created_at, id"
        );
        let rows: Vec<SealedRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql)
                .bind(user)
                .bind(false)
                .bind(true)
                .fetch_all(p)
                .await?
        });
        self.unseal(rows)
    }

    /// Apply `change` to one of the user's own accounts; `None` when it is
    /// not theirs.
    pub async fn update(
        &self,
        user: UserId,
        id: ProviderAccountId,
        change: AccountChange,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        match self.get(user, id).await? {
            Some(account) => self.write_change(account, change, None).await,
            None => Ok(None),
        }
    }

    /// Write `change` (and `enabled`) over `account` as it was read; the
    /// account as it is now, `None` when it went meanwhile.
    async fn write_change(
        &self,
        mut account: ProviderAccount,
        change: AccountChange,
        enabled: Option<bool>,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        if let Some(label) = change.label {
            account.label = label;
        }
        if let Some(priority) = change.priority {
            account.priority = priority;
        }
        if let Some(base_url) = change.base_url {
            account.base_url = base_url;
        }
        if let Some(enabled) = enabled {
            account.enabled = enabled;
        }
        account.updated_at = now();
        account.last_error = None;
        let id = account.id;
        let access = change
            .access_token
            .map(|t| self.store.cipher().encrypt_secret(&t, &access_context(id)))
            .transpose()?;
        let payload = owner_payload((account.user_id, account.pool));
        let done = with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query(
                "UPDATE user_provider_tokens SET label = $1, priority = $2, base_url = $3, \
                 enabled = $4, access_token = COALESCE($5, access_token), last_error = NULL, \
                 updated_at = $6 WHERE id = $7 AND user_id = $8 AND pool = $9",
            )
            .bind(&account.label)
            .bind(account.priority)
            .bind(&account.base_url)
            .bind(account.enabled)
            .bind(&access)
            .bind(account.updated_at)
            .bind(id)
            .bind(account.user_id)
            .bind(account.pool)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.announce(&payload).await?;
            Ok(done)
        }));
        Ok((done == 1).then_some(account))
    }

    /// Delete one of the user's own accounts of `provider` (`Some(id)`), or
    /// all of them; how many went.
    pub async fn delete(
        &self,
        user: UserId,
        provider: &str,
        id: Option<ProviderAccountId>,
    ) -> Result<u64, StoreError> {
        Ok(with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query(
                "DELETE FROM user_provider_tokens \
                 WHERE user_id = $1 AND provider = $2 AND pool = $3 AND ($4 IS NULL OR id = $4)",
            )
            .bind(user)
            .bind(provider)
            .bind(false)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.announce(&accounts_payload(user)).await?;
            Ok(done)
        })))
    }

    /// The access token of account `id` (the caller checked whose it is).
    pub async fn access_token(&self, id: ProviderAccountId) -> Result<Option<Secret>, StoreError> {
        let row: Option<(String,)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT access_token FROM user_provider_tokens WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        });
        row.map(|(sealed,)| {
            self.store
                .cipher()
                .decrypt_secret(&sealed, &access_context(id))
                .map_err(StoreError::from)
        })
        .transpose()
    }

    /// Keep the tokens an OAuth refresh gave account `id` (the vendor
    /// rotates refresh tokens: the old one no longer works), clearing its
    /// error; announced like every change of the account. `false` when the
    /// account went meanwhile.
    pub async fn store_tokens(
        &self,
        id: ProviderAccountId,
        access: &Secret,
        refresh: Option<&Secret>,
        expires_at: Option<i64>,
    ) -> Result<bool, StoreError> {
        let cipher = self.store.cipher();
        let access = cipher.encrypt_secret(access, &access_context(id))?;
        let refresh = refresh
            .map(|r| cipher.encrypt_secret(r, &refresh_context(id)))
            .transpose()?;
        let at = now();
        Ok(with_pool!(self.store, p => write_tx!(p, tx => {
            let owner: Option<(UserId, bool)> = sqlx::query_as(
                "UPDATE user_provider_tokens SET access_token = $1, \
                 refresh_token = COALESCE($2, refresh_token), expires_at = $3, \
                 last_error = NULL, updated_at = $4 WHERE id = $5 RETURNING user_id, pool",
            )
            .bind(&access)
            .bind(&refresh)
            .bind(expires_at)
            .bind(at)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(owner) = owner {
                tx.announce(&owner_payload(owner)).await?;
            }
            Ok(owner.is_some())
        })))
    }

    /// Record why account `id` stopped working (shown as its `last_error`,
    /// status `error`) until it is changed or works again.
    pub async fn record_error(
        &self,
        id: ProviderAccountId,
        error: &str,
    ) -> Result<bool, StoreError> {
        let error: String = error.chars().take(500).collect();
        let at = now();
        Ok(with_pool!(self.store, p => write_tx!(p, tx => {
            let owner: Option<(UserId, bool)> = sqlx::query_as(
                "UPDATE user_provider_tokens SET last_error = $1, updated_at = $2 \
                 WHERE id = $3 RETURNING user_id, pool",
            )
            .bind(&error)
            .bind(at)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(owner) = owner {
                tx.announce(&owner_payload(owner)).await?;
            }
            Ok(owner.is_some())
        })))
    }

    /// Write when accounts last answered (`(id, unix seconds)`), in one
    /// transaction, never moving a time back; not announced: no cached
    /// provider depends on it.
    pub async fn mark_used(&self, used: &[(ProviderAccountId, i64)]) -> Result<(), StoreError> {
        if used.is_empty() {
            return Ok(());
        }
        with_pool!(self.store, p => write_tx!(p, tx => {
            for (id, at) in used {
                sqlx::query(
                    "UPDATE user_provider_tokens SET last_used_at = $1 \
                     WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)",
                )
                .bind(at)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            }
            Ok(())
        }));
        Ok(())
    }

    /// Decrypt the tokens of `rows`.
    fn unseal(&self, rows: Vec<SealedRow>) -> Result<Vec<UsableAccount>, StoreError> {
        let cipher = self.store.cipher();
        rows.into_iter()
            .map(|row| {
                let id = row.account.id;
                let access_token = cipher.decrypt_secret(&row.access_token, &access_context(id))?;
                let refresh_token = row
                    .refresh_token
                    .map(|sealed| cipher.decrypt_secret(&sealed, &refresh_context(id)))
                    .transpose()?;
                Ok(UsableAccount {
                    account: row.account,
                    access_token,
                    refresh_token,
                })
            })
            .collect()
    }

    // ---- the shared pool (interfaces-full.md 3) ----

    /// Every pool account, by provider and priority.
    pub async fn list_pool(&self) -> Result<Vec<ProviderAccount>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM user_provider_tokens WHERE pool = $1 \
             ORDER BY provider, priority, created_at, id"
        );
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(true).fetch_all(p).await?
        }))
    }

    /// One pool account.
    pub async fn get_pool(
        &self,
        id: ProviderAccountId,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM user_provider_tokens WHERE id = $1 AND pool = $2");
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(id).bind(true).fetch_optional(p).await?
        }))
    }

    /// The enabled pool accounts with their access tokens, by priority.
    pub async fn usable_pool(&self) -> Result<Vec<UsableAccount>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS}, access_token, refresh_token FROM user_provider_tokens \
             WHERE pool = $1 AND enabled = $2 ORDER BY priority, created_at, id"
        );
        let rows: Vec<SealedRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(true).bind(true).fetch_all(p).await?
        });
        self.unseal(rows)
    }

    /// Add a pool account (`new.user_id`: the admin who adds it).
    pub async fn create_pool(
        &self,
        new: NewAccount<'_>,
        enabled: bool,
    ) -> Result<ProviderAccount, StoreError> {
        self.insert(new, true, enabled).await
    }

    /// Move one of `admin`'s own accounts into the pool (its secrets go
    /// with it, bound to the same id); `None` when it is not theirs.
    pub async fn move_to_pool(
        &self,
        admin: UserId,
        id: ProviderAccountId,
        label: Option<&str>,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        let done = with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query(
                "UPDATE user_provider_tokens SET pool = $1, enabled = $2, \
                 label = COALESCE($3, label), updated_at = $4 \
                 WHERE id = $5 AND user_id = $6 AND pool = $7",
            )
            .bind(true)
            .bind(true)
            .bind(label)
            .bind(now())
            .bind(id)
            .bind(admin)
            .bind(false)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.announce(POOL_PAYLOAD).await?;
            tx.announce(&accounts_payload(admin)).await?;
            Ok(done)
        }));
        if done == 0 {
            return Ok(None);
        }
        self.get_pool(id).await
    }

    /// Change a pool account; `None` when there is none with this id.
    pub async fn update_pool(
        &self,
        id: ProviderAccountId,
        change: AccountChange,
        enabled: Option<bool>,
    ) -> Result<Option<ProviderAccount>, StoreError> {
        match self.get_pool(id).await? {
            Some(account) => self.write_change(account, change, enabled).await,
            None => Ok(None),
        }
    }

    /// Delete a pool account; whether there was one.
    pub async fn delete_pool(&self, id: ProviderAccountId) -> Result<bool, StoreError> {
        let done = with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query("DELETE FROM user_provider_tokens WHERE id = $1 AND pool = $2")
                .bind(id)
                .bind(true)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.announce(POOL_PAYLOAD).await?;
            Ok(done)
        }));
        Ok(done == 1)
    }

    /// The user's provider order, as stored (unknown ids kept).
    pub async fn order(&self, user: UserId) -> Result<Vec<String>, StoreError> {
        let row: Option<(String,)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT providers FROM user_provider_order WHERE user_id = $1")
                .bind(user)
                .fetch_optional(p)
                .await?
        });
        Ok(row
            .map(|(list,)| {
                list.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Replace the user's provider order.
    pub async fn set_order(&self, user: UserId, order: &[&str]) -> Result<(), StoreError> {
        let list = order.join(",");
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query(
                "INSERT INTO user_provider_order (user_id, providers, updated_at) \
                 VALUES ($1, $2, $3) \
                 ON CONFLICT (user_id) DO UPDATE SET providers = $2, updated_at = $3",
            )
            .bind(user)
            .bind(&list)
            .bind(now())
            .execute(&mut *tx)
            .await?;
            tx.announce(&accounts_payload(user)).await?;
            Ok(())
        }));
        Ok(())
    }
}
