//! Usage (spec 2.9): the `/v1` chat requests in `usage_events`, written in
//! batches by [`crate::usage`]'s writer ([`Usage::insert_batch`]: a few
//! multi-row `INSERT`s in one transaction), and read back as aggregates
//! ([`Usage::aggregate`]) grouped by day (UTC), model, provider or user, over
//! a time range. A row stands for one request or, once the writer merged a
//! batch's records that differ only in their counts, for several
//! ([`UsageRecord::requests`]; `docs/decisions.md`, "Usage rows merged per
//! second").
//!
//! Sums are cast to `BIGINT` in SQL: PostgreSQL's `SUM(bigint)` is `numeric`.

use sqlx::QueryBuilder;

use super::ids::{ApiKeyId, UserId};
use super::{with_pool, write_tx, Pool, Store, StoreError};

/// The columns of a usage row, in bind order.
const INSERT_COLUMNS: &str = "INSERT INTO usage_events (user_id, key_id, provider, model, \
     stream, status, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
     latency_ms, created_at, cost_usd, requests) ";

/// Values in one usage row ([`INSERT_COLUMNS`]).
const COLUMNS: usize = 14;

/// Rows per SQLite `INSERT` statement, largest first: a batch is written
/// as statements of these sizes (100 rows: 64 + 16 + 16 + 4), each a cached
/// prepared statement with anonymous `?` parameters. The per-statement work
/// (sqlx's round trip to its worker thread, opening the table and index
/// cursors, resetting and clearing the bindings) is then paid a few times a
/// batch instead of once a row.
const SQLITE_ROWS_PER_INSERT: [usize; 4] = [64, 16, 4, 1];

/// The SQLite statement for each size of [`SQLITE_ROWS_PER_INSERT`].
static SQLITE_INSERTS: std::sync::LazyLock<[(usize, String); 4]> = std::sync::LazyLock::new(|| {
    SQLITE_ROWS_PER_INSERT.map(|rows| {
        let row = format!("({})", vec!["?"; COLUMNS].join(", "));
        (
            rows,
            format!("{INSERT_COLUMNS}VALUES {}", vec![row; rows].join(", ")),
        )
    })
});

/// Rows per `INSERT` statement ([`COLUMNS`] parameters each, well under both
/// backends' parameter limits).
const ROWS_PER_INSERT: usize = 500;

/// One request as recorded, or several merged into one row
/// ([`UsageRecord::absorb`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    pub user_id: UserId,
    pub key_id: Option<ApiKeyId>,
    /// Provider id; empty when the request was refused before routing.
    pub provider: String,
    /// Model sent to the provider; empty when refused before routing.
    pub model: String,
    pub stream: bool,
    /// HTTP status, or the status of the error that ended a stream; 499
    /// when the client went away first.
    pub status: u16,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    /// Request start to the end of the answer (the sum over the requests
    /// of a merged row).
    pub latency_ms: i64,
    /// Request start, Unix seconds.
    pub created_at: i64,
    /// What it cost in USD at the registry's prices when it was written;
    /// `None` when its model has no price.
    pub cost_usd: Option<f64>,
    /// How many requests the row stands for: 1 as a request is recorded,
    /// more once records were merged. The counts above are sums over them.
    pub requests: i64,
}

impl UsageRecord {
    /// What a row is merged by: everything the aggregates group or filter
    /// by (the second it started, user, key, status, stream, provider,
    /// model).
    pub fn merge_key(&self) -> (i64, UserId, Option<ApiKeyId>, u16, bool, &str, &str) {
        (
            self.created_at,
            self.user_id,
            self.key_id,
            self.status,
            self.stream,
            &self.provider,
            &self.model,
        )
    }

    /// Whether `other` may be merged into this row: the same
    /// [`Self::merge_key`].
    pub fn same_row(&self, other: &UsageRecord) -> bool {
        self.merge_key() == other.merge_key()
    }

