//! The replicas serving this database (issue 18): each gateway process
//! writes its row every [`HEARTBEAT_EVERY`], and `/_ui/api/system` lists the
//! rows seen within [`SEEN_WITHIN`]. A row that has not been seen for a day
//! is removed by any replica's heartbeat.

use std::time::Duration;

use super::clock::now;
use super::{with_pool, Store, StoreError};

/// How often a replica writes its row.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(15);
/// A replica seen within this long counts as running.
pub const SEEN_WITHIN: Duration = Duration::from_secs(60);
/// Rows older than this are removed.
const FORGOTTEN_AFTER: i64 = 24 * 3600;

/// One replica as its last heartbeat described it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Replica {
    pub id: String,
    pub hostname: String,
    pub version: String,
    pub started_at: i64,
    pub last_seen: i64,
}

/// The replica repository.
pub struct Replicas<'a> {
    store: &'a Store,
}

impl<'a> Replicas<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Replicas { store }
    }

    /// Write this replica's row (now seen) and forget long-gone ones.
    pub async fn heartbeat(&self, me: &Replica) -> Result<(), StoreError> {
        let at = now();
        with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO replicas (id, hostname, version, started_at, last_seen) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen",
            )
            .bind(&me.id)
            .bind(&me.hostname)
            .bind(&me.version)
            .bind(me.started_at)
            .bind(at)
            .execute(p)
            .await?;
            sqlx::query("DELETE FROM replicas WHERE last_seen < $1")
                .bind(at - FORGOTTEN_AFTER)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// The replicas seen within [`SEEN_WITHIN`], most recently started first.
    pub async fn recent(&self) -> Result<Vec<Replica>, StoreError> {
        let since = now() - i64::try_from(SEEN_WITHIN.as_secs()).unwrap_or(60);
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT id, hostname, version, started_at, last_seen FROM replicas \
                 WHERE last_seen >= $1 ORDER BY started_at DESC, id",
            )
            .bind(since)
            .fetch_all(p)
            .await?
        }))
    }
}
