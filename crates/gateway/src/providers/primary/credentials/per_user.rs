//! Where one request's `primary` access token comes from ([`PrimaryAuth`]):
//! the shared [`TokenManager`] of proxy mode, or in full deployment the
//! calling user's own credentials (spec 2.4, 3.5, 5.8).
//!
//! [`UserTokens`] keeps one [`TokenManager`] per user, built from the user's
//! stored credentials on first use and cached ([`ENTRY_TTL`]); each manager
//! caches its access token for `token_cache_ttl` (4 min), refreshes with the
//! user's client id and secret at the SSO OIDC endpoint of the user's SSO
//! region, single-flight per user, falls back to a still-valid token when a
//! refresh fails, and is refreshed again by the 403 path. Users never share
//! a manager, a lock or a failure. "No credentials" is cached too (a user
//! without them costs no query per request) and dropped when they are set
//! up, here at once and on other replicas through `creds:<user>`.
//!
//! A rotated refresh token is written to the user's row
//! ([`StoreSink`]). Another replica still holding the old one finds out
//! when its refresh is refused: it re-reads the row and, if the token there
//! differs, continues with a new manager ([`UserSource::recover`]).
//!
//! Endpoints: with the default (regional) upstream endpoints, the user's
//! regions pick the hosts (`https://q.{upstream_region}.amazonaws.com`,
//! `https://oidc.{sso_region}.amazonaws.com`); endpoints overridden by
//! `UPSTREAM_API_ENDPOINT` / `UPSTREAM_OIDC_ENDPOINT` are used as they are.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;

use super::manager::{RotationSink, TokenManager, TokenTiming};
use super::oidc::OidcClient;
use super::token_file::PrimaryCredentials;
use crate::cache::{Expiry, TtlCache};
use crate::config::Config;
use crate::error::GatewayError;
use crate::providers::primary::request::ChatUrl;
use crate::store::ids::UserId;
use crate::store::upstream_credentials::UpstreamCredentials;
use crate::store::Store;
use crate::telemetry::{self, CacheName};

/// How long a user's token source stays cached without being used.
pub const ENTRY_TTL: Duration = Duration::from_secs(30 * 60);
/// Most users with a cached token source.
const CAPACITY: usize = 50_000;
/// Locks taken by first loads, by user: concurrent first requests of one
/// user build one source (its refreshes are single-flight only if there is
/// one), while other users' loads go on.
const LOAD_STRIPES: usize = 64;

/// What a request without upstream credentials is told (403 `provider_not_connected`).
pub const NOT_CONNECTED: &str =
    "your account has no upstream credentials for the primary provider: \
     connect your upstream account in the web UI at /_ui/ (Upstream), then retry";
/// What a request whose stored credentials were refused is told.
pub const REJECTED: &str = "the upstream refused your stored credentials: \
     reconnect your upstream account in the web UI at /_ui/ (Upstream), then retry";

/// The token source and API endpoint of one request's `primary` call.
#[derive(Debug, Clone)]
pub enum PrimaryAuth {
    /// Proxy mode: the one shared manager and the configured endpoint.
    Shared {
        tokens: TokenManager,
        chat_url: ChatUrl,
    },
    /// Full deployment: the calling user's own credentials.
    User(Arc<UserSource>),
}

impl PrimaryAuth {
    /// The primary API's chat URL for this request.
    pub fn chat_url(&self) -> ChatUrl {
        match self {
            PrimaryAuth::Shared { chat_url, .. } => chat_url.clone(),
            PrimaryAuth::User(source) => source.current.load().chat_url.clone(),
        }
    }

    /// The profile ARN to send, when known.
    pub fn profile_arn(&self) -> Option<String> {
        match self {
            PrimaryAuth::Shared { tokens, .. } => tokens.profile_arn(),
            PrimaryAuth::User(source) => source.current.load().tokens.profile_arn(),
        }
    }

