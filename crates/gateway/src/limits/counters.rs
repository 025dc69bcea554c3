//! The counters behind rate limits and budgets, and the one decision made
//! on them. Two backends with the same semantics: [`LocalCounters`] in this
//! process (one replica), and [`super::redis::RedisCounters`] (shared by
//! every replica; the same decision as a Lua script, one round trip).
//!
//! Per scope (a key or a user) three integer counters ([`CounterKey`]):
//! - requests in the current minute, expiring with the minute;
//! - tokens in the current minute: the estimate added at admission,
//!   corrected by the real usage afterwards;
//! - micro-dollars spent in the budget's period: seeded from the
//!   database (the sum of the usage rows' cost) when missing, then increased
//!   as usage is written; it expires after [`SPEND_TTL_SECS`] at most, so
//!   it is re-read from the database at least that often and a lost
//!   increment is forgotten within that time.
//!
//! The decision ([`decide`]): refuse when a spent budget, a full request
//! window or a token window without room for the estimate is found in any
//! scope (budget first, then requests, then tokens, scope by scope); when
//! none is, count the request and its estimate in every scope.

use std::collections::HashMap;
use std::sync::Mutex;

/// How long a minute's counters live (a little over the minute).
pub(crate) const WINDOW_TTL_SECS: i64 = 120;
/// How long a spent amount is trusted before it is re-read from the store.
pub(crate) const SPEND_TTL_SECS: i64 = 600;

/// Whose counters: a key's (`k`) or a user's (`u`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Owner {
    pub tag: char,
    pub id: uuid::Uuid,
}

/// One counter, by what it counts; named as text only for Redis (the hot
/// path builds no string).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CounterKey {
    /// Requests in a minute.
    Requests(Owner, i64),
    /// Tokens in a minute.
    Tokens(Owner, i64),
    /// Micro-dollars spent in a budget period (its name and start).
    Spend(Owner, &'static str, i64),
}

impl CounterKey {
    /// The Redis key: `gw:rl:<k|u>:<id>:<minute>:<r|t>`,
    /// `gw:sp:<k|u>:<id>:<period>:<start>`.
    pub(crate) fn redis_key(&self) -> String {
        match self {
            CounterKey::Requests(o, minute) => format!("gw:rl:{}:{}:{minute}:r", o.tag, o.id),
            CounterKey::Tokens(o, minute) => format!("gw:rl:{}:{}:{minute}:t", o.tag, o.id),
            CounterKey::Spend(o, period, start) => {
                format!("gw:sp:{}:{}:{period}:{start}", o.tag, o.id)
            }
        }
    }
}

/// What is checked of one scope.
#[derive(Debug, Clone)]
pub(crate) struct ScopeCheck {
    pub owner: Owner,
    pub minute: i64,
    /// The budget's period (name and start), when the scope has a budget.
    pub spend_period: Option<(&'static str, i64)>,
    /// 0: not limited.
    pub rpm: i64,
    /// 0: not limited.
    pub tpm: i64,
    /// The budget in micro-dollars (with `spend_period`).
    pub budget_micros: i64,
}

impl ScopeCheck {
    pub(crate) fn requests_key(&self) -> CounterKey {
        CounterKey::Requests(self.owner, self.minute)
    }

    pub(crate) fn tokens_key(&self) -> CounterKey {
        CounterKey::Tokens(self.owner, self.minute)
    }

    pub(crate) fn spend_key(&self) -> Option<CounterKey> {
        self.spend_period
            .map(|(period, start)| CounterKey::Spend(self.owner, period, start))
    }
}

/// What the counters of one scope held (after counting, when admitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ScopeCount {
    pub requests: i64,
    pub tokens: i64,
    /// Micro-dollars; `None`: not known (never seeded, or expired).
    pub spend: Option<i64>,
    /// Admitted through Redis: the requests and tokens counted for this
    /// replica's lease (this request's included; see `super::lease`).
    pub granted_requests: i64,
    pub granted_tokens: i64,
}

