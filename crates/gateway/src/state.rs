//! `AppState`: the one cheap handle every handler gets. It holds the static
//! configuration, the live runtime configuration (behind `ArcSwap`: a change is
//! a whole new `RuntimeConfig` swapped in, readers take a snapshot with
//! [`AppState::runtime`]), the one pooled upstream HTTP client, the primary
//! provider's token manager, the model cache and the direct-provider registry.
//! In full deployment it also holds the store, the password hasher, the
//! cached "setup complete" flag, the API-key cache, the per-user token
//! sources and the usage channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use crate::auth::keys::KeyCache;
use crate::auth::ApiKeyHash;
use crate::config::{Config, RuntimeConfig};
use crate::credentials::per_user::UserTokens;
use crate::credentials::TokenManager;
use crate::crypto::Passwords;
use crate::error::GatewayError;
use crate::models::ModelCache;
use crate::providers::primary::ChatUrl;
use crate::providers::Registry;
use crate::store::Store;
use crate::upstream::http::RetryPolicy;
use crate::usage::UsageSink;

/// Idle pooled connections are closed after this long.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// TCP keep-alive probes on upstream connections (long streams behind NAT).
const TCP_KEEPALIVE: Duration = Duration::from_secs(60);

/// The shared state of the service; clone freely.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

struct Shared {
    config: Config,
    runtime: ArcSwap<RuntimeConfig>,
    http: reqwest::Client,
    tokens: TokenManager,
    /// The chat URL under `UPSTREAM_API_ENDPOINT` (the shared credentials' endpoint).
    primary_chat_url: ChatUrl,
    models: ModelCache,
    proxy_key: Option<ApiKeyHash>,
    /// The direct providers (`messages_vendor`, ...) this deployment can reach.
    providers: Registry,
    /// Full deployment's store (`None` in proxy mode).
    store: Option<Store>,
    /// Argon2id with the configured cost.
    passwords: Passwords,
    /// True once an admin was seen; it never goes back (an admin cannot be
    /// removed while last), so only `false` is re-checked in the store.
    setup_complete: AtomicBool,
    /// Full deployment: API key hash -> owner.
    key_cache: KeyCache,
    /// Full deployment: each user's `primary` token source.
    user_tokens: UserTokens,
    /// Full deployment: usage records on their way to the writer task.
    usage: UsageSink,
    started: Instant,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("mode", &self.0.config.mode)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// Assemble the state. The live runtime configuration starts as `config.runtime`.
    pub fn new(
        config: Config,
        http: reqwest::Client,
        tokens: TokenManager,
        models: ModelCache,
    ) -> Self {
        Self::assemble(config, http, tokens, models, None)
    }

    /// Full deployment: the state with its store.
    pub fn with_store(
        config: Config,
        http: reqwest::Client,
        tokens: TokenManager,
        models: ModelCache,
        store: Store,
    ) -> Self {
        Self::assemble(config, http, tokens, models, Some(store))
    }

    fn assemble(
        config: Config,
        http: reqwest::Client,
        tokens: TokenManager,
        models: ModelCache,
        store: Option<Store>,
    ) -> Self {
        let passwords = Passwords::new(
            config.tuning.auth.argon2_memory_kib,
            config.tuning.auth.argon2_iterations,
        );
        let proxy_key = config
            .proxy_api_key
            .as_ref()
            .map(|k| ApiKeyHash::of(k.expose()));
        let primary_chat_url = ChatUrl::under(&config.upstream.api_endpoint);
        let providers = Registry::from_config(&config, &http);
        let user_tokens = UserTokens::new(&config, &http);
        AppState(Arc::new(Shared {
            runtime: ArcSwap::from_pointee(config.runtime.clone()),
            config,
            http,
            tokens,
            primary_chat_url,
            models,
            proxy_key,
            providers,
            store,
            passwords,
            setup_complete: AtomicBool::new(false),
            key_cache: KeyCache::new(),
            user_tokens,
            usage: UsageSink::new(),
            started: Instant::now(),
        }))
    }