    /// What lists the upstream's models with these credentials.
    pub fn model_fetcher(
        &self,
        http: &crate::upstream::client::HttpClient,
        policy: crate::upstream::http::RetryPolicy,
    ) -> Option<crate::providers::primary::models::ModelFetcher> {
        let (tokens, chat_url) = match self {
            PrimaryAuth::Shared { tokens, chat_url } => (tokens.clone(), chat_url.clone()),
            PrimaryAuth::User(source) => {
                let current = source.current.load();
                (current.tokens.clone(), current.chat_url.clone())
            }
        };
        Some(crate::providers::primary::models::ModelFetcher {
            http: http.clone(),
            api_endpoint: chat_url.api_endpoint()?,
            tokens,
            policy,
        })
    }

    /// A valid access token (cached, else refreshed).
    pub async fn access_token(&self) -> Result<String, GatewayError> {
        match self {
            PrimaryAuth::Shared { tokens, .. } => tokens.access_token().await,
            PrimaryAuth::User(source) => source.access_token(false).await,
        }
    }

    /// The error to give the client for a failed call: when the user's
    /// credentials were refused on the way (the refresh after a 403), that,
    /// rather than the upstream's own 403.
    pub fn explain(&self, err: GatewayError) -> GatewayError {
        match self {
            PrimaryAuth::User(source)
                if source.refused() && err.status() == axum::http::StatusCode::FORBIDDEN =>
            {
                GatewayError::Forbidden(REJECTED.into())
            }
            _ => err,
        }
    }

    /// Refresh now (the upstream answered 403).
    pub async fn force_refresh(&self) -> Result<(), GatewayError> {
        match self {
            PrimaryAuth::Shared { tokens, .. } => tokens.force_refresh().await.map(|_| ()),
            PrimaryAuth::User(source) => source.access_token(true).await.map(|_| ()),
        }
    }
}

/// One user's token source: the manager and endpoint in use, swapped whole
/// when the stored credentials are re-read.
#[derive(Debug)]
pub struct UserSource {
    user: UserId,
    current: ArcSwap<Current>,
    /// Re-reads of the row, one at a time.
    recover_lock: tokio::sync::Mutex<()>,
    /// The SSO service refused these credentials for good (until the user
    /// connects again, which builds a new source).
    refused: std::sync::atomic::AtomicBool,
    store: Store,
    builder: Builder,
}

#[derive(Debug)]
struct Current {
    tokens: TokenManager,
    chat_url: ChatUrl,
}

