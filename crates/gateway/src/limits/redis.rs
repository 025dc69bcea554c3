//! The counters in Redis (`REDIS_URL`), shared by every replica: the
//! decision of [`super::counters::decide`] as one Lua script, so an
//! admission is one round trip and atomic. Scripts are sent by SHA
//! (`EVALSHA`, loaded again after a Redis restart by the client).
//!
//! Every call has a deadline ([`DEADLINE`]); the caller treats a failure as
//! "no counters" and lets the request through (fail open).

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;
use tokio::sync::OnceCell;

use super::counters::{CounterError, CounterKey, ScopeCheck, ScopeCount, Verdict, WINDOW_TTL_SECS};
use super::lease::{LEASE_DIVISOR, LEASE_MOST};

/// The longest a request waits for Redis before it goes on without it.
pub(crate) const DEADLINE: Duration = Duration::from_millis(250);
/// After a failed connection, how long before the next attempt (requests
/// in between go on at once, without counters).
const RECONNECT_AFTER: Duration = Duration::from_secs(5);

/// The admission: KEYS are (requests, tokens, spend) per scope; ARGV are
/// the estimate, the window's time to live, the lease divisor, the most
/// requests one lease grants, then (rpm, tpm, budget) per scope, 0 for an
/// unlimited rate and -1 for no budget. Returns the verdict's code, then
/// per scope (requests, tokens, spend or -1, requests granted, tokens
/// granted). Admitted, a scope is granted a lease: a share of what is left
/// (`floor(left / divisor)` requests, and as many times this request's
/// estimate in tokens within `floor(tokens left / divisor)`; at least this
/// request, at most the cap), so a replica admits the next requests of the
/// window without asking again (`super::lease`). Near a limit the share is
/// one request: exact.
const ADMIT: &str = r"
local estimate = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local divisor = tonumber(ARGV[3])
local most = tonumber(ARGV[4])
local scopes = #KEYS / 3
local out = {0}
local verdict = 0
for i = 0, scopes - 1 do
  local rpm = tonumber(ARGV[5 + i * 3])
  local tpm = tonumber(ARGV[6 + i * 3])
  local budget = tonumber(ARGV[7 + i * 3])
  local requests = tonumber(redis.call('GET', KEYS[1 + i * 3]) or '0')
  local tokens = tonumber(redis.call('GET', KEYS[2 + i * 3]) or '0')
  local spend = -1
  if budget >= 0 then
    spend = tonumber(redis.call('GET', KEYS[3 + i * 3]) or '-1')
  end
  if verdict == 0 then
    if budget >= 0 and spend >= 0 and spend >= budget then
      verdict = 100 + i
    elseif rpm > 0 and requests >= rpm then
      verdict = 200 + i
    elseif tpm > 0 and tokens + estimate > tpm then
      verdict = 300 + i
    end
  end
  out[2 + i * 5] = requests
  out[3 + i * 5] = tokens
  out[4 + i * 5] = spend
  out[5 + i * 5] = 0
  out[6 + i * 5] = 0
end
if verdict == 0 then
  for i = 0, scopes - 1 do
    local rpm = tonumber(ARGV[5 + i * 3])
    local tpm = tonumber(ARGV[6 + i * 3])
    local grant_r = most
    if rpm > 0 then
      grant_r = math.min(grant_r, math.floor((rpm - out[2 + i * 5]) / divisor))
    end
    if tpm > 0 and estimate > 0 then
      grant_r = math.min(grant_r, math.floor((tpm - out[3 + i * 5]) / (divisor * estimate)))
    end
    grant_r = math.max(1, grant_r)
    local grant_t = estimate * grant_r
    out[2 + i * 5] = redis.call('INCRBY', KEYS[1 + i * 3], grant_r)
    redis.call('EXPIRE', KEYS[1 + i * 3], ttl)
    out[3 + i * 5] = redis.call('INCRBY', KEYS[2 + i * 3], grant_t)
    redis.call('EXPIRE', KEYS[2 + i * 3], ttl)
    out[5 + i * 5] = grant_r
    out[6 + i * 5] = grant_t
  end
end
out[1] = verdict
return out
";

/// Add ARGV[i] to KEYS[i] where KEYS[i] exists.
const ADD_EXISTING: &str = r"
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('INCRBY', KEYS[i], ARGV[i])
  end
end
return 0
";

/// Set KEYS[1] to ARGV[1] for ARGV[2] seconds unless it is set; the value
/// in force.
const SEED: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return tonumber(redis.call('GET', KEYS[1]))
";