    /// The store of full deployment; `config_error` in proxy mode.
    pub fn store(&self) -> Result<&Store, GatewayError> {
        self.0
            .store
            .as_ref()
            .ok_or_else(|| GatewayError::Config("this deployment has no store (proxy mode)".into()))
    }

    /// The store, if this deployment has one.
    pub fn store_opt(&self) -> Option<&Store> {
        self.0.store.as_ref()
    }

    /// Password hashing with the configured cost.
    pub fn passwords(&self) -> &Passwords {
        &self.0.passwords
    }

    /// Whether setup is complete (spec 3.1): an admin exists. Read from the
    /// store until it is true (so every replica sees the first sign-in at
    /// once), then cached. Proxy mode has no setup: always true.
    pub async fn setup_complete(&self) -> Result<bool, GatewayError> {
        if self.0.setup_complete.load(Ordering::Acquire) {
            return Ok(true);
        }
        let Some(store) = &self.0.store else {
            return Ok(true);
        };
        let done = store.users().has_admin().await?;
        if done {
            self.0.setup_complete.store(true, Ordering::Release);
        }
        Ok(done)
    }

    /// How long the process has been serving.
    pub fn uptime(&self) -> Duration {
        self.0.started.elapsed()
    }

    /// A snapshot of the live runtime configuration.
    pub fn runtime(&self) -> Arc<RuntimeConfig> {
        self.0.runtime.load_full()
    }

    /// Replace the live runtime configuration (hot fields apply at once).
    pub fn set_runtime(&self, runtime: RuntimeConfig) {
        self.0.runtime.store(Arc::new(runtime));
    }

    /// The configuration the process started with.
    pub fn config(&self) -> &Config {
        &self.0.config
    }

    /// The one pooled upstream client (no total timeout: streams can be long).
    pub fn http(&self) -> &reqwest::Client {
        &self.0.http
    }

    /// The primary provider's access tokens.
    pub fn primary_tokens(&self) -> &TokenManager {
        &self.0.tokens
    }

    /// The chat URL of `primary` under the configured API endpoint.
    pub fn primary_chat_url(&self) -> &ChatUrl {
        &self.0.primary_chat_url
    }

    pub fn models(&self) -> &ModelCache {
        &self.0.models
    }

    /// The direct providers and provider selection.
    pub fn providers(&self) -> &Registry {
        &self.0.providers
    }

    /// The retry policy of the current runtime configuration.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy::new(&self.runtime(), &self.0.config.tuning)
    }

    /// The API-key lookup cache (full deployment).
    pub fn key_cache(&self) -> &KeyCache {
        &self.0.key_cache
    }

    /// The per-user `primary` token sources (full deployment).
    pub fn user_tokens(&self) -> &UserTokens {
        &self.0.user_tokens
    }

    /// Where usage records go (full deployment).
    pub fn usage_sink(&self) -> &UsageSink {
        &self.0.usage
    }

    /// SHA-256 of `PROXY_API_KEY` (proxy mode).
    pub(crate) fn proxy_key_hash(&self) -> Option<&ApiKeyHash> {
        self.0.proxy_key.as_ref()
    }
}

/// The pooled upstream client: rustls, TCP_NODELAY, keep-alive, the connect
/// timeout of the configuration and no total timeout (a stream may run for
/// many minutes; the pipeline bounds waits itself). reqwest's own retries are
/// off: `upstream::http` retries with the spec's policy, and reqwest's retry
/// layer copied every request's headers in case it would retry.
pub fn build_http_client(runtime: &RuntimeConfig) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .use_rustls_tls()
        .retry(reqwest::retry::never())
        .tcp_nodelay(true)
        .tcp_keepalive(TCP_KEEPALIVE)
        .connect_timeout(runtime.http_connect_timeout)
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
}
