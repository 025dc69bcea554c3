//! Users (spec 2.1): accounts, roles, password hashes and TOTP state.
//!
//! Emails are normalised (trimmed, lower-case) before every write and lookup.
//! The role rules live here, under the role lock ([`super::RoleLock`]):
//! - [`RoleChoice::AdminIfNone`]: the account becomes `Admin` when no admin
//!   exists yet (the first user to sign in, spec 3.1 / 5.6), else `User`; two
//!   concurrent first sign-ins cannot both become admin;
//! - [`Users::set_role`] and [`Users::delete`] refuse to leave no admin.
//!
//! TOTP secrets are encrypted at rest, bound to the user and column.

use serde::Serialize;

use super::api_keys::{LimitChange, LimitColumns};
use super::clock::now;
use super::ids::UserId;
use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, RoleLock as _, Store, StoreError};
use crate::config::Secret;
use crate::crypto::TotpSecret;

/// A user's role (spec 5.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum Role {
    Admin,
    User,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "Admin",
            Role::User => "User",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "Admin" => Some(Role::Admin),
            "User" => Some(Role::User),
            _ => None,
        }
    }
}

/// How a person signs in: by password (+ TOTP) or by SSO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum AuthMethod {
    Password,
    Sso,
}

impl AuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::Password => "password",
            AuthMethod::Sso => "sso",
        }
    }

    pub fn parse(text: &str) -> Option<AuthMethod> {
        match text {
            "password" => Some(AuthMethod::Password),
            "sso" => Some(AuthMethod::Sso),
            _ => None,
        }
    }
}

/// A user as the rest of the service sees it. The password hash is kept in
/// a [`Secret`] so a stray `{:?}` does not print it; the TOTP secret is not
/// loaded here at all (see [`Users::totp_secret`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub email: String,
    pub role: Role,
    /// How the account was created.
    pub auth_method: AuthMethod,
    pub password_hash: Option<Secret>,
    pub sso_subject: Option<String>,
    pub totp_enabled: bool,
    pub must_change_password: bool,
    pub created_at: i64,
    pub last_login_at: Option<i64>,
}

impl User {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// The role of a new account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleChoice {
    Exactly(Role),
    /// `Admin` when there is no admin yet, else `User`.
    AdminIfNone,
    /// `Admin`, refused (conflict) when an admin exists: first-admin setup
    /// and the seeded initial admin.
    FirstAdmin,
}

/// A new account.
#[derive(Debug, Clone)]
pub struct NewUser<'a> {
    pub email: &'a str,
    pub role: RoleChoice,
    pub auth_method: AuthMethod,
    pub password_hash: Option<&'a str>,
    pub sso_subject: Option<&'a str>,
    /// With a secret, 2FA is enabled from the start (seeded admin).
    pub totp_secret: Option<&'a TotpSecret>,
    pub must_change_password: bool,
}

/// Trimmed and lower-cased.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// The normalised email, or what is wrong with it.
pub fn validate_email(email: &str) -> Result<String, String> {
    let email = normalize_email(email);
    let valid = email.len() <= 254
        && !email.contains(char::is_whitespace)
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !domain.contains('@')
        });
    if valid {
        Ok(email)
    } else {
        Err("email: expected an email address".into())
    }
}

/// The domain part of a normalised email.
pub fn email_domain(email: &str) -> &str {
    email.rsplit_once('@').map(|(_, d)| d).unwrap_or("")
}

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: UserId,
    email: String,
    role: String,
    auth_method: String,
    password_hash: Option<String>,
    sso_subject: Option<String>,
    totp_enabled: bool,
    must_change_password: bool,
    created_at: i64,
    last_login_at: Option<i64>,
}

impl TryFrom<UserRow> for User {
    type Error = StoreError;
    fn try_from(row: UserRow) -> Result<Self, StoreError> {
        Ok(User {
            id: row.id,
            role: Role::parse(&row.role)
                .ok_or_else(|| StoreError::Corrupt(format!("users.role '{}'", row.role)))?,
            auth_method: AuthMethod::parse(&row.auth_method).ok_or_else(|| {
                StoreError::Corrupt(format!("users.auth_method '{}'", row.auth_method))
            })?,
            email: row.email,
            password_hash: row.password_hash.map(Secret::new),
            sso_subject: row.sso_subject,
            totp_enabled: row.totp_enabled,
            must_change_password: row.must_change_password,
            created_at: row.created_at,
            last_login_at: row.last_login_at,
        })
    }
}