/// The outcome of an admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Admitted,
    /// The scope at this index has spent its budget.
    Budget(usize),
    /// The scope's request window is full.
    Requests(usize),
    /// The scope's token window has no room for the estimate.
    Tokens(usize),
}

impl Verdict {
    #[cfg(test)]
    fn code(self) -> i64 {
        match self {
            Verdict::Admitted => 0,
            Verdict::Budget(i) => 100 + i as i64,
            Verdict::Requests(i) => 200 + i as i64,
            Verdict::Tokens(i) => 300 + i as i64,
        }
    }

    /// From the script's number (see [`Verdict::code`]).
    pub(crate) fn from_code(code: i64) -> Self {
        let i = usize::try_from(code % 100).unwrap_or(0);
        match code / 100 {
            1 => Verdict::Budget(i),
            2 => Verdict::Requests(i),
            3 => Verdict::Tokens(i),
            _ => Verdict::Admitted,
        }
    }
}

/// The decision on what the counters hold (`found`, before counting); the
/// Lua script in [`super::redis`] is the same decision.
pub(crate) fn decide(checks: &[ScopeCheck], found: &[ScopeCount], estimate: i64) -> Verdict {
    for (i, (check, count)) in checks.iter().zip(found).enumerate() {
        if check.spend_period.is_some() && count.spend.is_some_and(|s| s >= check.budget_micros) {
            return Verdict::Budget(i);
        }
        if check.rpm > 0 && count.requests >= check.rpm {
            return Verdict::Requests(i);
        }
        if check.tpm > 0 && count.tokens + estimate > check.tpm {
            return Verdict::Tokens(i);
        }
    }
    Verdict::Admitted
}

/// A counter backend failed (Redis unreachable, a timeout, a bad reply).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CounterError(pub String);

/// Counters of this process; for a single replica.
#[derive(Debug, Default)]
pub(crate) struct LocalCounters {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// counter -> (value, expires at, Unix seconds).
    map: HashMap<CounterKey, (i64, i64)>,
    /// Operations since expired entries were last swept.
    since_sweep: u32,
}

impl Entries {
    fn get(&self, key: &CounterKey, now: i64) -> Option<i64> {
        self.map
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(v, _)| *v)
    }

    /// Add `delta`; a missing or expired entry starts at 0 and lives `ttl`.
    fn add(&mut self, key: CounterKey, delta: i64, now: i64, ttl: i64) -> i64 {
        let slot = self.map.entry(key).or_insert((0, now + ttl));
        if slot.1 <= now {
            *slot = (0, now + ttl);
        }
        slot.0 += delta;
        slot.0
    }

    /// Drop expired entries every thousand operations, so the map holds
    /// only live windows.
    fn maybe_sweep(&mut self, now: i64) {
        self.since_sweep += 1;
        if self.since_sweep >= 1000 {
            self.since_sweep = 0;
            self.map.retain(|_, (_, expires)| *expires > now);
        }
    }
}