    /// Merge `other` (a [`Self::same_row`]) into this row: its requests and
    /// every count added. A cost is the sum of the known ones, as SQL's
    /// `SUM` takes it.
    pub fn absorb(&mut self, other: &UsageRecord) {
        self.requests = self.requests.saturating_add(other.requests);
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.latency_ms = self.latency_ms.saturating_add(other.latency_ms);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// What rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// UTC calendar day of the request start (`YYYY-MM-DD`).
    Day,
    Model,
    Provider,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<GroupBy> {
        match text {
            "day" => Some(GroupBy::Day),
            "model" => Some(GroupBy::Model),
            "provider" => Some(GroupBy::Provider),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Model => "model",
            GroupBy::Provider => "provider",
        }
    }

    /// The SQL of the group key, as text on both backends.
    fn expr(self) -> &'static str {
        match self {
            GroupBy::Day => "CAST(e.created_at / 86400 AS TEXT)",
            GroupBy::Model => "e.model",
            GroupBy::Provider => "e.provider",
        }
    }
}

/// Which rows an aggregate covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageFilter {
    /// Inclusive lower bound, Unix seconds.
    pub from: Option<i64>,
    /// Exclusive upper bound, Unix seconds.
    pub to: Option<i64>,
    /// Only this user's requests.
    pub user: Option<UserId>,
}

/// One aggregate row.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    /// The group's value (day as `YYYY-MM-DD`, model or provider); `None`
    /// when not grouped.
    pub group: Option<String>,
    /// The user, when grouped by user.
    pub user_id: Option<String>,
    /// The user's email (`None` for a deleted user), when grouped by user.
    pub email: Option<String>,
    pub requests: i64,
    /// Requests whose status was 400 or more (499: the client went away).
    pub errors: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub avg_latency_ms: i64,
    /// USD, the sum over the rows with a price.
    pub cost_usd: f64,
}

#[derive(sqlx::FromRow)]
struct AggregateRow {
    grp: Option<String>,
    user_id: Option<String>,
    email: Option<String>,
    requests: i64,
    errors: i64,
    input_tokens: i64,
    output_tokens: i64,
    cache_read_tokens: i64,
    cache_write_tokens: i64,
    avg_latency_ms: i64,
    cost_usd: f64,
}

/// The usage repository.
pub struct Usage<'a> {
    store: &'a Store,
}