/// The columns of [`UserRow`], for `FROM users u`.
pub(crate) const USER_COLUMNS: &str = "u.id, u.email, u.role, u.auth_method, u.password_hash, \
     u.sso_subject, u.totp_enabled, u.must_change_password, u.created_at, u.last_login_at";

const HAS_ADMIN: &str = "SELECT EXISTS (SELECT 1 FROM users WHERE role = 'Admin')";
const COUNT_ADMINS: &str = "SELECT COUNT(*) FROM users WHERE role = 'Admin'";
const INSERT_USER: &str = "INSERT INTO users (id, email, role, auth_method, password_hash, \
     sso_subject, totp_enabled, totp_secret, must_change_password, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) ON CONFLICT DO NOTHING";

fn select_by(column: &str) -> String {
    format!("SELECT {USER_COLUMNS} FROM users u WHERE u.{column} = $1")
}

fn totp_context(id: UserId) -> String {
    format!("users.totp_secret:{id}")
}

fn pending_totp_context(id: UserId) -> String {
    format!("users.totp_pending_secret:{id}")
}

/// Map a unique-constraint violation to [`StoreError::Conflict`].
pub(crate) fn conflict_on_unique(err: sqlx::Error, message: &str) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            StoreError::Conflict(message.to_owned())
        }
        _ => StoreError::Database(err),
    }
}

/// The users repository.
pub struct Users<'a> {
    store: &'a Store,
}

