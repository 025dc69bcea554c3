//! Budgets and rate limits per API key and per user (full deployment;
//! issue 21, interfaces-full.md 7).
//!
//! - **Admission** ([`Limiter::admit`]), before any upstream call: every
//!   `/v1` call of a limited key counts against its requests per minute; a
//!   chat call also adds its input-token estimate to the tokens per minute
//!   and is refused when a budget is spent (429 `budget_exceeded`) or a
//!   window is full (429 `rate_limited`, `retry-after`). The key's limits
//!   and its user's are checked together, in one step.
//! - **Settlement**, when the usage record is written ([`Charge`], applied
//!   by the usage writer): the token window gets the difference between
//!   the real tokens and the estimate, and the budgets get the cost.
//!   Spending is thus counted after the answer: a budget can be overshot by
//!   the requests already in flight when it runs out.
//! - **Where counts live**: in Redis with `REDIS_URL` (shared by every
//!   replica; at most one round trip per admission, far fewer when far
//!   from the limits: see [`lease`]), else in this process. A Redis
//!   failure lets requests through (fail open) with a warning. Spent
//!   amounts come from the usage rows in the database (seeded when missing,
//!   re-read every [`counters::SPEND_TTL_SECS`]), so a Redis flush loses
//!   nothing.
//! - Windows are fixed calendar minutes (UTC): a burst at a minute's edge
//!   can see up to twice the limit within sixty seconds.

pub mod clock;
pub(crate) mod counters;
pub(crate) mod lease;
pub mod policy;
pub(crate) mod redis;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue};

pub(crate) use self::counters::CounterKey;
use self::counters::{CounterError, LocalCounters, Owner, ScopeCheck, ScopeCount, Verdict};
use self::lease::Leases;
use self::policy::{micros_to_usd, usd_to_micros, Limits};
use self::redis::RedisCounters;
use crate::error::GatewayError;
use crate::store::api_keys::KeyOwner;
use crate::store::clock::rfc3339;
use crate::store::Store;
use crate::telemetry;

/// The limits that apply to one key's requests: its own and its user's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OwnerLimits {
    pub key: Limits,
    pub user: Limits,
}

impl OwnerLimits {
    /// `None` when neither the key nor its user is limited (the common
    /// case costs nothing per request).
    pub fn of(key: Limits, user: Limits) -> Option<Arc<Self>> {
        (!key.is_unlimited() || !user.is_unlimited()).then(|| Arc::new(OwnerLimits { key, user }))
    }
}

/// Whose limit it is (for keys of counters and for messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Key,
    User,
}

impl Scope {
    fn tag(self) -> char {
        match self {
            Scope::Key => 'k',
            Scope::User => 'u',
        }
    }

    fn named(self) -> &'static str {
        match self {
            Scope::Key => "this API key",
            Scope::User => "your account",
        }
    }
}

/// What a request owes once its usage is known: the token windows it was
/// admitted in, with its estimate, and the budgets that count its cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Charge {
    tokens_keys: Vec<CounterKey>,
    estimate: i64,
    spend_keys: Vec<CounterKey>,
}

impl Charge {
    /// The counter changes for a request that used `tokens` and cost
    /// `cost_usd`.
    pub(crate) fn settle(
        &self,
        tokens: i64,
        cost_usd: Option<f64>,
        out: &mut Vec<(CounterKey, i64)>,
    ) {
        let delta = tokens - self.estimate;
        if delta != 0 {
            out.extend(self.tokens_keys.iter().map(|k| (*k, delta)));
        }
        if let Some(micros) = cost_usd.map(usd_to_micros).filter(|m| *m > 0) {
            out.extend(self.spend_keys.iter().map(|k| (*k, micros)));
        }
    }

    fn is_empty(&self) -> bool {
        self.tokens_keys.is_empty() && self.spend_keys.is_empty()
    }
}

/// The `x-ratelimit-*` values of an answer (the tightest scope's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateHeaders {
    requests: Option<(i64, i64)>,
    tokens: Option<(i64, i64)>,
    /// Seconds until the window ends.
    reset_secs: i64,
}

