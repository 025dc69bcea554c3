//! Leases: with Redis, a replica that is admitted gets a share of what is
//! left in the window (`floor(left / LEASE_DIVISOR)` requests, at most
//! [`LEASE_MOST`], and tokens for as many requests of this one's estimate
//! within the same share of the tokens left), already counted in Redis, and admits the following requests of that window from the share
//! without a round trip. Far from a limit a round trip serves many
//! requests; near it the share is one request and every admission asks
//! Redis, so a limit is never exceeded across replicas. What a replica
//! leased and did not use is lost at the window's end: the error is on the
//! safe side (a few requests refused early), bounded by one share per
//! replica.
//!
//! A budget's spent amount is taken from the last round trip when it is at
//! most [`SPEND_FRESH`] old (costs are counted once a second anyway).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::counters::{Owner, ScopeCheck, ScopeCount};

/// A lease is this fraction of what is left in the window.
pub(crate) const LEASE_DIVISOR: i64 = 8;
/// The most requests one lease grants.
pub(crate) const LEASE_MOST: i64 = 1000;
/// How long a spent amount read from Redis is used without asking again.
const SPEND_FRESH: Duration = Duration::from_secs(1);
/// Entries kept before the ones of past windows are swept.
const SWEEP_OVER: usize = 4096;

/// This replica's unused shares, per scope and window.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    map: Mutex<HashMap<Owner, Lease>>,
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    /// The window (minute) the lease belongs to.
    minute: i64,
    requests_left: i64,
    tokens_left: i64,
    /// The counters in Redis at the last round trip (all replicas').
    requests_seen: i64,
    tokens_seen: i64,
    spend: Option<i64>,
    spend_read: Instant,
}

impl Lease {
    /// The counts as this replica sees them (for the headers): Redis's,
    /// less what this replica holds unused.
    fn count(&self) -> ScopeCount {
        ScopeCount {
            requests: self.requests_seen - self.requests_left,
            tokens: self.tokens_seen - self.tokens_left,
            spend: self.spend,
            ..ScopeCount::default()
        }
    }
}

impl Leases {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<Owner, Lease>> {
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Admit from the leases when every scope has room (and a fresh spent
    /// amount under its budget): the counts for the headers, or `None`
    /// when Redis must be asked.
    pub(crate) fn take(&self, checks: &[ScopeCheck], estimate: i64) -> Option<Vec<ScopeCount>> {
        let mut map = self.map();
        let now = Instant::now();
        let covered = checks.iter().all(|c| {
            map.get(&c.owner).is_some_and(|l| {
                l.minute == c.minute
                    && (c.rpm == 0 || l.requests_left >= 1)
                    && (c.tpm == 0 || l.tokens_left >= estimate)
                    && (c.spend_period.is_none()
                        || (now.duration_since(l.spend_read) < SPEND_FRESH
                            && l.spend.is_some_and(|s| s < c.budget_micros)))
            })
        });
        if !covered {
            return None;
        }
        Some(
            checks
                .iter()
                .filter_map(|c| {
                    let l = map.get_mut(&c.owner)?;
                    if c.rpm > 0 {
                        l.requests_left -= 1;
                    }
                    if c.tpm > 0 {
                        l.tokens_left -= estimate;
                    }
                    Some(l.count())
                })
                .collect(),
        )
    }

    /// Keep what a round trip granted (this request's share taken), adding
    /// to what was left of the same window; `counts` become the counts as
    /// this replica sees them.
    pub(crate) fn put(&self, checks: &[ScopeCheck], counts: &mut [ScopeCount], estimate: i64) {
        let mut map = self.map();
        if let Some(minute) = checks.first().map(|c| c.minute) {
            if map.len() > SWEEP_OVER {
                map.retain(|_, l| l.minute >= minute);
            }
        }
        let now = Instant::now();
        for (c, count) in checks.iter().zip(counts.iter_mut()) {
            let left = map
                .get(&c.owner)
                .filter(|l| l.minute == c.minute)
                .map_or((0, 0), |l| (l.requests_left, l.tokens_left));
            let lease = Lease {
                minute: c.minute,
                requests_left: left.0 + (count.granted_requests - 1).max(0),
                tokens_left: left.1 + (count.granted_tokens - estimate).max(0),
                requests_seen: count.requests,
                tokens_seen: count.tokens,
                spend: count.spend,
                spend_read: now,
            };
            *count = lease.count();
            map.insert(c.owner, lease);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::counters::tests::check;

    #[test]
    fn a_lease_serves_until_spent_and_never_past_its_window() {
        let leases = Leases::default();
        let checks = [check(1, 100, 10_000, None)];
        assert!(leases.take(&checks, 10).is_none(), "nothing leased yet");
        // Redis granted 12 requests and 1,250 tokens (this request's 1 and
        // 10 included); 12 and 1,250 are counted there now.
        let mut counts = [ScopeCount {
            requests: 12,
            tokens: 1250,
            granted_requests: 12,
            granted_tokens: 1250,
            ..ScopeCount::default()
        }];
        leases.put(&checks, &mut counts, 10);
        assert_eq!(
            (counts[0].requests, counts[0].tokens),
            (1, 10),
            "as this replica sees it"
        );
        for n in 2..=12 {
            let seen = leases.take(&checks, 10).expect("from the lease");
            assert_eq!(seen[0].requests, n);
        }
        assert!(leases.take(&checks, 10).is_none(), "the lease is spent");
        // A budget needs a fresh spent amount under it.
        let budgeted = [check(2, 100, 0, Some(50))];
        let mut counts = [ScopeCount {
            requests: 10,
            spend: Some(20),
            granted_requests: 10,
            ..ScopeCount::default()
        }];
        leases.put(&budgeted, &mut counts, 0);
        assert!(leases.take(&budgeted, 0).is_some());
        let mut counts = [ScopeCount {
            requests: 11,
            spend: Some(60),
            granted_requests: 1,
            ..ScopeCount::default()
        }];
        leases.put(&budgeted, &mut counts, 0);
        assert!(leases.take(&budgeted, 0).is_none(), "spent: ask Redis");
    }
}
