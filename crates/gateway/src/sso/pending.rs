//! Sign-in attempts between the redirect to the identity provider and its
//! callback (spec 2.5a): kept in the store ([`crate::store::sso_pending`]),
//! so the callback may reach any replica, for 10 minutes, at most 10,000
//! (when full, the oldest go), keyed by `state`. An attempt is taken out
//! when its callback arrives, on whichever replica, so a state is used once;
//! an expired attempt is refused.

use std::time::Duration;

use uuid::Uuid;

use super::SsoError;
use crate::store::ids::UserId;
use crate::store::sso_pending::{NewSsoLogin, SsoLogin, SsoPendingLimits};
use crate::store::Store;

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

impl Purpose {
    /// The account to link to, as the store keeps the purpose.
    pub(crate) fn link_user(&self) -> Option<UserId> {
        match self {
            Purpose::SignIn => None,
            Purpose::Link { user_id } => Some(UserId(*user_id)),
        }
    }

    /// The purpose of a stored attempt.
    pub(crate) fn of(link_user: Option<UserId>) -> Purpose {
        match link_user {
            None => Purpose::SignIn,
            Some(user) => Purpose::Link { user_id: user.0 },
        }
    }
}

/// The pending attempts, in the store.
#[derive(Debug, Clone)]
pub(crate) struct PendingStore {
    store: Store,
    limits: SsoPendingLimits,
}

impl PendingStore {
    /// At most `capacity` attempts, each for `ttl` (whole seconds, rounded
    /// up: the store keeps time in seconds).
    pub(crate) fn new(store: Store, ttl: Duration, capacity: u64) -> Self {
        PendingStore {
            store,
            limits: SsoPendingLimits {
                ttl_secs: whole_seconds(ttl),
                capacity: i64::try_from(capacity).unwrap_or(i64::MAX),
            },
        }
    }

    /// Keep `login` (its `state` hashed, its secrets encrypted).
    pub(crate) async fn insert(&self, login: &NewSsoLogin<'_>) -> Result<(), SsoError> {
        let dropped = self
            .store
            .sso_pending()
            .create(login, self.limits)
            .await
            .map_err(internal)?;
        if dropped > 0 {
            tracing::warn!(
                dropped,
                capacity = self.limits.capacity,
                "too many SSO sign-ins under way: the oldest were dropped"
            );
        }
        Ok(())
    }

    /// Take the attempt of `state` out; `None` when unknown, used or expired.
    pub(crate) async fn take(&self, state: &str) -> Result<Option<SsoLogin>, SsoError> {
        self.store.sso_pending().take(state).await.map_err(internal)
    }
}

/// `ttl` in whole seconds, rounded up (so a short TTL is not none at all).
fn whole_seconds(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis().div_ceil(1000)).unwrap_or(i64::MAX)
}

fn internal(e: impl std::fmt::Display) -> SsoError {
    SsoError::Internal(format!("pending sign-ins: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;
    use crate::store::testing::memory_store;

    fn entry<'a>(
        state: &'a str,
        purpose: &Purpose,
        secrets: &'a (Secret, Secret),
    ) -> NewSsoLogin<'a> {
        NewSsoLogin {
            state,
            code_verifier: &secrets.0,
            nonce: &secrets.1,
            binding_digest: "b",
            redirect_uri: "http://x/cb",
            issuer: "http://idp",
            client_id: "c",
            link_user: purpose.link_user(),
        }
    }

    fn secrets() -> (Secret, Secret) {
        (Secret::new("v"), Secret::new("n"))
    }

    #[tokio::test]
    async fn a_state_is_taken_once_with_its_purpose() {
        let store = PendingStore::new(memory_store().await, Duration::from_secs(600), 10_000);
        let user_id = crate::ids::fast_uuid();
        store
            .insert(&entry("s1", &Purpose::Link { user_id }, &secrets()))
            .await
            .unwrap();
        let taken = store.take("s1").await.unwrap().unwrap();
        assert_eq!(Purpose::of(taken.link_user), Purpose::Link { user_id });
        assert_eq!(taken.code_verifier.expose(), "v");
        assert_eq!(taken.nonce.expose(), "n");
        assert!(store.take("s1").await.unwrap().is_none());
        assert!(store.take("never").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_zero_ttl_expires_at_once() {
        let store = PendingStore::new(memory_store().await, Duration::ZERO, 10_000);
        store
            .insert(&entry("s1", &Purpose::SignIn, &secrets()))
            .await
            .unwrap();
        assert!(store.take("s1").await.unwrap().is_none());
    }

    #[test]
    fn the_ttl_rounds_up_to_whole_seconds() {
        assert_eq!(whole_seconds(Duration::ZERO), 0);
        assert_eq!(whole_seconds(Duration::from_millis(400)), 1);
        assert_eq!(whole_seconds(Duration::from_secs(600)), 600);
        assert_eq!(whole_seconds(Duration::from_millis(600_001)), 601);
    }

    #[tokio::test]
    async fn capacity_is_bounded() {
        let raw = memory_store().await;
        let store = PendingStore::new(raw.clone(), Duration::from_secs(600), 100);
        let secrets = secrets();
        for i in 0..300 {
            let state = format!("s{i}");
            store
                .insert(&entry(&state, &Purpose::SignIn, &secrets))
                .await
                .unwrap();
        }
        assert_eq!(raw.sso_pending().count().await.unwrap(), 100);
    }
}