static LIMIT_REQUESTS: HeaderName = HeaderName::from_static("x-ratelimit-limit-requests");
static REMAINING_REQUESTS: HeaderName = HeaderName::from_static("x-ratelimit-remaining-requests");
static RESET_REQUESTS: HeaderName = HeaderName::from_static("x-ratelimit-reset-requests");
static LIMIT_TOKENS: HeaderName = HeaderName::from_static("x-ratelimit-limit-tokens");
static REMAINING_TOKENS: HeaderName = HeaderName::from_static("x-ratelimit-remaining-tokens");
static RESET_TOKENS: HeaderName = HeaderName::from_static("x-ratelimit-reset-tokens");

impl RateHeaders {
    /// Add the headers to an answer (names made once: parsing a name per
    /// insert cost more than the rest of the headers' work).
    pub fn apply(&self, headers: &mut HeaderMap) {
        let reset = HeaderValue::from(self.reset_secs.max(0));
        if let Some((limit, remaining)) = self.requests {
            headers.insert(LIMIT_REQUESTS.clone(), HeaderValue::from(limit));
            headers.insert(
                REMAINING_REQUESTS.clone(),
                HeaderValue::from(remaining.max(0)),
            );
            headers.insert(RESET_REQUESTS.clone(), reset.clone());
        }
        if let Some((limit, remaining)) = self.tokens {
            headers.insert(LIMIT_TOKENS.clone(), HeaderValue::from(limit));
            headers.insert(
                REMAINING_TOKENS.clone(),
                HeaderValue::from(remaining.max(0)),
            );
            headers.insert(RESET_TOKENS.clone(), reset);
        }
    }
}

/// The outcome of an admitted request.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    /// Headers for the answer, when a rate is limited and counts were seen.
    pub headers: Option<RateHeaders>,
    /// What to settle after the answer; `None` when nothing is owed.
    pub charge: Option<Arc<Charge>>,
}

/// A refused request: the error and the headers its answer carries.
#[derive(Debug)]
pub struct Refusal {
    pub error: GatewayError,
    pub headers: Option<RateHeaders>,
}

/// Where the counters live.
#[derive(Debug)]
enum Backend {
    Local(LocalCounters),
    /// Redis, and this replica's leases of it.
    Redis(Box<RedisCounters>, Leases),
}

/// The limits service: one per process, shared by every request.
#[derive(Debug)]
pub struct Limiter {
    backend: Backend,
    /// Counter operations that failed (Redis down): requests let through.
    failures: AtomicU64,
    /// Admissions that asked Redis (the others were served by a lease).
    round_trips: AtomicU64,
    /// When a failure was last logged (one warning per [`WARN_EVERY`]).
    warned: Mutex<Option<Instant>>,
}

/// How often a counter failure is logged at most.
const WARN_EVERY: Duration = Duration::from_secs(10);

impl Limiter {
    /// Counters in this process.
    pub fn local() -> Self {
        Self::with(Backend::Local(LocalCounters::default()))
    }

    /// Counters in the Redis at `url` (checked, not connected yet).
    pub fn redis(url: &str) -> Result<Self, String> {
        RedisCounters::new(url)
            .map(|r| Self::with(Backend::Redis(Box::new(r), Leases::default())))
            .map_err(|e| e.0)
    }

    fn with(backend: Backend) -> Self {
        Limiter {
            backend,
            failures: AtomicU64::new(0),
            round_trips: AtomicU64::new(0),
            warned: Mutex::new(None),
        }
    }

