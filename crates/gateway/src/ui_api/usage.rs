//! Usage reports (spec 2.9, 4.3):
//!
//! - `GET /_ui/api/usage` (session): the caller's own requests;
//! - `GET /_ui/api/admin/usage` (Admin): everyone's, optionally one user's
//!   (`user_id`);
//! - `GET /_ui/api/admin/usage/users` (Admin): one row per user (with the
//!   email), or per user and group when `group_by` is given.
//!
//! Query parameters: `from` and `to` as RFC 3339 (`2025-01-31T12:00:00Z`) or
//! a UTC date (`2025-01-31`). `from` is inclusive; `to` is exclusive as a
//! timestamp and inclusive as a date (the whole day). Default: the last 30
//! days (from 00:00 UTC 29 days ago, no upper bound). `group_by`: `day`
//! (default for the first two), `model` or `provider`.
//!
//! Answer: `{rows: [row], count, totals, from, to, group_by}` where a row is
//! `{group?, user_id?, email?, requests, errors, input_tokens,
//! output_tokens, cache_read_tokens, cache_write_tokens, total_tokens,
//! avg_latency_ms, cost_usd}` (`totals` has the same counters over the whole
//! range; `cost_usd` sums the rows whose model had a price);
//! `from`/`to` echo the range used (RFC 3339, `to` may be `null`).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime, Time};

use super::extract::{Admin, SessionUser};
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock::{now, rfc3339};
use crate::store::ids::UserId;
use crate::store::usage::{GroupBy, UsageFilter, UsageRow};

/// Days covered when `from` is not given.
pub(crate) const DEFAULT_DAYS: i64 = 30;

#[derive(Debug, Default, Deserialize)]
pub(crate) struct UsageQuery {
    from: Option<String>,
    to: Option<String>,
    group_by: Option<String>,
    user_id: Option<String>,
}

/// Which end of the range a date bounds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    From,
    To,
}

/// Unix seconds of a `from`/`to` value (see the module doc).
fn parse_bound(name: &str, raw: &str, end: End) -> Result<i64, GatewayError> {
    let raw = raw.trim();
    if let Ok(t) = OffsetDateTime::parse(raw, &Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let date_format = time::macros::format_description!("[year]-[month]-[day]");
    let date = Date::parse(raw, &date_format).map_err(|_| {
        GatewayError::validation(format!(
            "{name}: expected RFC 3339 (2025-01-31T12:00:00Z) or a date (2025-01-31)"
        ))
    })?;
    let day = date.with_time(Time::MIDNIGHT).assume_utc().unix_timestamp();
    Ok(match end {
        End::From => day,
        End::To => day.saturating_add(86_400),
    })
}

/// The filter and grouping of a query.
fn read_query(
    q: &UsageQuery,
    default_group: Option<GroupBy>,
) -> Result<(UsageFilter, Option<GroupBy>), GatewayError> {
    let from = match &q.from {
        Some(raw) => parse_bound("from", raw, End::From)?,
        None => {
            let today = now().div_euclid(86_400) * 86_400;
            today - (DEFAULT_DAYS - 1) * 86_400
        }
    };
    let to =
        q.to.as_deref()
            .map(|raw| parse_bound("to", raw, End::To))
            .transpose()?;
    if to.is_some_and(|to| to <= from) {
        return Err(GatewayError::validation("to: must be after from"));
    }
    let group_by = match q.group_by.as_deref().map(str::trim) {
        None | Some("") => default_group,
        Some(g) => Some(GroupBy::parse(g).ok_or_else(|| {
            GatewayError::validation("group_by: expected day, model or provider")
        })?),
    };
    let user = q
        .user_id
        .as_deref()
        .map(|u| {
            u.parse::<UserId>()
                .map_err(|_| GatewayError::validation("user_id: expected a user id (UUID)"))
        })
        .transpose()?;
    Ok((
        UsageFilter {
            from: Some(from),
            to,
            user,
        },
        group_by,
    ))
}

/// The counters of a row, or of the whole range.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct UsageFigures {
    requests: i64,
    errors: i64,
    input_tokens: i64,
    output_tokens: i64,
    cache_read_tokens: i64,
    cache_write_tokens: i64,
    total_tokens: i64,
    avg_latency_ms: i64,
    /// USD at the registry's prices when each request was recorded
    /// (requests of models without a price count 0).
    cost_usd: f64,
}

impl From<&UsageRow> for UsageFigures {
    fn from(row: &UsageRow) -> Self {
        UsageFigures {
            requests: row.requests,
            errors: row.errors,
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            cache_read_tokens: row.cache_read_tokens,
            cache_write_tokens: row.cache_write_tokens,
            total_tokens: row
                .input_tokens
                .saturating_add(row.output_tokens)
                .saturating_add(row.cache_read_tokens)
                .saturating_add(row.cache_write_tokens),
            avg_latency_ms: row.avg_latency_ms,
            cost_usd: row.cost_usd,
        }
    }
}