impl<'a> Usage<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Usage { store }
    }

    /// Write `records` in one transaction. PostgreSQL: [`ROWS_PER_INSERT`]
    /// rows per statement (one round trip each), sent unprepared: every batch
    /// length is its own SQL text, and caching each would grow sqlx's
    /// per-connection statement caches (`docs/reliability.md`, "Soak").
    /// SQLite: statements of the
    /// fixed sizes of [`SQLITE_ROWS_PER_INSERT`], largest first. Measured in
    /// callgrind (`docs/benchmarks.md`, "Full mode against proxy mode"): a
    /// `VALUES` list of whatever length a batch has is a new statement each
    /// time, which SQLite parsed anew at each flush (about 40,000
    /// instructions a request), and named `$N` parameters made sqlx look each
    /// one up by name, linear in the statement's parameter count; fixed sizes
    /// with anonymous parameters avoid both.
    pub async fn insert_batch(&self, records: &[UsageRecord]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        match self.store.pool() {
            Pool::Sqlite(p) => write_tx!(p, tx => { insert_sqlite(&mut tx, records).await }),
            Pool::Postgres(p) => write_tx!(p, tx => {
                for chunk in records.chunks(ROWS_PER_INSERT) {
                    let mut q = QueryBuilder::new(INSERT_COLUMNS);
                    q.push_values(chunk, |mut row, r| {
                        row.push_bind(r.user_id)
                            .push_bind(r.key_id)
                            .push_bind(r.provider.as_str())
                            .push_bind(r.model.as_str())
                            .push_bind(r.stream)
                            .push_bind(i32::from(r.status))
                            .push_bind(r.input_tokens)
                            .push_bind(r.output_tokens)
                            .push_bind(r.cache_read_tokens)
                            .push_bind(r.cache_write_tokens)
                            .push_bind(r.latency_ms)
                            .push_bind(r.created_at)
                            .push_bind(r.cost_usd)
                            .push_bind(r.requests);
                    });
                    // Not kept as a prepared statement: each batch length
                    // is another text, and sqlx's per-connection cache would
                    // keep up to 100 of them with a type entry per parameter
                    // (a 200-row batch: 2,600), megabytes a connection that
                    // only grow with traffic (docs/reliability.md, "Soak").
                    q.build().persistent(false).execute(&mut *tx).await?;
                }
                Ok(())
            }),
        }
        Ok(())
    }

    /// A writer of usage batches that keeps its own connection (see
    /// [`UsageWriter`]).
    pub fn writer(&self) -> UsageWriter {
        UsageWriter {
            store: self.store.clone(),
            sqlite: None,
        }
    }

    /// Aggregates over `filter`, one row per group (`group_by`), per user
    /// (`by_user`), per both, or one row in all (neither; an empty range
    /// gives a row of zeros). Days come out as `YYYY-MM-DD`; rows are sorted
    /// by user email, then day ascending or, for the other groups, by tokens
    /// descending.
    pub async fn aggregate(
        &self,
        filter: UsageFilter,
        group_by: Option<GroupBy>,
        by_user: bool,
    ) -> Result<Vec<UsageRow>, StoreError> {
        let group_expr = group_by.map(GroupBy::expr).unwrap_or("NULL");
        let (user_expr, email_expr) = if by_user {
            ("CAST(e.user_id AS TEXT)", "MAX(u.email)")
        } else {
            ("NULL", "NULL")
        };
        let rows: Vec<AggregateRow> = with_pool!(self.store, p => {
            let mut q = QueryBuilder::new(format!(
                "SELECT CAST({group_expr} AS TEXT) AS grp, CAST({user_expr} AS TEXT) AS user_id, \
                 CAST({email_expr} AS TEXT) AS email, \
                 CAST(COALESCE(SUM(e.requests), 0) AS BIGINT) AS requests, \
                 CAST(COALESCE(SUM(CASE WHEN e.status >= 400 THEN e.requests ELSE 0 END), 0) AS BIGINT) AS errors, \
                 CAST(COALESCE(SUM(e.input_tokens), 0) AS BIGINT) AS input_tokens, \
                 CAST(COALESCE(SUM(e.output_tokens), 0) AS BIGINT) AS output_tokens, \
                 CAST(COALESCE(SUM(e.cache_read_tokens), 0) AS BIGINT) AS cache_read_tokens, \
                 CAST(COALESCE(SUM(e.cache_write_tokens), 0) AS BIGINT) AS cache_write_tokens, \
                 CAST(COALESCE(SUM(e.latency_ms) / SUM(e.requests), 0) AS BIGINT) AS avg_latency_ms, \
                 CAST(COALESCE(SUM(e.cost_usd), 0) AS DOUBLE PRECISION) AS cost_usd \
                 FROM usage_events e "
            ));
            if by_user {
                q.push("LEFT JOIN users u ON u.id = e.user_id ");
            }
            q.push("WHERE 1 = 1");
            if let Some(from) = filter.from {
                q.push(" AND e.created_at >= ").push_bind(from);
            }
            if let Some(to) = filter.to {
                q.push(" AND e.created_at < ").push_bind(to);
            }
            if let Some(user) = filter.user {
                q.push(" AND e.user_id = ").push_bind(user);
            }
            let mut keys = Vec::new();
            if by_user {
                keys.push("e.user_id");
            }
            if let Some(g) = group_by {
                keys.push(g.expr());
            }
            if !keys.is_empty() {
                q.push(" GROUP BY ").push(keys.join(", "));
            }
            q.build_query_as().fetch_all(p).await?
        });
        let mut out: Vec<UsageRow> = rows
            .into_iter()
            .map(|r| UsageRow {
                group: match group_by {
                    Some(GroupBy::Day) => r.grp.as_deref().map(day_of),
                    _ => r.grp,
                },
                user_id: r.user_id,
                email: r.email,
                requests: r.requests,
                errors: r.errors,
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                cache_read_tokens: r.cache_read_tokens,
                cache_write_tokens: r.cache_write_tokens,
                avg_latency_ms: r.avg_latency_ms,
                cost_usd: r.cost_usd,
            })
            .collect();
        out.sort_by(|a, b| {
            let users = (&a.email, &a.user_id).cmp(&(&b.email, &b.user_id));
            let groups = match group_by {
                Some(GroupBy::Day) | None => a.group.cmp(&b.group),
                Some(_) => (b.input_tokens + b.output_tokens)
                    .cmp(&(a.input_tokens + a.output_tokens))
                    .then_with(|| a.group.cmp(&b.group)),
            };
            users.then(groups)
        });
        Ok(out)
    }

    /// USD spent by `user` (by one of its keys when `key` is given) in
    /// requests started at or after `since` (Unix seconds): what budgets
    /// count. Reads the user's index, so it stays cheap per user.
    pub async fn spent_since(
        &self,
        user: UserId,
        key: Option<ApiKeyId>,
        since: i64,
    ) -> Result<f64, StoreError> {
        let (spent,): (Option<f64>,) = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT SUM(cost_usd) FROM usage_events WHERE user_id = $1 AND created_at >= $2 \
                 AND ($3 IS NULL OR key_id = $3)",
            )
            .bind(user)
            .bind(since)
            .bind(key)
            .fetch_one(p)
            .await?
        });
        Ok(spent.unwrap_or(0.0))
    }

    /// USD spent by each of `user`'s keys in requests started at or after
    /// `since`: one grouped query for a whole key list.
    pub async fn spent_by_key_since(
        &self,
        user: UserId,
        since: i64,
    ) -> Result<Vec<(ApiKeyId, f64)>, StoreError> {
        let rows: Vec<(Option<ApiKeyId>, Option<f64>)> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT key_id, SUM(cost_usd) FROM usage_events \
                 WHERE user_id = $1 AND created_at >= $2 AND key_id IS NOT NULL GROUP BY key_id",
            )
            .bind(user)
            .bind(since)
            .fetch_all(p)
            .await?
        });
        Ok(rows
            .into_iter()
            .filter_map(|(key, spent)| Some((key?, spent.unwrap_or(0.0))))
            .collect())
    }

    /// Every recorded row of `user`, oldest first (tests).
    pub async fn records_of(&self, user: UserId) -> Result<Vec<UsageRecord>, StoreError> {
        #[derive(sqlx::FromRow)]
        struct Row {
            user_id: UserId,
            key_id: Option<ApiKeyId>,
            provider: String,
            model: String,
            stream: bool,
            status: i32,
            input_tokens: i64,
            output_tokens: i64,
            cache_read_tokens: i64,
            cache_write_tokens: i64,
            latency_ms: i64,
            created_at: i64,
            cost_usd: Option<f64>,
            requests: i64,
        }
        let rows: Vec<Row> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT user_id, key_id, provider, model, stream, status, input_tokens, \
                 output_tokens, cache_read_tokens, cache_write_tokens, latency_ms, created_at, \
                 cost_usd, CAST(requests AS BIGINT) AS requests FROM usage_events \
                 WHERE user_id = $1 ORDER BY id",
            )
            .bind(user)
            .fetch_all(p)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|r| UsageRecord {
                user_id: r.user_id,
                key_id: r.key_id,
                provider: r.provider,
                model: r.model,
                stream: r.stream,
                status: u16::try_from(r.status).unwrap_or(0),
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                cache_read_tokens: r.cache_read_tokens,
                cache_write_tokens: r.cache_write_tokens,
                latency_ms: r.latency_ms,
                created_at: r.created_at,
                cost_usd: r.cost_usd,
                requests: r.requests,
            })
            .collect())
    }
}

