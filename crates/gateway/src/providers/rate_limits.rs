//! What the providers' answers said, per account (interfaces-full.md 2,
//! `GET /_ui/api/providers/rate-limits`): the request and token windows of
//! their rate-limit headers (limit, remaining, reset), the 429s of the last
//! hour, and when the account last answered (its `last_used`, written to
//! the store in batches by [`RateLimits::take_used`]'s caller, not per
//! request). Per replica, in memory, like the cooldowns; only full
//! deployment's accounts are observed (proxy mode's providers carry no
//! account and cost nothing here).
//!
//! Two header families are read: the messages vendor's
//! `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` (resets
//! as RFC 3339 times) and the OpenAI-style
//! `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as
//! durations such as `6m0s` or `20ms`).

use std::sync::Mutex;

use axum::http::HeaderMap;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::cache::FastMap;
use crate::store::clock::now;
use crate::store::ids::ProviderAccountId;

/// How far back `recent_429` counts, in seconds.
const RECENT_SECS: i64 = 3600;
/// 429 times kept per account (older ones fall out first).
const RECENT_MAX: usize = 1000;

/// One window (requests or tokens) as the provider last reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Unix seconds.
    pub reset_at: Option<i64>,
}

impl Window {
    fn is_empty(&self) -> bool {
        self.limit.is_none() && self.remaining.is_none() && self.reset_at.is_none()
    }
}

/// What is known of one account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    pub requests: Window,
    pub tokens: Window,
    /// Unix seconds of the 429s of the last hour, oldest first.
    recent_429: Vec<i64>,
}

impl Seen {
    /// 429s in the last hour.
    pub fn recent_429(&self, at: i64) -> usize {
        self.recent_429
            .iter()
            .filter(|t| **t > at - RECENT_SECS)
            .count()
    }
}

/// A map by account ([`FastMap`]: every answer of a user's own account is
/// noted here, and std's SipHash cost about 170 instructions a note).
type AccountMap<V> = FastMap<ProviderAccountId, V>;

/// The accounts' rate-limit observations.
#[derive(Debug, Default)]
pub struct RateLimits {
    seen: Mutex<AccountMap<Seen>>,
    /// Last answers not written to the store yet (unix seconds).
    used: Mutex<AccountMap<i64>>,
}

impl RateLimits {
    fn with<R>(&self, f: impl FnOnce(&mut AccountMap<Seen>) -> R) -> R {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut seen)
    }

    /// Note an answer of `account` and its rate-limit headers.
    pub fn observe(&self, account: ProviderAccountId, headers: &HeaderMap) {
        let at = now();
        self.used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account, at);
        // Most answers of a server without these headers end here: one pass
        // over the names is far cheaper than twelve map look-ups.
        if !headers
            .keys()
            .any(|name| is_rate_limit_header(name.as_str()))
        {
            return;
        }
        let requests = window(headers, &REQUESTS, at);
        let tokens = window(headers, &TOKENS, at);
        if requests.is_empty() && tokens.is_empty() {
            return;
        }
        self.with(|seen| {
            let entry = seen.entry(account).or_default();
            if !requests.is_empty() {
                entry.requests = requests;
            }
            if !tokens.is_empty() {
                entry.tokens = tokens;
            }
        });
    }

    /// Note a 429 of `account`.
    pub fn observe_429(&self, account: ProviderAccountId) {
        let at = now();
        self.with(|seen| {
            let recent = &mut seen.entry(account).or_default().recent_429;
            recent.retain(|t| *t > at - RECENT_SECS);
            if recent.len() >= RECENT_MAX {
                recent.remove(0);
            }
            recent.push(at);
        });
    }

    /// The last answers noted since the previous call, to write.
    pub fn take_used(&self) -> Vec<(ProviderAccountId, i64)> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.drain().collect()
    }

    /// When `account` last answered here and is not written yet.
    pub fn unsaved_use(&self, account: ProviderAccountId) -> Option<i64> {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.get(&account).copied()
    }

    /// What is known of `account`.
    pub fn seen(&self, account: ProviderAccountId) -> Option<Seen> {
        self.with(|seen| seen.get(&account).cloned())
    }
}