/// The Redis backend; connects on first use and again after a failure.
pub(crate) struct RedisCounters {
    client: redis::Client,
    /// Made on first use; it reconnects by itself afterwards.
    manager: OnceCell<ConnectionManager>,
    /// When the last attempt to connect failed.
    failed_at: std::sync::Mutex<Option<tokio::time::Instant>>,
    admit: Script,
    add_existing: Script,
    seed: Script,
}

impl std::fmt::Debug for RedisCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCounters").finish_non_exhaustive()
    }
}

impl RedisCounters {
    /// A backend for `url` (checked here; no connection is made yet).
    pub(crate) fn new(url: &str) -> Result<Self, CounterError> {
        let client = redis::Client::open(url)
            .map_err(|e| CounterError(format!("REDIS_URL: {:?}", e.kind())))?;
        Ok(RedisCounters {
            client,
            manager: OnceCell::new(),
            failed_at: std::sync::Mutex::new(None),
            admit: Script::new(ADMIT),
            add_existing: Script::new(ADD_EXISTING),
            seed: Script::new(SEED),
        })
    }

    /// The connection manager; an error while a recent attempt failed.
    async fn manager(&self) -> Result<ConnectionManager, CounterError> {
        if let Some(m) = self.manager.get() {
            return Ok(m.clone());
        }
        let failed_at = || {
            self.failed_at
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if failed_at().is_some_and(|t| t.elapsed() < RECONNECT_AFTER) {
            return Err(CounterError("Redis unreachable (waiting to retry)".into()));
        }
        let made = self
            .manager
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(DEADLINE))
                    .set_response_timeout(Some(DEADLINE))
                    .set_number_of_retries(1)
                    .set_max_delay(DEADLINE);
                match tokio::time::timeout(
                    DEADLINE * 2,
                    ConnectionManager::new_with_config(self.client.clone(), config),
                )
                .await
                {
                    Ok(Ok(m)) => Ok(m),
                    Ok(Err(e)) => Err(CounterError(format!("Redis connection failed: {e}"))),
                    Err(_) => Err(CounterError("Redis connection timed out".into())),
                }
            })
            .await;
        match made {
            Ok(m) => Ok(m.clone()),
            Err(e) => {
                *failed_at() = Some(tokio::time::Instant::now());
                Err(e)
            }
        }
    }

    /// Run a prepared script invocation within the deadline.
    async fn run<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, CounterError> {
        let mut conn = self.manager().await?;
        match tokio::time::timeout(DEADLINE, invocation.invoke_async(&mut conn)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(CounterError(format!("Redis: {e}"))),
            Err(_) => Err(CounterError("Redis did not answer in time".into())),
        }
    }

    pub(crate) async fn admit(
        &self,
        checks: &[ScopeCheck],
        estimate: i64,
    ) -> Result<(Verdict, Vec<ScopeCount>), CounterError> {
        let mut inv = self.admit.prepare_invoke();
        inv.arg(estimate)
            .arg(WINDOW_TTL_SECS)
            .arg(LEASE_DIVISOR)
            .arg(LEASE_MOST);
        for c in checks {
            let tokens = c.tokens_key().redis_key();
            // A scope without a budget never reads its third key.
            let spend = c
                .spend_key()
                .map_or_else(|| tokens.clone(), |k| k.redis_key());
            inv.key(c.requests_key().redis_key()).key(tokens).key(spend);
            let budget = if c.spend_period.is_some() {
                c.budget_micros
            } else {
                -1
            };
            inv.arg(c.rpm).arg(c.tpm).arg(budget);
        }
        let reply: Vec<i64> = self.run(&inv).await?;
        if reply.len() != 1 + checks.len() * 5 {
            return Err(CounterError("Redis: unexpected admission reply".into()));
        }
        let counts = reply[1..]
            .chunks_exact(5)
            .map(|c| ScopeCount {
                requests: c[0],
                tokens: c[1],
                spend: (c[2] >= 0).then_some(c[2]),
                granted_requests: c[3],
                granted_tokens: c[4],
            })
            .collect();
        Ok((Verdict::from_code(reply[0]), counts))
    }

    pub(crate) async fn add_existing(
        &self,
        adds: &[(CounterKey, i64)],
    ) -> Result<(), CounterError> {
        if adds.is_empty() {
            return Ok(());
        }
        let mut inv = self.add_existing.prepare_invoke();
        for (key, delta) in adds {
            inv.key(key.redis_key()).arg(*delta);
        }
        self.run::<i64>(&inv).await.map(drop)
    }

    pub(crate) async fn seed(
        &self,
        key: CounterKey,
        micros: i64,
        ttl: i64,
    ) -> Result<i64, CounterError> {
        let mut inv = self.seed.prepare_invoke();
        inv.key(key.redis_key()).arg(micros).arg(ttl.max(1));
        self.run(&inv).await
    }
}