/// Days since the epoch (as the SQL gives them) as `YYYY-MM-DD`.
fn day_of(days: &str) -> String {
    days.trim()
        .parse::<i64>()
        .ok()
        .and_then(|d| d.checked_mul(86_400))
        .and_then(|secs| time::OffsetDateTime::from_unix_timestamp(secs).ok())
        .map(|t| format!("{:04}-{:02}-{:02}", t.year(), u8::from(t.month()), t.day()))
        .unwrap_or_else(|| days.to_owned())
}

/// The usage writer's path to the store. On SQLite it holds one connection
/// of its own, taken out of the pool at the first batch: its four cached
/// statements are prepared once, and its page cache stays warm with the
/// pages usage rows go to. Through the pool, each batch went to whichever
/// connection was free, so every connection prepared every statement size
/// (SQLite's parser, about 1,000 instructions a request in the benchmark's
/// first thousand requests) and re-read the pages another had changed.
/// After a failed batch the connection is dropped and the next batch takes
/// a fresh one. On PostgreSQL batches go through the pool as before
/// ([`Usage::insert_batch`]).
pub struct UsageWriter {
    store: Store,
    sqlite: Option<sqlx::SqliteConnection>,
}

impl UsageWriter {
    /// Write `records` in one transaction ([`Usage::insert_batch`]).
    pub async fn insert_batch(&mut self, records: &[UsageRecord]) -> Result<(), StoreError> {
        let Pool::Sqlite(pool) = self.store.pool() else {
            return self.store.usage().insert_batch(records).await;
        };
        if records.is_empty() {
            return Ok(());
        }
        let conn = match &mut self.sqlite {
            Some(conn) => conn,
            None => self.sqlite.insert(pool.acquire().await?.detach()),
        };
        let written = async {
            let mut tx = sqlx::Connection::begin_with(conn, super::SQLITE_BEGIN_WRITE).await?;
            insert_sqlite(&mut tx, records).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(())
        }
        .await;
        if written.is_err() {
            // Whatever failed, the next batch starts on a fresh connection.
            self.sqlite = None;
        }
        written
    }