/// One row: `group` when grouped (`null` for requests without a model or
/// provider), `user_id` and `email` when per user.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "UsageRow"))]
pub(crate) struct UsageRowView {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    group: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    user_id: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    email: Option<Option<String>>,
    #[serde(flatten)]
    figures: UsageFigures,
}

/// A usage report.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct UsageAnswer {
    count: usize,
    rows: Vec<UsageRowView>,
    totals: UsageFigures,
    from: String,
    to: Option<String>,
    group_by: Option<GroupBy>,
}

async fn report(
    app: &AppState,
    filter: UsageFilter,
    group_by: Option<GroupBy>,
    by_user: bool,
) -> Result<Json<UsageAnswer>, GatewayError> {
    let usage = app.store()?.usage();
    let rows = usage.aggregate(filter, group_by, by_user).await?;
    let totals = usage.aggregate(filter, None, false).await?;
    let rows: Vec<UsageRowView> = rows
        .iter()
        .map(|r| UsageRowView {
            group: group_by.map(|_| r.group.clone()),
            user_id: by_user.then(|| r.user_id.clone()),
            email: by_user.then(|| r.email.clone()),
            figures: UsageFigures::from(r),
        })
        .collect();
    Ok(Json(UsageAnswer {
        count: rows.len(),
        rows,
        // One row always: an aggregate over no requests counts zeros.
        totals: totals.first().map(UsageFigures::from).unwrap_or_default(),
        from: filter.from.map(rfc3339).unwrap_or_default(),
        to: filter.to.map(rfc3339),
        group_by,
    }))
}

fn query(q: Result<Query<UsageQuery>, QueryRejection>) -> Result<UsageQuery, GatewayError> {
    q.map(|Query(q)| q)
        .map_err(|e| GatewayError::validation(format!("query: {e}")))
}

/// `GET /_ui/api/usage`.
pub(crate) async fn own(
    State(app): State<AppState>,
    who: SessionUser,
    q: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Json<UsageAnswer>, GatewayError> {
    let q = query(q)?;
    if q.user_id.is_some() {
        return Err(GatewayError::validation(
            "user_id: only admins choose the user (GET /_ui/api/admin/usage)",
        ));
    }
    let (mut filter, group_by) = read_query(&q, Some(GroupBy::Day))?;
    filter.user = Some(who.user.id);
    report(&app, filter, group_by, false).await
}

/// `GET /_ui/api/admin/usage`.
pub(crate) async fn global(
    State(app): State<AppState>,
    _admin: Admin,
    q: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Json<UsageAnswer>, GatewayError> {
    let (filter, group_by) = read_query(&query(q)?, Some(GroupBy::Day))?;
    report(&app, filter, group_by, false).await
}

/// `GET /_ui/api/admin/usage/users`.
pub(crate) async fn per_user(
    State(app): State<AppState>,
    _admin: Admin,
    q: Result<Query<UsageQuery>, QueryRejection>,
) -> Result<Json<UsageAnswer>, GatewayError> {
    let (filter, group_by) = read_query(&query(q)?, None)?;
    report(&app, filter, group_by, true).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_accept_rfc3339_and_dates() {
        assert_eq!(
            parse_bound("from", "2023-11-14T22:13:20Z", End::From).unwrap(),
            1_700_000_000
        );
        assert_eq!(
            parse_bound("from", "2023-11-14T23:13:20+01:00", End::From).unwrap(),
            1_700_000_000
        );
        assert_eq!(
            parse_bound("from", "1970-01-02", End::From).unwrap(),
            86_400
        );
        // A date as `to` covers that whole day.
        assert_eq!(
            parse_bound("to", "1970-01-02", End::To).unwrap(),
            2 * 86_400
        );
        let e = parse_bound("from", "yesterday", End::From).unwrap_err();
        assert!(e.to_string().starts_with("from:"), "{e}");
    }

    #[test]
    fn queries_are_validated() {
        let q = |from: Option<&str>, to: Option<&str>, g: Option<&str>| UsageQuery {
            from: from.map(Into::into),
            to: to.map(Into::into),
            group_by: g.map(Into::into),
            user_id: None,
        };
        let (f, g) = read_query(&q(None, None, None), Some(GroupBy::Day)).unwrap();
        assert_eq!(g, Some(GroupBy::Day));
        let from = f.from.unwrap();
        assert_eq!(from % 86_400, 0);
        assert!(now() - from < DEFAULT_DAYS * 86_400);
        assert_eq!(f.to, None);
        let (_, g) = read_query(&q(None, None, Some("model")), None).unwrap();
        assert_eq!(g, Some(GroupBy::Model));
        assert!(read_query(&q(None, None, Some("week")), None).is_err());
        assert!(read_query(&q(Some("2025-01-02"), Some("2025-01-01"), None), None).is_err());
        // One day, by dates.
        let (f, _) = read_query(&q(Some("2025-01-01"), Some("2025-01-01"), None), None).unwrap();
        assert_eq!(f.to.unwrap() - f.from.unwrap(), 86_400);
    }
}