impl UserSource {
    /// Whether the stored credentials were refused (the user must connect again).
    pub fn refused(&self) -> bool {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn access_token(&self, force: bool) -> Result<String, GatewayError> {
        let tokens = self.current.load().tokens.clone();
        let result = if force {
            tokens.force_refresh().await
        } else {
            tokens.access_token().await
        };
        match result {
            // A refused refresh (a `config_error` from the manager).
            Err(GatewayError::Config(reason)) => self.recover(&tokens, reason).await,
            other => other,
        }
    }

    /// The refresh of `failed` was refused: when the stored refresh token
    /// differs (another replica rotated it, or the user reconnected), go on
    /// with a manager of the stored credentials; else the credentials are
    /// dead and the user must reconnect.
    async fn recover(&self, failed: &TokenManager, reason: String) -> Result<String, GatewayError> {
        let result = self.reread(failed, reason).await;
        if matches!(result, Err(GatewayError::Forbidden(_))) {
            self.refused
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        result
    }

    async fn reread(&self, failed: &TokenManager, reason: String) -> Result<String, GatewayError> {
        let _one = self.recover_lock.lock().await;
        let current = self.current.load_full();
        if !current.tokens.same_as(failed) {
            // Someone recovered meanwhile.
            return current.tokens.access_token().await.map_err(rejected);
        }
        let held = failed.credentials().map(|c| c.refresh_token);
        let stored = self.store.upstream_credentials().get(self.user).await?;
        match stored {
            Some(creds) if Some(&creds.refresh_token) != held.as_ref() => {
                tracing::info!(user_id = %self.user, "upstream refresh token changed in the store; using it");
                let next = self.builder.current(&self.store, creds);
                let tokens = next.tokens.clone();
                self.current.store(Arc::new(next));
                tokens.access_token().await.map_err(rejected)
            }
            _ => {
                tracing::warn!(user_id = %self.user, "upstream credentials refused: {reason}");
                Err(GatewayError::Forbidden(REJECTED.into()))
            }
        }
    }
}

/// A second refusal is final.
fn rejected(err: GatewayError) -> GatewayError {
    match err {
        GatewayError::Config(_) => GatewayError::Forbidden(REJECTED.into()),
        other => other,
    }
}

/// Builds managers the same way for every user.
#[derive(Debug, Clone)]
struct Builder {
    http: reqwest::Client,
    oidc_endpoint: String,
    api_endpoint: String,
    oidc_timeout: Duration,
    timing: TokenTiming,
}

impl Builder {
    fn new(config: &Config, http: &reqwest::Client) -> Self {
        Builder {
            http: http.clone(),
            oidc_endpoint: config.upstream.oidc_endpoint.clone(),
            api_endpoint: config.upstream.api_endpoint.clone(),
            oidc_timeout: config.tuning.oidc_timeout,
            timing: TokenTiming {
                cache_ttl: config.tuning.token_cache_ttl,
                refresh_ahead: config.tuning.token_refresh_ahead,
                check_interval: config.tuning.token_check_interval,
            },
        }
    }

    fn current(&self, store: &Store, creds: UpstreamCredentials) -> Current {
        let oidc = self.oidc(&creds.sso_region);
        let chat_url = ChatUrl::under(&regional(&self.api_endpoint, "q", &creds.upstream_region));
        let sink = Arc::new(StoreSink {
            store: store.clone(),
            user: creds.user_id,
        });
        let region = creds.upstream_region.clone();
        let tokens =
            TokenManager::with_sink(oidc, region, self.timing, to_primary(creds), None, sink);
        Current { tokens, chat_url }
    }

    /// The OIDC client of an SSO region.
    fn oidc(&self, sso_region: &str) -> OidcClient {
        OidcClient::new(
            self.http.clone(),
            regional(&self.oidc_endpoint, "oidc", sso_region),
            self.oidc_timeout,
        )
    }
}

/// `https://{service}.{region}.amazonaws.com` when `configured` is that
/// service's default regional endpoint (any region); else `configured`.
pub fn regional(configured: &str, service: &str, region: &str) -> String {
    let default_shape = configured
        .strip_prefix("https://")
        .and_then(|rest| rest.strip_prefix(service))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(".amazonaws.com"))
        .is_some_and(|r| !r.is_empty() && !r.contains('/') && !r.contains('.'));
    if default_shape {
        format!("https://{service}.{region}.amazonaws.com")
    } else {
        configured.to_owned()
    }
}

fn to_primary(creds: UpstreamCredentials) -> PrimaryCredentials {
    PrimaryCredentials {
        refresh_token: creds.refresh_token,
        client_id: creds.client_id,
        client_secret: creds.client_secret,
        client_secret_expires_at: creds.client_expires_at,
        region: Some(creds.upstream_region),
        sso_region: Some(creds.sso_region),
        start_url: creds.sso_start_url,
        profile_arn: creds.profile_arn,
    }
}

/// Writes a user's rotated refresh token to the store.
#[derive(Debug)]
pub struct StoreSink {
    store: Store,
    user: UserId,
}

impl RotationSink for StoreSink {
    fn rotated(&self, creds: PrimaryCredentials) -> futures::future::BoxFuture<'static, ()> {
        let store = self.store.clone();
        let user = self.user;
        Box::pin(async move {
            match store
                .upstream_credentials()
                .update_refresh_token(user, &creds.refresh_token)
                .await
            {
                Ok(_) => tracing::debug!(user_id = %user, "rotated upstream refresh token stored"),
                Err(e) => {
                    tracing::error!(user_id = %user, "rotated upstream refresh token not stored: {e}")
                }
            }
        })
    }
}

/// The per-user token sources of full deployment; cheap to clone.
#[derive(Clone)]
pub struct UserTokens {
    cache: Arc<TtlCache<UserId, Option<Arc<UserSource>>>>,
    loading: Arc<[tokio::sync::Mutex<()>; LOAD_STRIPES]>,
    builder: Builder,
}

impl std::fmt::Debug for UserTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserTokens")
            .field("entries", &self.cache.len())
            .finish()
    }
}