    /// Close the writer's own connection (at shutdown).
    pub async fn close(mut self) {
        if let Some(conn) = self.sqlite.take() {
            if let Err(e) = sqlx::Connection::close(conn).await {
                tracing::debug!("closing the usage writer's connection: {e}");
            }
        }
    }
}

/// Insert `records` on SQLite, inside the caller's transaction: statements
/// of the fixed sizes of [`SQLITE_ROWS_PER_INSERT`], largest first, each
/// with its arguments collected into one vector sized up front (bound one
/// by one through `Query::bind`, the vector grew by doubling, copying the
/// arguments each time).
async fn insert_sqlite(
    conn: &mut sqlx::SqliteConnection,
    records: &[UsageRecord],
) -> Result<(), StoreError> {
    use sqlx::Arguments as _;

    let mut rest = records;
    while !rest.is_empty() {
        // The last size is 1, so one always fits while rows are left.
        let Some((rows, sql)) = SQLITE_INSERTS.iter().find(|(rows, _)| *rows <= rest.len()) else {
            break;
        };
        let (chunk, tail) = rest.split_at(*rows);
        let mut args = sqlx::sqlite::SqliteArguments::default();
        args.reserve(chunk.len() * COLUMNS, 0);
        for r in chunk {
            add_row(&mut args, r).map_err(|e| StoreError::Database(sqlx::Error::Encode(e)))?;
        }
        sqlx::query_with(sql.as_str(), args)
            .execute(&mut *conn)
            .await?;
        rest = tail;
    }
    Ok(())
}