    /// Whether counts are shared through Redis.
    pub fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Redis(..))
    }

    /// Counter operations that failed since start (requests let through).
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Admissions that asked Redis since start.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    fn failed(&self, e: &CounterError) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        let mut warned = self
            .warned
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if warned.is_none_or(|t| t.elapsed() >= WARN_EVERY) {
            *warned = Some(Instant::now());
            tracing::warn!(
                failures = self.failures(),
                "rate limits and budgets not enforced for now (requests go through): {e}"
            );
        }
    }

    /// Admit a request of `owner` under `limits` (see the module doc):
    /// `estimate` input tokens; `chat` says whether budgets and tokens
    /// count (a chat call) or only the request (another `/v1` call).
    pub async fn admit(
        &self,
        store: &Store,
        owner: KeyOwner,
        limits: &OwnerLimits,
        estimate: u32,
        chat: bool,
    ) -> Result<Admission, Refusal> {
        let now = clock::now();
        let minute = now.div_euclid(60);
        let reset_secs = (minute + 1) * 60 - now;
        let estimate = if chat { i64::from(estimate) } else { 0 };
        let mut scopes: Vec<(Scope, &Limits)> = Vec::with_capacity(2);
        for (scope, l) in [(Scope::Key, &limits.key), (Scope::User, &limits.user)] {
            let counted = l.is_rate_limited() || (chat && l.budget.is_some());
            if counted {
                scopes.push((scope, l));
            }
        }
        if scopes.is_empty() {
            return Ok(Admission::default());
        }
        let checks: Vec<ScopeCheck> = scopes
            .iter()
            .map(|(scope, l)| {
                let id = match scope {
                    Scope::Key => *owner.key_id.as_uuid(),
                    Scope::User => *owner.user_id.as_uuid(),
                };
                let budget = l.budget.filter(|_| chat);
                ScopeCheck {
                    owner: Owner {
                        tag: scope.tag(),
                        id,
                    },
                    minute,
                    spend_period: budget.map(|b| {
                        let (start, _) = b.window(now);
                        (b.period.map_or("all", policy::BudgetPeriod::as_str), start)
                    }),
                    rpm: l.rpm.map_or(0, i64::from),
                    tpm: l.tpm.map_or(0, i64::from),
                    budget_micros: budget.map_or(0, |b| b.micros()),
                }
            })
            .collect();
        let (outcome, leased) = match &self.backend {
            Backend::Local(c) => (Ok(c.admit(&checks, estimate, now)), false),
            Backend::Redis(r, leases) => match leases.take(&checks, estimate) {
                Some(counts) => (Ok((Verdict::Admitted, counts)), true),
                None => {
                    self.round_trips.fetch_add(1, Ordering::Relaxed);
                    (r.admit(&checks, estimate).await, false)
                }
            },
        };
        let (mut verdict, mut counts) = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.failed(&e);
                return Ok(Admission::default());
            }
        };
        // Spent amounts not known yet (a new period, a restart, a flush,
        // an expiry) are read from the usage rows once and shared.
        if verdict == Verdict::Admitted {
            for (i, check) in checks.iter().enumerate() {
                let Some(spend_key) = check.spend_key() else {
                    continue;
                };
                if counts[i].spend.is_some() {
                    continue;
                }
                let seeded = self
                    .seed(store, owner, scopes[i].0, scopes[i].1, spend_key, now)
                    .await;
                counts[i].spend = seeded;
                if seeded.is_some_and(|s| s >= check.budget_micros) {
                    verdict = Verdict::Budget(i);
                    break;
                }
            }
        }
        if let (Backend::Redis(_, leases), Verdict::Admitted, false) =
            (&self.backend, verdict, leased)
        {
            leases.put(&checks, &mut counts, estimate);
        }
        let headers = rate_headers(&checks, &counts, reset_secs);
        if let Some(error) = refusal(verdict, &scopes, &counts, estimate, now, reset_secs) {
            return Err(Refusal { error, headers });
        }
        let charge = Charge {
            tokens_keys: checks
                .iter()
                .filter(|c| c.tpm > 0)
                .map(ScopeCheck::tokens_key)
                .collect(),
            estimate,
            spend_keys: checks.iter().filter_map(ScopeCheck::spend_key).collect(),
        };
        Ok(Admission {
            headers,
            charge: (chat && !charge.is_empty()).then(|| Arc::new(charge)),
        })
    }

    /// Read a scope's spending in its budget period from the store and put
    /// it in the counters (unless another request did first); `None` when
    /// either failed (the request goes through).
    async fn seed(
        &self,
        store: &Store,
        owner: KeyOwner,
        scope: Scope,
        limits: &Limits,
        spend_key: CounterKey,
        now: i64,
    ) -> Option<i64> {
        let budget = limits.budget?;
        let (start, end) = budget.window(now);
        let key = (scope == Scope::Key).then_some(owner.key_id);
        let spent = match store.usage().spent_since(owner.user_id, key, start).await {
            Ok(usd) => usd_to_micros(usd),
            Err(e) => {
                tracing::warn!("reading spending for a budget failed: {e}");
                return None;
            }
        };
        let ttl = end.map_or(counters::SPEND_TTL_SECS, |end| {
            (end - now).clamp(1, counters::SPEND_TTL_SECS)
        });
        match &self.backend {
            Backend::Local(c) => Some(c.seed(spend_key, spent, ttl, now)),
            Backend::Redis(r, _) => match r.seed(spend_key, spent, ttl).await {
                Ok(v) => Some(v),
                Err(e) => {
                    self.failed(&e);
                    Some(spent)
                }
            },
        }
    }

    /// Apply settled charges (token corrections, costs) to the counters.
    pub(crate) async fn settle(&self, adds: &[(CounterKey, i64)]) {
        if adds.is_empty() {
            return;
        }
        match &self.backend {
            Backend::Local(c) => c.add_existing(adds, clock::now()),
            Backend::Redis(r, _) => {
                if let Err(e) = r.add_existing(adds).await {
                    self.failed(&e);
                }
            }
        }
    }
}