impl UserTokens {
    pub fn new(config: &Config, http: &reqwest::Client) -> Self {
        UserTokens {
            cache: Arc::new(TtlCache::new(CAPACITY, Expiry::AfterRead(ENTRY_TTL))),
            loading: Arc::new(std::array::from_fn(|_| tokio::sync::Mutex::new(()))),
            builder: Builder::new(config, http),
        }
    }

    /// The token source of `user`, or `None` without stored credentials.
    pub async fn source(
        &self,
        store: &Store,
        user: UserId,
    ) -> Result<Option<Arc<UserSource>>, GatewayError> {
        if let Some(found) = self.cache.get(&user) {
            telemetry::meters().cache_lookup(CacheName::Credentials, true);
            return Ok(found);
        }
        // Boxed: a miss is rare, and its store read inline would size the
        // future of every `primary` request.
        Box::pin(self.load(store, user)).await
    }

    /// Load the source of `user` from the store (one load per user at a
    /// time) and cache it.
    async fn load(
        &self,
        store: &Store,
        user: UserId,
    ) -> Result<Option<Arc<UserSource>>, GatewayError> {
        let stripe = usize::from(user.0.as_bytes()[15]) % LOAD_STRIPES;
        let _loading = self.loading[stripe].lock().await;
        if let Some(found) = self.cache.get(&user) {
            // Another request of this user loaded it meanwhile.
            telemetry::meters().cache_lookup(CacheName::Credentials, true);
            return Ok(found);
        }
        telemetry::meters().cache_lookup(CacheName::Credentials, false);
        let creds = store.upstream_credentials().get(user).await.map_err(|e| {
            GatewayError::internal(anyhow::anyhow!("loading upstream credentials: {e}"))
        })?;
        let source = creds.map(|c| {
            Arc::new(UserSource {
                user,
                current: ArcSwap::from_pointee(self.builder.current(store, c)),
                recover_lock: tokio::sync::Mutex::new(()),
                refused: std::sync::atomic::AtomicBool::new(false),
                store: store.clone(),
                builder: self.builder.clone(),
            })
        });
        self.cache.insert(user, source.clone());
        Ok(source)
    }

    /// The OIDC client for an SSO region (device flow of the web UI).
    pub fn oidc(&self, sso_region: &str) -> OidcClient {
        self.builder.oidc(sso_region)
    }

    /// The `profileArn` of an organization account in `region`, asked of the
    /// upstream once with a fresh access token (`None`: none, or the call
    /// failed; calls then go without one, as in proxy mode).
    pub async fn discover_profile(
        &self,
        region: &str,
        access_token: &crate::config::Secret,
    ) -> Option<String> {
        super::profiles::discover(
            &self.builder.http,
            &regional(&self.builder.api_endpoint, "q", region),
            access_token.expose(),
            region,
            self.builder.oidc_timeout,
        )
        .await
    }

    /// Forget the cached source of `user` (credentials saved or deleted).
    pub fn invalidate(&self, user: UserId) {
        self.cache.remove(&user);
    }

    /// Drop the expired sources.
    pub fn purge_expired(&self) {
        self.cache.purge_expired();
    }

    /// Forget every cached source (notifications may have been missed).
    pub fn invalidate_all(&self) {
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_endpoints_follow_the_users_region() {
        assert_eq!(
            regional("https://q.us-east-1.amazonaws.com", "q", "eu-central-1"),
            "https://q.eu-central-1.amazonaws.com"
        );
        assert_eq!(
            regional("https://oidc.us-east-1.amazonaws.com", "oidc", "eu-west-1"),
            "https://oidc.eu-west-1.amazonaws.com"
        );
        // Overrides (simulators, proxies) are kept.
        for configured in [
            "http://127.0.0.1:9000",
            "https://q.us-east-1.amazonaws.com.proxy.example",
            "https://proxy.example/q.us-east-1.amazonaws.com",
            "https://oidc.us-east-1.amazonaws.com",
        ] {
            assert_eq!(regional(configured, "q", "eu-central-1"), configured);
        }
    }

    #[test]
    fn the_messages_say_where_to_connect() {
        assert!(NOT_CONNECTED.contains("/_ui/"));
        assert!(REJECTED.contains("/_ui/"));
    }
}
