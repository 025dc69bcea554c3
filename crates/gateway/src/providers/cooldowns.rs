//! Accounts resting after a 429 (interfaces-full.md 2, selection step 3):
//! an account the provider answered 429 is skipped for the `retry-after` it
//! was given (at most an hour; a minute when none). Per replica, in memory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store::ids::ProviderAccountId;

/// The longest rest.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(3600);
/// The rest when the provider gave no `retry-after`.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(60);

/// The accounts cooling down, until when.
#[derive(Debug, Default)]
pub struct Cooldowns {
    until: Mutex<HashMap<ProviderAccountId, Instant>>,
}

impl Cooldowns {
    /// When `account` may be used again, if it is resting now.
    pub fn resting_until(&self, account: ProviderAccountId) -> Option<Instant> {
        let until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.get(&account).copied().filter(|t| *t > Instant::now())
    }

    /// Rest `account` for `retry_after` seconds (capped), or the default.
    pub fn start(&self, account: ProviderAccountId, retry_after: Option<u64>) {
        let rest = retry_after
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_COOLDOWN)
            .min(MAX_COOLDOWN);
        let now = Instant::now();
        let mut until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.retain(|_, t| *t > now);
        until.insert(account, now + rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_rests_for_its_retry_after_capped() {
        let c = Cooldowns::default();
        let (a, b, d) = (
            ProviderAccountId::new(),
            ProviderAccountId::new(),
            ProviderAccountId::new(),
        );
        assert!(c.resting_until(a).is_none());
        c.start(a, Some(30));
        c.start(b, Some(86_400));
        c.start(d, None);
        let left = |id| c.resting_until(id).unwrap() - Instant::now();
        assert!(left(a) <= Duration::from_secs(30) && left(a) > Duration::from_secs(28));
        assert!(left(b) <= MAX_COOLDOWN && left(b) > MAX_COOLDOWN - Duration::from_secs(2));
        assert!(left(d) <= DEFAULT_COOLDOWN && left(d) > DEFAULT_COOLDOWN - Duration::from_secs(2));
        c.start(a, Some(0));
        assert!(c.resting_until(a).is_none());
    }
}
