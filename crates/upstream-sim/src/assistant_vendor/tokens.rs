//! The assistant tokens the token exchange issued, with their expiry and the
//! code-host user each was exchanged for, and how many exchanges happened. A token looks like the real opaque one:
//! `tid=…;exp=<unix>;sku=…;proxy-ep=…;st=dotcom;chat=1;8kp=1:<hex>`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::http::unix_now;
use crate::vendor_common::ids;

/// One exchanged token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantToken {
    pub token: String,
    /// Unix seconds.
    pub expires_at: u64,
    /// Seconds after which a client should exchange again.
    pub refresh_in: u64,
}

/// What the chat API knows of a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AssistantTokenState {
    Valid,
    Expired,
    Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct AssistantTokens {
    tokens: HashMap<String, Instant>,
    /// The code-host login each token was exchanged for.
    logins: HashMap<String, String>,
    exchanges: u64,
}

impl AssistantTokens {
    /// Issue a token valid for `ttl` (the expiry check uses the exact
    /// duration; `expires_at` is rounded up to whole seconds).
    pub fn issue(&mut self, ttl: Duration, now: Instant) -> AssistantToken {
        self.exchanges += 1;
        let secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
        let expires_at = unix_now().saturating_add(secs);
        let token = format!(
            "tid={};exp={expires_at};sku=copilot_for_individual_subscriber;\
             proxy-ep=proxy.individual.githubcopilot.com;st=dotcom;chat=1;8kp=1:{}",
            ids::hex(32),
            ids::hex(64)
        );
        let expires = now
            .checked_add(ttl)
            .unwrap_or(now + Duration::from_secs(1 << 32));
        self.tokens.insert(token.clone(), expires);
        // Real tokens live 30 min and say "refresh in 25"; short test tokens
        // ask for a refresh halfway.
        let refresh_in = if secs > 600 { secs - 300 } else { secs / 2 };
        AssistantToken {
            token,
            expires_at,
            refresh_in,
        }
    }

    /// Issue a token for the code-host user `login` (see [`Self::issue`]).
    pub fn issue_for(&mut self, login: &str, ttl: Duration, now: Instant) -> AssistantToken {
        let t = self.issue(ttl, now);
        self.logins.insert(t.token.clone(), login.to_owned());
        t
    }

    /// The code-host login a token was exchanged for.
    pub fn login_of(&self, token: &str) -> Option<&str> {
        self.logins.get(token).map(String::as_str)
    }

    pub fn state(&self, token: &str, now: Instant) -> AssistantTokenState {
        match self.tokens.get(token) {
            Some(expires) if *expires > now => AssistantTokenState::Valid,
            Some(_) => AssistantTokenState::Expired,
            None => AssistantTokenState::Unknown,
        }
    }

    /// Make every token issued so far expire at `now`.
    pub fn expire_all(&mut self, now: Instant) {
        for expires in self.tokens.values_mut() {
            *expires = now;
        }
    }

    /// Successful exchanges so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expire_and_count() {
        let mut store = AssistantTokens::default();
        let now = Instant::now();
        let t = store.issue(Duration::from_secs(1800), now);
        assert_eq!(t.refresh_in, 1500);
        assert!(t.token.contains(&format!("exp={}", t.expires_at)));
        assert!(t.expires_at >= unix_now() + 1799);
        assert_eq!(store.state(&t.token, now), AssistantTokenState::Valid);
        assert_eq!(
            store.state(&t.token, now + Duration::from_secs(1801)),
            AssistantTokenState::Expired
        );
        let short = store.issue(Duration::from_millis(1500), now);
        assert_eq!(short.refresh_in, 1);
        assert_eq!(
            store.state(&short.token, now + Duration::from_millis(1600)),
            AssistantTokenState::Expired
        );
        store.expire_all(now);
        assert_eq!(store.state(&t.token, now), AssistantTokenState::Expired);
        assert_eq!(store.state("x", now), AssistantTokenState::Unknown);
        assert_eq!(store.exchanges(), 2);
    }
}