/// The header names of one window, in both families.
struct Names {
    anthropic: [&'static str; 3],
    openai: [&'static str; 3],
}

/// `[limit, remaining, reset]` of the request window.
const REQUESTS: Names = Names {
    anthropic: [
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ],
    openai: [
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    ],
};

/// `[limit, remaining, reset]` of the token window.
const TOKENS: Names = Names {
    anthropic: [
        "anthropic-ratelimit-tokens-limit",
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
    ],
    openai: [
        "x-ratelimit-limit-tokens",
        "x-ratelimit-remaining-tokens",
        "x-ratelimit-reset-tokens",
    ],
};

/// Whether `name` belongs to one of the two families.
fn is_rate_limit_header(name: &str) -> bool {
    name.starts_with("anthropic-ratelimit-") || name.starts_with("x-ratelimit-")
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

fn number(headers: &HeaderMap, name: &str) -> Option<u64> {
    header(headers, name).and_then(|v| v.parse().ok())
}

/// One window from either family (the messages vendor's first).
fn window(headers: &HeaderMap, names: &Names, at: i64) -> Window {
    let [limit, remaining, reset] = names.anthropic;
    let found = Window {
        limit: number(headers, limit),
        remaining: number(headers, remaining),
        reset_at: header(headers, reset).and_then(rfc3339_secs),
    };
    if !found.is_empty() {
        return found;
    }
    let [limit, remaining, reset] = names.openai;
    Window {
        limit: number(headers, limit),
        remaining: number(headers, remaining),
        reset_at: header(headers, reset)
            .and_then(duration_secs)
            .map(|secs| at.saturating_add(secs)),
    }
}

fn rfc3339_secs(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

/// A duration such as `6m0s`, `1.5s`, `20ms` or `1h2m`, in whole seconds
/// rounded up (a reset is never reported early).
fn duration_secs(text: &str) -> Option<i64> {
    let mut millis = 0f64;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 1.0,
            "s" | "" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        millis += value * scale;
        rest = &rest[unit_len..];
    }
    let secs = (millis / 1000.0).ceil();
    (secs.is_finite() && (0.0..1e12).contains(&secs)).then_some(secs as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn durations_round_up_to_seconds() {
        assert_eq!(duration_secs("6m0s"), Some(360));
        assert_eq!(duration_secs("1.5s"), Some(2));
        assert_eq!(duration_secs("20ms"), Some(1));
        assert_eq!(duration_secs("1h2m"), Some(3720));
        assert_eq!(duration_secs("0s"), Some(0));
        assert_eq!(duration_secs(""), None);
        assert_eq!(duration_secs("soon"), None);
        assert_eq!(duration_secs("5d"), None);
    }

    #[test]
    fn the_families_are_told_by_their_names() {
        assert!(is_rate_limit_header("anthropic-ratelimit-tokens-reset"));
        assert!(is_rate_limit_header("x-ratelimit-remaining-requests"));
        assert!(!is_rate_limit_header("retry-after"));
        assert!(!is_rate_limit_header("x-request-id"));
    }

    #[test]
    fn both_families_are_read() {
        let anthropic = headers(&[
            ("anthropic-ratelimit-requests-limit", "4000"),
            ("anthropic-ratelimit-requests-remaining", "3999"),
            ("anthropic-ratelimit-requests-reset", "2026-11-27T10:00:00Z"),
            ("anthropic-ratelimit-tokens-remaining", "1000"),
        ]);
        let w = window(&anthropic, &REQUESTS, 0);
        assert_eq!(w.limit, Some(4000));
        assert_eq!(w.remaining, Some(3999));
        assert_eq!(w.reset_at, rfc3339_secs("2026-11-27T10:00:00Z"));
        assert_eq!(window(&anthropic, &TOKENS, 0).remaining, Some(1000));

        let openai = headers(&[
            ("x-ratelimit-limit-requests", "10000"),
            ("x-ratelimit-remaining-requests", "9999"),
            ("x-ratelimit-reset-requests", "6ms"),
        ]);
        let w = window(&openai, &REQUESTS, 100);
        assert_eq!(
            (w.limit, w.remaining, w.reset_at),
            (Some(10000), Some(9999), Some(101))
        );
        assert!(window(&openai, &TOKENS, 100).is_empty());
    }

    #[test]
    fn an_account_keeps_its_last_windows_and_counts_its_429s() {
        let limits = RateLimits::default();
        let id = ProviderAccountId::new();
        assert!(limits.seen(id).is_none());
        limits.observe(id, &headers(&[("x-ratelimit-remaining-requests", "5")]));
        limits.observe(id, &headers(&[("x-ratelimit-remaining-tokens", "7")]));
        limits.observe(id, &HeaderMap::new());
        limits.observe_429(id);
        limits.observe_429(id);
        let seen = limits.seen(id).unwrap();
        assert_eq!(seen.requests.remaining, Some(5));
        assert_eq!(seen.tokens.remaining, Some(7));
        assert_eq!(seen.recent_429(now()), 2);
        assert_eq!(seen.recent_429(now() + RECENT_SECS + 1), 0);
        // Three answers, one account: one write, then nothing until the next.
        assert!(limits.unsaved_use(id).is_some());
        assert_eq!(limits.take_used().len(), 1);
        assert!(limits.take_used().is_empty());
        assert!(limits.unsaved_use(id).is_none());
    }
}
