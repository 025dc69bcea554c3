//! `TokenManager`: the primary provider's access token for the pipeline
//! (spec 3.5, 5.8, 5.9 item 5).
//!
//! - A refreshed token is used for `token_cache_ttl` (4 min); the next request
//!   after that refreshes it.
//! - A failed refresh falls back to the current token while it has not expired
//!   (a warning is logged, and the next attempt waits 30 s); an expired token
//!   is an error.
//! - Refreshes are single-flight: concurrent callers wait for one refresh and
//!   share its result (`generation` tells a waiter that someone else refreshed).
//! - A rotated refresh token is written to `tokens.json` at once.
//! - A background task refreshes `token_refresh_ahead` (300 s) before expiry,
//!   checking every `token_check_interval` (60 s), so an idle gateway keeps a
//!   valid token.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::oidc::{OidcClient, OidcError, TokenGrant};
use super::token_file::{PrimaryCredentials, TokenFile};
use crate::config::Secret;
use crate::error::GatewayError;

/// A token this close to expiry counts as expired.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// After a failed refresh with a still-valid token, wait this long before trying again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);
/// Lifetime assumed when the token endpoint gives none.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);

/// Timings of the manager (from `config::Tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenTiming {
    pub cache_ttl: Duration,
    pub refresh_ahead: Duration,
    pub check_interval: Duration,
}

#[derive(Debug, Clone)]
struct CachedToken {
    token: Secret,
    expires_at: Instant,
    /// After this instant the next request refreshes.
    refresh_due: Instant,
}

impl CachedToken {
    fn expired(&self, now: Instant) -> bool {
        now + EXPIRY_MARGIN >= self.expires_at
    }
}

#[derive(Debug, Default)]
struct State {
    creds: Option<PrimaryCredentials>,
    access: Option<CachedToken>,
    /// Incremented by every successful refresh.
    generation: u64,
}

/// Where a rotated refresh token is kept besides `tokens.json` (full
/// deployment: the user's row in the store).
pub trait RotationSink: Send + Sync + std::fmt::Debug {
    /// Keep `creds`, whose refresh token just rotated. Failures are the
    /// sink's to log: the manager goes on with the new token in memory.
    fn rotated(&self, creds: PrimaryCredentials) -> futures::future::BoxFuture<'static, ()>;
}

#[derive(Debug)]
struct Inner {
    oidc: Option<OidcClient>,
    file: Option<TokenFile>,
    sink: Option<Arc<dyn RotationSink>>,
    api_region: String,
    timing: TokenTiming,
    state: Mutex<State>,
    refresh_lock: tokio::sync::Mutex<()>,
}

/// The primary credential source; cheap to clone.
#[derive(Debug, Clone)]
pub struct TokenManager {
    inner: Arc<Inner>,
}