impl<'a> Users<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Users { store }
    }

    pub async fn get(&self, id: UserId) -> Result<Option<User>, StoreError> {
        let sql = select_by("id");
        let row: Option<UserRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(id).fetch_optional(p).await?
        });
        row.map(User::try_from).transpose()
    }

    /// The user with this email (normalised before the lookup).
    pub async fn find_by_email(&self, email: &str) -> Result<Option<User>, StoreError> {
        let sql = select_by("email");
        let email = normalize_email(email);
        let row: Option<UserRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(&email).fetch_optional(p).await?
        });
        row.map(User::try_from).transpose()
    }

    /// Every user, oldest first.
    pub async fn list(&self) -> Result<Vec<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u ORDER BY u.created_at, u.email");
        let rows: Vec<UserRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).fetch_all(p).await?
        });
        rows.into_iter().map(User::try_from).collect()
    }

    /// Whether any admin exists (setup is complete, spec 3.1).
    pub async fn has_admin(&self) -> Result<bool, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar::<_, bool>(HAS_ADMIN).fetch_one(p).await?
        }))
    }

    pub async fn count(&self) -> Result<i64, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM users").fetch_one(p).await?
        }))
    }

    /// Create an account. An existing email (or SSO subject) is a conflict.
    pub async fn create(&self, new: NewUser<'_>) -> Result<User, StoreError> {
        let email = validate_email(new.email).map_err(StoreError::Conflict)?;
        let id = UserId::new();
        let totp = new
            .totp_secret
            .map(|s| self.store.cipher().encrypt(s.as_bytes(), &totp_context(id)))
            .transpose()?;
        let select = select_by("id");
        let now = now();
        let row: UserRow = with_pool!(self.store, p => write_tx!(p, tx => {
            tx.lock_roles().await?;
            let role = match new.role {
                RoleChoice::Exactly(role) => role,
                RoleChoice::AdminIfNone | RoleChoice::FirstAdmin => {
                    let any = sqlx::query_scalar::<_, bool>(HAS_ADMIN).fetch_one(&mut *tx).await?;
                    match (any, new.role) {
                        (false, _) => Role::Admin,
                        (true, RoleChoice::FirstAdmin) => {
                            return Err(StoreError::Conflict("an admin already exists".into()));
                        }
                        (true, _) => Role::User,
                    }
                }
            };
            let inserted = sqlx::query(INSERT_USER)
                .bind(id)
                .bind(&email)
                .bind(role.as_str())
                .bind(new.auth_method.as_str())
                .bind(new.password_hash)
                .bind(new.sso_subject)
                .bind(totp.is_some())
                .bind(totp.as_deref())
                .bind(new.must_change_password)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            if inserted.rows_affected() == 0 {
                return Err(StoreError::Conflict("a user with this email already exists".into()));
            }
            let row = sqlx::query_as(&select).bind(id).fetch_one(&mut *tx).await?;
            Ok(row)
        }));
        User::try_from(row)
    }

    /// The SSO sign-in of `email` with the identity provider's `subject`:
    /// the account with this subject; else the account with this email,
    /// linked to the subject now; else a new SSO account, `Admin` when no
    /// admin exists yet. `true` when the account was created.
    ///
    /// An email whose account is linked to a different subject is a conflict
    /// (someone else's identity with a reassigned address).
    pub async fn upsert_sso(&self, email: &str, subject: &str) -> Result<(User, bool), StoreError> {
        let email = validate_email(email).map_err(StoreError::Conflict)?;
        let by_subject = select_by("sso_subject");
        let by_email = select_by("email");
        let by_id = select_by("id");
        let now = now();
        let (row, created): (UserRow, bool) = with_pool!(self.store, p => write_tx!(p, tx => {
            tx.lock_roles().await?;
            let found: Option<UserRow> =
                sqlx::query_as(&by_subject).bind(subject).fetch_optional(&mut *tx).await?;
            let result = if let Some(row) = found {
                (row, false)
            } else {
                let found: Option<UserRow> =
                    sqlx::query_as(&by_email).bind(&email).fetch_optional(&mut *tx).await?;
                match found {
                    Some(row) if row.sso_subject.is_some() => {
                        return Err(StoreError::Conflict(
                            "this email is linked to another SSO identity".into(),
                        ));
                    }
                    Some(row) => {
                        sqlx::query("UPDATE users SET sso_subject = $2, updated_at = $3 WHERE id = $1")
                            .bind(row.id)
                            .bind(subject)
                            .bind(now)
                            .execute(&mut *tx)
                            .await?;
                        let row = sqlx::query_as(&by_id).bind(row.id).fetch_one(&mut *tx).await?;
                        (row, false)
                    }
                    None => {
                        let any = sqlx::query_scalar::<_, bool>(HAS_ADMIN).fetch_one(&mut *tx).await?;
                        let role = if any { Role::User } else { Role::Admin };
                        let id = UserId::new();
                        sqlx::query(INSERT_USER)
                            .bind(id)
                            .bind(&email)
                            .bind(role.as_str())
                            .bind(AuthMethod::Sso.as_str())
                            .bind(None::<String>)
                            .bind(subject)
                            .bind(false)
                            .bind(None::<String>)
                            .bind(false)
                            .bind(now)
                            .execute(&mut *tx)
                            .await?;
                        let row = sqlx::query_as(&by_id).bind(id).fetch_one(&mut *tx).await?;
                        (row, true)
                    }
                }
            };
            Ok(result)
        }));
        Ok((User::try_from(row)?, created))
    }

    /// Link an SSO subject to an account (SSO link mode). A subject linked to
    /// another account is a conflict.
    pub async fn set_sso_subject(&self, id: UserId, subject: &str) -> Result<(), StoreError> {
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query("UPDATE users SET sso_subject = $2, updated_at = $3 WHERE id = $1")
                .bind(id)
                .bind(subject)
                .bind(now)
                .execute(p)
                .await
                .map_err(|e| conflict_on_unique(e, "this SSO identity is linked to another account"))?.rows_affected()
        });
        if done == 0 {
            return Err(StoreError::NotFound("user"));
        }
        Ok(())
    }

    /// Change a role; demoting the last admin is refused.
    pub async fn set_role(&self, id: UserId, role: Role) -> Result<User, StoreError> {
        let select = select_by("id");
        let now = now();
        let row: UserRow = with_pool!(self.store, p => write_tx!(p, tx => {
            tx.lock_roles().await?;
            let current: Option<String> = sqlx::query_scalar("SELECT role FROM users WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(current) = current else { return Err(StoreError::NotFound("user")) };
            if current == Role::Admin.as_str() && role != Role::Admin {
                let admins = sqlx::query_scalar::<_, i64>(COUNT_ADMINS).fetch_one(&mut *tx).await?;
                if admins <= 1 {
                    return Err(StoreError::LastAdmin);
                }
            }
            sqlx::query("UPDATE users SET role = $2, updated_at = $3 WHERE id = $1")
                .bind(id)
                .bind(role.as_str())
                .bind(now)
                .execute(&mut *tx)
                .await?;
            let row = sqlx::query_as(&select).bind(id).fetch_one(&mut *tx).await?;
            Ok(row)
        }));
        User::try_from(row)
    }

    /// A user's limit columns, by id.
    const LIMITS_OF: &'static str =
        "SELECT budget_usd, budget_period, rpm_limit, tpm_limit FROM users WHERE id = $1";

    /// The budget and rate limits an admin set on `id`.
    pub async fn limits(&self, id: UserId) -> Result<LimitColumns, StoreError> {
        let found: Option<LimitColumns> = with_pool!(self.store, p => {
            sqlx::query_as(Self::LIMITS_OF)
            .bind(id)
            .fetch_optional(p)
            .await?
        });
        found.ok_or(StoreError::NotFound("user"))
    }

    /// Change the budget and rate limits of `id`; every replica looks its
    /// keys up again (each key's change is announced, `key:<hash>`).
    pub async fn set_limits(
        &self,
        id: UserId,
        change: &LimitChange,
    ) -> Result<LimitColumns, StoreError> {
        let now = now();
        Ok(with_pool!(self.store, p => write_tx!(p, tx => {
            let current: Option<LimitColumns> = sqlx::query_as(Self::LIMITS_OF)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(mut columns) = current else { return Err(StoreError::NotFound("user")) };
            change.apply(&mut columns);
            sqlx::query(
                "UPDATE users SET budget_usd = $2, budget_period = $3, rpm_limit = $4, \
                 tpm_limit = $5, updated_at = $6 WHERE id = $1",
            )
            .bind(id)
            .bind(columns.budget_usd)
            .bind(&columns.budget_period)
            .bind(columns.rpm_limit)
            .bind(columns.tpm_limit)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            let hashes: Vec<String> = sqlx::query_scalar("SELECT key_hash FROM api_keys WHERE user_id = $1")
                .bind(id)
                .fetch_all(&mut *tx)
                .await?;
            for hash in hashes {
                tx.announce(&format!("key:{hash}")).await?;
            }
            Ok(columns)
        })))
    }

    /// Delete an account and everything it owns; deleting the last admin is refused.
    pub async fn delete(&self, id: UserId) -> Result<(), StoreError> {
        with_pool!(self.store, p => write_tx!(p, tx => {
            tx.lock_roles().await?;
            let current: Option<String> = sqlx::query_scalar("SELECT role FROM users WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(current) = current else { return Err(StoreError::NotFound("user")) };
            if current == Role::Admin.as_str() {
                let admins = sqlx::query_scalar::<_, i64>(COUNT_ADMINS).fetch_one(&mut *tx).await?;
                if admins <= 1 {
                    return Err(StoreError::LastAdmin);
                }
            }
            sqlx::query("DELETE FROM users WHERE id = $1").bind(id).execute(&mut *tx).await?;
            Ok(())
        }));
        Ok(())
    }

    /// Replace the password hash and set or clear `must_change_password`.
    pub async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        must_change_password: bool,
    ) -> Result<(), StoreError> {
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "UPDATE users SET password_hash = $2, must_change_password = $3, updated_at = $4 \
                 WHERE id = $1",
            )
            .bind(id)
            .bind(password_hash)
            .bind(must_change_password)
            .bind(now)
            .execute(p)
            .await?
            .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::NotFound("user"));
        }
        Ok(())
    }

    /// Record a completed sign-in.
    pub async fn record_login(&self, id: UserId) -> Result<(), StoreError> {
        let now = now();
        with_pool!(self.store, p => {
            sqlx::query("UPDATE users SET last_login_at = $2 WHERE id = $1")
                .bind(id)
                .bind(now)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// Keep `secret` as the enrollment in progress (replacing an earlier one).
    pub async fn set_pending_totp(
        &self,
        id: UserId,
        secret: &TotpSecret,
    ) -> Result<(), StoreError> {
        let stored = self
            .store
            .cipher()
            .encrypt(secret.as_bytes(), &pending_totp_context(id))?;
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query("UPDATE users SET totp_pending_secret = $2, updated_at = $3 WHERE id = $1")
                .bind(id)
                .bind(&stored)
                .bind(now)
                .execute(p)
                .await?
                .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::NotFound("user"));
        }
        Ok(())
    }

    /// The enrollment in progress, if any.
    pub async fn pending_totp(&self, id: UserId) -> Result<Option<TotpSecret>, StoreError> {
        self.read_secret(id, "totp_pending_secret", &pending_totp_context(id))
            .await
    }

    /// The enabled TOTP secret, if 2FA is on.
    pub async fn totp_secret(&self, id: UserId) -> Result<Option<TotpSecret>, StoreError> {
        self.read_secret(id, "totp_secret", &totp_context(id)).await
    }

    async fn read_secret(
        &self,
        id: UserId,
        column: &str,
        context: &str,
    ) -> Result<Option<TotpSecret>, StoreError> {
        let sql = format!("SELECT {column} FROM users WHERE id = $1");
        let stored: Option<Option<String>> = with_pool!(self.store, p => {
            sqlx::query_scalar(&sql).bind(id).fetch_optional(p).await?
        });
        match stored.flatten() {
            Some(text) => Ok(Some(TotpSecret::from_bytes(
                self.store.cipher().decrypt(&text, context)?,
            ))),
            None => Ok(None),
        }
    }

    /// Turn 2FA on with `secret` (whose code of `used_step` was just shown,
    /// so that step counts as used) and replace the recovery codes with
    /// `recovery_code_hashes`, in one transaction. Refused when 2FA is on.
    pub async fn enable_totp(
        &self,
        id: UserId,
        secret: &TotpSecret,
        used_step: u64,
        recovery_code_hashes: &[String],
    ) -> Result<(), StoreError> {
        let stored = self
            .store
            .cipher()
            .encrypt(secret.as_bytes(), &totp_context(id))?;
        let step = i64::try_from(used_step).unwrap_or(i64::MAX);
        let now = now();
        with_pool!(self.store, p => write_tx!(p, tx => {
            let done = sqlx::query(
                "UPDATE users SET totp_secret = $2, totp_enabled = TRUE, totp_pending_secret = NULL, \
                 totp_last_step = $3, updated_at = $4 WHERE id = $1 AND totp_enabled = FALSE",
            )
            .bind(id)
            .bind(&stored)
            .bind(step)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Err(StoreError::Conflict(
                    "two-factor authentication is already enabled".into(),
                ));
            }
            sqlx::query("DELETE FROM totp_recovery_codes WHERE user_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            for hash in recovery_code_hashes {
                sqlx::query(
                    "INSERT INTO totp_recovery_codes (id, user_id, code_hash, created_at) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(super::ids::RowId::new())
                .bind(id)
                .bind(hash)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            Ok(())
        }));
        Ok(())
    }

    /// Accept TOTP step `step` for this user once: true when it is later
    /// than every step accepted before (so a code is never accepted twice,
    /// on any replica).
    pub async fn claim_totp_step(&self, id: UserId, step: u64) -> Result<bool, StoreError> {
        let step = i64::try_from(step).unwrap_or(i64::MAX);
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "UPDATE users SET totp_last_step = $2 WHERE id = $1 AND totp_enabled = TRUE \
                 AND (totp_last_step IS NULL OR totp_last_step < $2)",
            )
            .bind(id)
            .bind(step)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert_eq!(
            validate_email("  Alice@Example.COM ").unwrap(),
            "alice@example.com"
        );
        for bad in ["", "alice", "@example.com", "alice@", "a b@c.d", "a@b@c"] {
            assert!(validate_email(bad).is_err(), "{bad}");
        }
        assert_eq!(email_domain("alice@example.com"), "example.com");
        assert_eq!(email_domain("nobody"), "");
    }

    #[test]
    fn role_and_method_words() {
        assert_eq!(Role::parse("Admin"), Some(Role::Admin));
        assert_eq!(Role::parse("admin"), None);
        assert_eq!(serde_json::to_string(&Role::User).unwrap(), "\"User\"");
        assert_eq!(serde_json::to_string(&AuthMethod::Sso).unwrap(), "\"sso\"");
        assert_eq!(AuthMethod::parse("password"), Some(AuthMethod::Password));
    }
}