/// The error of a refused admission (`None` when admitted): which limit of
/// which scope, and when it frees up.
fn refusal(
    verdict: Verdict,
    scopes: &[(Scope, &Limits)],
    counts: &[ScopeCount],
    estimate: i64,
    now: i64,
    reset_secs: i64,
) -> Option<GatewayError> {
    let retry_after = u64::try_from(reset_secs).unwrap_or(60);
    if verdict != Verdict::Admitted {
        telemetry::meters().rate_limited(matches!(verdict, Verdict::Budget(_)));
    }
    Some(match verdict {
        Verdict::Admitted => return None,
        Verdict::Budget(i) => {
            let (scope, l) = scopes[i];
            let budget = l.budget.unwrap_or(policy::Budget {
                usd: 0.0,
                period: None,
            });
            let when = match budget.window(now).1 {
                Some(end) => format!("it resets at {}", rfc3339(end)),
                None => "it has no period and does not reset".to_owned(),
            };
            let spent = micros_to_usd(counts[i].spend.unwrap_or(0));
            let period = budget.period.map_or("", |p| match p {
                policy::BudgetPeriod::Daily => " per day",
                policy::BudgetPeriod::Weekly => " per week",
                policy::BudgetPeriod::Monthly => " per month",
            });
            GatewayError::BudgetExceeded(format!(
                "the budget of {} is spent ({spent:.2} of {:.2} USD{period}); {when}",
                scope.named(),
                budget.usd
            ))
        }
        Verdict::Requests(i) => {
            let (scope, l) = scopes[i];
            GatewayError::RateLimited {
                message: format!(
                    "rate limit of {} reached: {} requests per minute; try again in {reset_secs} s",
                    scope.named(),
                    l.rpm.unwrap_or(0)
                ),
                retry_after,
            }
        }
        Verdict::Tokens(i) => {
            let (scope, l) = scopes[i];
            let tpm = l.tpm.unwrap_or(0);
            let message = if estimate > i64::from(tpm) {
                format!(
                    "this request (about {estimate} input tokens) is larger than the token rate limit of {}: {tpm} tokens per minute",
                    scope.named()
                )
            } else {
                format!(
                    "token rate limit of {} reached: {tpm} tokens per minute; try again in {reset_secs} s",
                    scope.named()
                )
            };
            GatewayError::RateLimited {
                message,
                retry_after,
            }
        }
    })
}

/// The headers of the tightest rate-limited scope: the fewest requests
/// left, and the fewest tokens left.
fn rate_headers(
    checks: &[ScopeCheck],
    counts: &[ScopeCount],
    reset_secs: i64,
) -> Option<RateHeaders> {
    let tightest = |limit: fn(&ScopeCheck) -> i64, used: fn(&ScopeCount) -> i64| {
        checks
            .iter()
            .zip(counts)
            .filter(|(c, _)| limit(c) > 0)
            .map(|(c, n)| (limit(c), limit(c) - used(n)))
            .min_by_key(|(_, remaining)| *remaining)
    };
    let headers = RateHeaders {
        requests: tightest(|c| c.rpm, |n| n.requests),
        tokens: tightest(|c| c.tpm, |n| n.tokens),
        reset_secs,
    };
    (headers.requests.is_some() || headers.tokens.is_some()).then_some(headers)
}

#[cfg(test)]
mod tests;
