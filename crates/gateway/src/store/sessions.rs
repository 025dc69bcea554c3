//! Web UI sessions (spec 2.2, 3.2): one row per session, so a session is
//! valid on every replica and survives restarts, and deleting the row ends it
//! everywhere at once (nothing caches sessions).
//!
//! The CSRF token is stored with its session: it is bound on the server, not
//! merely compared with its cookie. Reads join the user, so a role change or
//! a deleted account applies to the next request.

use super::clock::now;
use super::ids::{SessionId, UserId};
use super::users::{AuthMethod, User, UserRow, USER_COLUMNS};
use super::{with_pool, Store, StoreError};
use crate::config::Secret;
use crate::crypto::random;

/// Bytes of randomness in a CSRF token (256 bits).
const CSRF_BYTES: usize = 32;

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: SessionId,
    pub user_id: UserId,
    pub csrf_token: Secret,
    /// How this session was signed in.
    pub auth_method: AuthMethod,
    pub created_at: i64,
    /// Creation or the last sliding extension.
    pub refreshed_at: i64,
    pub expires_at: i64,
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    session_id: SessionId,
    csrf_token: String,
    session_auth_method: String,
    session_created_at: i64,
    refreshed_at: i64,
    expires_at: i64,
    #[sqlx(flatten)]
    user: UserRow,
}

const SESSION_COLUMNS: &str = "s.id AS session_id, s.csrf_token, \
     s.auth_method AS session_auth_method, s.created_at AS session_created_at, \
     s.refreshed_at, s.expires_at";

/// The sessions repository.
pub struct Sessions<'a> {
    store: &'a Store,
}

impl<'a> Sessions<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Sessions { store }
    }

    /// A new session for `user_id` with a fresh id and CSRF token, valid for `ttl_secs`.
    pub async fn create(
        &self,
        user_id: UserId,
        auth_method: AuthMethod,
        ttl_secs: i64,
    ) -> Result<Session, StoreError> {
        let now = now();
        let session = Session {
            id: SessionId::new(),
            user_id,
            csrf_token: Secret::new(random::token(CSRF_BYTES)),
            auth_method,
            created_at: now,
            refreshed_at: now,
            expires_at: now.saturating_add(ttl_secs),
        };
        with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO sessions (id, user_id, csrf_token, auth_method, created_at, \
                 refreshed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $5, $6)",
            )
            .bind(session.id)
            .bind(user_id)
            .bind(session.csrf_token.expose())
            .bind(auth_method.as_str())
            .bind(now)
            .bind(session.expires_at)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(session)
    }

    /// The session `id` and its user, unless it has expired or does not exist.
    pub async fn get_active(&self, id: SessionId) -> Result<Option<(Session, User)>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS}, {USER_COLUMNS} FROM sessions s \
             JOIN users u ON u.id = s.user_id WHERE s.id = $1 AND s.expires_at > $2"
        );
        let now = now();
        let row: Option<SessionRow> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).bind(id).bind(now).fetch_optional(p).await?
        });
        let Some(row) = row else { return Ok(None) };
        let auth_method = AuthMethod::parse(&row.session_auth_method).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "sessions.auth_method '{}'",
                row.session_auth_method
            ))
        })?;
        let user = User::try_from(row.user)?;
        Ok(Some((
            Session {
                id: row.session_id,
                user_id: user.id,
                csrf_token: Secret::new(row.csrf_token),
                auth_method,
                created_at: row.session_created_at,
                refreshed_at: row.refreshed_at,
                expires_at: row.expires_at,
            },
            user,
        )))
    }

    /// Slide the expiry to now + `ttl_secs` (spec 3.2). Only a session last
    /// refreshed at or before `refreshed_before` moves, so concurrent requests
    /// extend it once. Returns the new expiry when this call extended it.
    pub async fn extend(
        &self,
        id: SessionId,
        refreshed_before: i64,
        ttl_secs: i64,
    ) -> Result<Option<i64>, StoreError> {
        let now = now();
        let expires_at = now.saturating_add(ttl_secs);
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "UPDATE sessions SET refreshed_at = $2, expires_at = $3 \
                 WHERE id = $1 AND refreshed_at <= $4 AND expires_at > $2",
            )
            .bind(id)
            .bind(now)
            .bind(expires_at)
            .bind(refreshed_before)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok((done == 1).then_some(expires_at))
    }

    /// End one session.
    pub async fn delete(&self, id: SessionId) -> Result<(), StoreError> {
        with_pool!(self.store, p => {
            sqlx::query("DELETE FROM sessions WHERE id = $1").bind(id).execute(p).await?.rows_affected()
        });
        Ok(())
    }

    /// End every session of `user_id` except `keep`; the number ended.
    pub async fn delete_for_user(
        &self,
        user_id: UserId,
        keep: Option<SessionId>,
    ) -> Result<u64, StoreError> {
        let keep = keep.unwrap_or(SessionId(uuid::Uuid::nil()));
        let done = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
                .bind(user_id)
                .bind(keep)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(done)
    }

    /// Delete expired sessions; the number deleted.
    pub async fn delete_expired(&self) -> Result<u64, StoreError> {
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(now).execute(p).await?.rows_affected()
        });
        Ok(done)
    }
}