impl TokenManager {
    /// A manager holding `creds`, refreshing through `oidc`, persisting rotated
    /// refresh tokens to `file`. `initial` is a grant just obtained (device flow
    /// or start-up test refresh), used until the cache TTL passes.
    pub fn new(
        oidc: OidcClient,
        file: TokenFile,
        api_region: impl Into<String>,
        timing: TokenTiming,
        creds: PrimaryCredentials,
        initial: Option<&TokenGrant>,
    ) -> Self {
        let access = initial.map(|g| cached(g, Instant::now(), timing.cache_ttl));
        TokenManager {
            inner: Arc::new(Inner {
                oidc: Some(oidc),
                file: Some(file),
                sink: None,
                api_region: api_region.into(),
                timing,
                state: Mutex::new(State {
                    creds: Some(creds),
                    access,
                    generation: 0,
                }),
                refresh_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// A manager of one user's credentials (full deployment): no file; a
    /// rotated refresh token goes to `sink`. No background refresher runs
    /// for it: tokens are refreshed when a request needs one.
    pub fn with_sink(
        oidc: OidcClient,
        api_region: impl Into<String>,
        timing: TokenTiming,
        creds: PrimaryCredentials,
        initial: Option<&TokenGrant>,
        sink: Arc<dyn RotationSink>,
    ) -> Self {
        let access = initial.map(|g| cached(g, Instant::now(), timing.cache_ttl));
        TokenManager {
            inner: Arc::new(Inner {
                oidc: Some(oidc),
                file: None,
                sink: Some(sink),
                api_region: api_region.into(),
                timing,
                state: Mutex::new(State {
                    creds: Some(creds),
                    access,
                    generation: 0,
                }),
                refresh_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// Whether both handles are the same manager.
    pub fn same_as(&self, other: &TokenManager) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The long-lived credentials held now (with the latest rotated refresh token).
    pub fn credentials(&self) -> Option<PrimaryCredentials> {
        self.state().creds.clone()
    }

    /// A manager with no credentials (full deployment before per-user
    /// credentials exist): every token request is a `config_error`.
    pub fn without_credentials(api_region: impl Into<String>) -> Self {
        TokenManager {
            inner: Arc::new(Inner {
                oidc: None,
                file: None,
                sink: None,
                api_region: api_region.into(),
                timing: TokenTiming {
                    cache_ttl: Duration::from_secs(240),
                    refresh_ahead: Duration::from_secs(300),
                    check_interval: Duration::from_secs(60),
                },
                state: Mutex::new(State::default()),
                refresh_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked mid-update of plain
        // data; the data itself is still usable.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether credentials are configured.
    pub fn has_credentials(&self) -> bool {
        self.state().creds.is_some()
    }

    /// The API region (`UPSTREAM_REGION`), kept apart from the SSO region.
    pub fn api_region(&self) -> &str {
        &self.inner.api_region
    }

    /// The profile ARN to send to the API, when known (from `tokens.json`).
    pub fn profile_arn(&self) -> Option<String> {
        self.state()
            .creds
            .as_ref()
            .and_then(|c| c.profile_arn.clone())
    }

    /// A valid access token: the cached one while it is fresh, else a refresh.
    pub async fn access_token(&self) -> Result<String, GatewayError> {
        let seen = {
            let st = self.state();
            let now = Instant::now();
            if let Some(a) = &st.access {
                if now < a.refresh_due && !a.expired(now) {
                    return Ok(a.token.expose().to_owned());
                }
            }
            st.generation
        };
        self.refresh_shared(seen, true).await
    }

    /// Refresh now, whatever the cache says (the upstream answered 403).
    /// Callers that arrive while a refresh runs share its result.
    pub async fn force_refresh(&self) -> Result<String, GatewayError> {
        let seen = self.state().generation;
        self.refresh_shared(seen, false).await
    }

    async fn refresh_shared(&self, seen: u64, fallback: bool) -> Result<String, GatewayError> {
        let _flight = self.inner.refresh_lock.lock().await;
        let creds = {
            let st = self.state();
            if st.generation != seen {
                if let Some(a) = st.access.as_ref().filter(|a| !a.expired(Instant::now())) {
                    return Ok(a.token.expose().to_owned());
                }
            }
            st.creds.clone()
        };
        let (Some(creds), Some(oidc)) = (creds, self.inner.oidc.as_ref()) else {
            return Err(GatewayError::Config(
                "the primary provider has no upstream credentials".into(),
            ));
        };
        match oidc
            .refresh(&creds.client_id, &creds.client_secret, &creds.refresh_token)
            .await
        {
            Ok(grant) => Ok(self.store(grant).await),
            Err(e) => {
                let now = Instant::now();
                let mut st = self.state();
                if fallback {
                    if let Some(a) = st.access.as_mut().filter(|a| !a.expired(now)) {
                        tracing::warn!("access token refresh failed, using the current token: {e}");
                        a.refresh_due = now + RETRY_AFTER_FAILURE;
                        return Ok(a.token.expose().to_owned());
                    }
                }
                tracing::error!("access token refresh failed: {e}");
                Err(refresh_error(&e))
            }
        }
    }

    /// Keep a new grant; persist a rotated refresh token.
    async fn store(&self, grant: TokenGrant) -> String {
        let token = grant.access_token.expose().to_owned();
        let rotated = {
            let mut st = self.state();
            st.access = Some(cached(&grant, Instant::now(), self.inner.timing.cache_ttl));
            st.generation += 1;
            match (grant.refresh_token, st.creds.as_mut()) {
                (Some(new), Some(creds)) if new != creds.refresh_token && !new.is_empty() => {
                    creds.refresh_token = new;
                    Some(creds.clone())
                }
                _ => None,
            }
        };
        if let (Some(creds), Some(file)) = (rotated.as_ref(), self.inner.file.as_ref()) {
            match file.save_primary(creds).await {
                Ok(()) => {
                    tracing::info!("rotated refresh token saved to {}", file.path().display())
                }
                Err(e) => tracing::error!("rotated refresh token could not be saved: {e}"),
            }
        }
        if let (Some(creds), Some(sink)) = (rotated, self.inner.sink.as_ref()) {
            sink.rotated(creds).await;
        }
        token
    }

    /// Whether the background task should refresh now.
    fn needs_background_refresh(&self) -> Option<u64> {
        let st = self.state();
        st.creds.as_ref()?;
        let now = Instant::now();
        let due = match &st.access {
            None => true,
            Some(a) => now + self.inner.timing.refresh_ahead >= a.expires_at,
        };
        due.then_some(st.generation)
    }

    /// Run the background refresher until `cancel` fires.
    pub fn spawn_refresher(&self, cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        #[expect(
            clippy::disallowed_methods,
            reason = "tracked: serve() awaits this handle at shutdown"
        )]
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(this.inner.timing.check_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await; // the first tick is immediate
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Some(seen) = this.needs_background_refresh() {
                    match this.refresh_shared(seen, true).await {
                        Ok(_) => tracing::debug!("background token refresh done"),
                        Err(e) => tracing::warn!("background token refresh failed: {e}"),
                    }
                }
            }
        })
    }
}

fn cached(grant: &TokenGrant, now: Instant, ttl: Duration) -> CachedToken {
    let lifetime = grant
        .expires_in
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_LIFETIME);
    CachedToken {
        token: grant.access_token.clone(),
        expires_at: now + lifetime,
        refresh_due: now + ttl,
    }
}

/// A refresh failure as the client sees it.
fn refresh_error(e: &OidcError) -> GatewayError {
    if e.is_rejection() {
        GatewayError::Config(format!(
            "the upstream credentials were rejected ({e}); re-authorize with `gateway login` or restart the gateway to run the device flow"
        ))
    } else {
        GatewayError::upstream(
            axum::http::StatusCode::BAD_GATEWAY,
            format!("could not refresh the upstream access token: {e}"),
        )
    }
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;