impl LocalCounters {
    fn entries(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Decide, and count when admitted (see the module doc).
    pub(crate) fn admit(
        &self,
        checks: &[ScopeCheck],
        estimate: i64,
        now: i64,
    ) -> (Verdict, Vec<ScopeCount>) {
        let mut e = self.entries();
        e.maybe_sweep(now);
        let mut counts: Vec<ScopeCount> = checks
            .iter()
            .map(|c| ScopeCount {
                requests: e.get(&c.requests_key(), now).unwrap_or(0),
                tokens: e.get(&c.tokens_key(), now).unwrap_or(0),
                spend: c.spend_key().and_then(|k| e.get(&k, now)),
                ..ScopeCount::default()
            })
            .collect();
        let verdict = decide(checks, &counts, estimate);
        if verdict == Verdict::Admitted {
            for (c, count) in checks.iter().zip(&mut counts) {
                count.requests = e.add(c.requests_key(), 1, now, WINDOW_TTL_SECS);
                count.tokens = e.add(c.tokens_key(), estimate, now, WINDOW_TTL_SECS);
            }
        }
        (verdict, counts)
    }

    /// Add to counters that exist (a token correction, a spend); a missing
    /// one stays missing (its window passed, or it is seeded later).
    pub(crate) fn add_existing(&self, adds: &[(CounterKey, i64)], now: i64) {
        let mut e = self.entries();
        for (key, delta) in adds {
            if let Some((value, expires)) = e.map.get_mut(key) {
                if *expires > now {
                    *value += delta;
                }
            }
        }
    }

    /// Set a spent amount read from the store unless one is already there;
    /// returns the amount in force.
    pub(crate) fn seed(&self, key: CounterKey, micros: i64, ttl: i64, now: i64) -> i64 {
        let mut e = self.entries();
        match e.get(&key, now) {
            Some(v) => v,
            None => {
                e.map.insert(key, (micros, now + ttl));
                micros
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A scope named by a small number (tests), in minute 7.
    pub(crate) fn check(n: u128, rpm: i64, tpm: i64, budget: Option<i64>) -> ScopeCheck {
        ScopeCheck {
            owner: Owner {
                tag: 'k',
                id: uuid::Uuid::from_u128(n),
            },
            minute: 7,
            spend_period: budget.map(|_| ("daily", 0)),
            rpm,
            tpm,
            budget_micros: budget.unwrap_or(0),
        }
    }

    #[test]
    fn verdict_codes_round_trip() {
        for v in [
            Verdict::Admitted,
            Verdict::Budget(1),
            Verdict::Requests(0),
            Verdict::Tokens(1),
        ] {
            assert_eq!(Verdict::from_code(v.code()), v);
        }
    }

    #[test]
    fn requests_tokens_and_budget_in_process() {
        let c = LocalCounters::default();
        let now = 1_000_000;
        let checks = [check(1, 3, 100, Some(50)), check(2, 0, 0, None)];
        for n in 1..=3 {
            let (v, counts) = c.admit(&checks, 10, now);
            assert_eq!(v, Verdict::Admitted);
            assert_eq!((counts[0].requests, counts[0].tokens), (n, 10 * n));
            assert_eq!(counts[1].requests, n, "unlimited scopes count too");
        }
        assert_eq!(c.admit(&checks, 10, now).0, Verdict::Requests(0));
        // A new minute (new keys), a bigger estimate than the room left.
        let next = [check(3, 3, 100, Some(50)), check(4, 0, 0, None)];
        assert_eq!(c.admit(&next, 101, now).0, Verdict::Tokens(0));
        assert_eq!(c.admit(&next, 100, now).0, Verdict::Admitted);
        // Corrections apply to existing counters only.
        let gone = check(9, 0, 0, None);
        c.add_existing(&[(next[0].tokens_key(), -60), (gone.tokens_key(), 5)], now);
        assert_eq!(c.admit(&next, 60, now).0, Verdict::Admitted);
        // The budget: unknown until seeded, then refused once spent.
        let spend = next[0].spend_key().unwrap();
        assert_eq!(c.seed(spend, 20, SPEND_TTL_SECS, now), 20);
        assert_eq!(
            c.seed(spend, 0, SPEND_TTL_SECS, now),
            20,
            "a seed never overwrites"
        );
        c.add_existing(&[(spend, 30)], now);
        assert_eq!(
            spend.redis_key(),
            format!("gw:sp:k:{}:daily:0", uuid::Uuid::from_u128(3))
        );
        assert_eq!(c.admit(&next, 0, now).0, Verdict::Budget(0));
        // Expiry: the spent amount is forgotten after its time to live.
        assert_eq!(
            c.admit(&next, 0, now + SPEND_TTL_SECS + 1).0,
            Verdict::Admitted
        );
    }
}