/// The values of one usage row, in [`INSERT_COLUMNS`] order.
fn add_row<'q>(
    args: &mut sqlx::sqlite::SqliteArguments<'q>,
    r: &'q UsageRecord,
) -> Result<(), sqlx::error::BoxDynError> {
    use sqlx::Arguments as _;

    args.add(r.user_id)?;
    args.add(r.key_id)?;
    args.add(r.provider.as_str())?;
    args.add(r.model.as_str())?;
    args.add(r.stream)?;
    args.add(i32::from(r.status))?;
    args.add(r.input_tokens)?;
    args.add(r.output_tokens)?;
    args.add(r.cache_read_tokens)?;
    args.add(r.cache_write_tokens)?;
    args.add(r.latency_ms)?;
    args.add(r.created_at)?;
    args.add(r.cost_usd)?;
    args.add(r.requests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_flush_of_any_size_stores_every_row_as_given() {
        let store = crate::store::testing::memory_store().await;
        let user = crate::store::testing::user(&store, "u@example.com").await;
        // 89 = 64 + 16 + 4 + 4 + 1: every SQLite statement size, one twice.
        let n: usize = 89;
        let rows: Vec<UsageRecord> = (0..n)
            .map(|i| UsageRecord {
                user_id: user,
                key_id: (i % 2 == 0).then(ApiKeyId::new),
                provider: format!("p{i}"),
                model: format!("m{i}"),
                stream: i % 3 == 0,
                status: 200 + u16::try_from(i).unwrap(),
                input_tokens: i64::try_from(i).unwrap(),
                output_tokens: 2 * i64::try_from(i).unwrap(),
                cache_read_tokens: 3,
                cache_write_tokens: 4,
                latency_ms: 5,
                created_at: 1_700_000_000 + i64::try_from(i).unwrap(),
                cost_usd: (i % 4 != 0).then(|| f64::from(u32::try_from(i).unwrap()) / 1000.0),
                requests: 1 + i64::try_from(i % 5).unwrap(),
            })
            .collect();
        store.usage().insert_batch(&rows).await.unwrap();
        let mut stored = store.usage().records_of(user).await.unwrap();
        stored.sort_by_key(|r| r.created_at);
        assert_eq!(stored, rows);
    }

    #[tokio::test]
    async fn a_merged_row_counts_as_its_requests() {
        let store = crate::store::testing::memory_store().await;
        let user = crate::store::testing::user(&store, "m@example.com").await;
        let row = |status: u16, requests: i64, latency_ms: i64| UsageRecord {
            user_id: user,
            key_id: None,
            provider: "primary".into(),
            model: "m".into(),
            stream: false,
            status,
            input_tokens: 10 * requests,
            output_tokens: 20 * requests,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            latency_ms,
            created_at: 1_700_000_000,
            cost_usd: Some(0.5),
            requests,
        };
        let rows = [row(200, 3, 30), row(500, 2, 12), row(200, 1, 2)];
        store.usage().insert_batch(&rows).await.unwrap();
        let all = store
            .usage()
            .aggregate(UsageFilter::default(), None, false)
            .await
            .unwrap();
        assert_eq!(all.len(), 1);
        let total = &all[0];
        assert_eq!((total.requests, total.errors), (6, 2));
        assert_eq!((total.input_tokens, total.output_tokens), (60, 120));
        assert_eq!(total.avg_latency_ms, 44 / 6, "latency summed over requests");
        assert!((total.cost_usd - 1.5).abs() < 1e-12);
    }

    #[test]
    fn days_render_as_dates() {
        assert_eq!(day_of("0"), "1970-01-01");
        assert_eq!(day_of("19675"), "2023-11-14");
        assert_eq!(day_of("x"), "x");
    }

    #[test]
    fn group_names() {
        for g in [GroupBy::Day, GroupBy::Model, GroupBy::Provider] {
            assert_eq!(GroupBy::parse(g.as_str()), Some(g));
        }
        assert_eq!(GroupBy::parse("week"), None);
    }
}
