//! Sign-in attempts between the redirect to the identity provider and its
//! callback (spec 2.5a): kept in memory for 10 minutes, at most 10,000, keyed
//! by `state`. An entry is taken out when its callback arrives, so a state is
//! used once; an expired entry is gone.
//!
//! The store is per process: with several replicas, the callback must reach
//! the replica that started the sign-in (sticky sessions), or the sign-in
//! ends with `sso_state_invalid` and the person starts again.

use std::time::{Duration, Instant};

use moka::future::Cache;
use uuid::Uuid;

/// What the callback does once the identity is verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Sign in (creating the account on first sign-in).
    SignIn,
    /// Link the identity to this signed-in account. The user id is kept here
    /// because the session cookie (SameSite=Strict) is not sent on the
    /// provider's cross-site redirect back.
    Link { user_id: Uuid },
}

/// One attempt.
#[derive(Debug, Clone)]
pub(crate) struct PendingLogin {
    pub code_verifier: String,
    pub nonce: String,
    /// SHA-256 (hex) of the browser-binding cookie value.
    pub binding_digest: String,
    /// The `redirect_uri` sent to `/authorize`; the token request repeats it.
    pub redirect_uri: String,
    /// The issuer and client the attempt was started with: a configuration
    /// change in between makes the callback fail rather than mix providers.
    pub issuer: String,
    pub client_id: String,
    pub purpose: Purpose,
    pub created: Instant,
}

/// The pending attempts.
#[derive(Clone)]
pub(crate) struct PendingStore {
    cache: Cache<String, PendingLogin>,
    ttl: Duration,
}

impl std::fmt::Debug for PendingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingStore")
            .field("entries", &self.cache.entry_count())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl PendingStore {
    /// At most `capacity` attempts, each for `ttl`.
    pub(crate) fn new(ttl: Duration, capacity: u64) -> Self {
        PendingStore {
            cache: Cache::builder()
                .max_capacity(capacity)
                .time_to_live(ttl)
                .build(),
            ttl,
        }
    }

    pub(crate) async fn insert(&self, state: String, pending: PendingLogin) {
        self.cache.insert(state, pending).await;
    }

    /// Take the attempt of `state` out; `None` when unknown, used or expired.
    pub(crate) async fn take(&self, state: &str) -> Option<PendingLogin> {
        let entry = self.cache.remove(state).await?;
        // moka expires lazily; the age check makes the TTL exact.
        (entry.created.elapsed() < self.ttl).then_some(entry)
    }

    /// Entries currently held (approximate).
    #[cfg(test)]
    pub(crate) async fn entry_count(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.entry_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> PendingLogin {
        PendingLogin {
            code_verifier: "v".into(),
            nonce: "n".into(),
            binding_digest: "b".into(),
            redirect_uri: "http://x/cb".into(),
            issuer: "http://idp".into(),
            client_id: "c".into(),
            purpose: Purpose::SignIn,
            created: Instant::now(),
        }
    }

    #[tokio::test]
    async fn a_state_is_taken_once() {
        let store = PendingStore::new(Duration::from_secs(600), 10_000);
        store.insert("s1".into(), entry()).await;
        assert!(store.take("s1").await.is_some());
        assert!(store.take("s1").await.is_none());
        assert!(store.take("never").await.is_none());
    }

    #[tokio::test]
    async fn entries_expire_after_the_ttl() {
        let store = PendingStore::new(Duration::from_millis(30), 10_000);
        store.insert("s1".into(), entry()).await;
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(store.take("s1").await.is_none());
    }

    #[tokio::test]
    async fn capacity_is_bounded() {
        let store = PendingStore::new(Duration::from_secs(600), 100);
        for i in 0..1_000 {
            store.insert(format!("s{i}"), entry()).await;
        }
        let len = store.entry_count().await;
        assert!(len <= 100, "{len} entries");
    }
}
