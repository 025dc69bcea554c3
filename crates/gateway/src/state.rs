//! `AppState`: the composition root, the one cheap handle every handler
//! gets. It holds the static configuration, the live runtime configuration
//! (behind `ArcSwap`: a change is a whole new `RuntimeConfig` swapped in,
//! readers take a snapshot with [`AppState::runtime`]) and the environment's
//! baseline of it, the one pooled upstream HTTP client, the provider
//! accounts (proxy mode's shared credentials and environment providers, each
//! user's own in full deployment) and `primary`'s model cache. In full
//! deployment it also holds the store, the password hasher, the cached
//! "setup complete" flag, the API-key cache and the usage channel.
//!
//! Only handlers and the pipeline's entry see it: they take from it what a
//! request needs (a [`crate::turn::Turn`], or narrow inputs such as `&Store`)
//! and hand that down; nothing below them names `AppState`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use crate::auth::keys::{ApiKeyHash as KeyHash, KeyCache};
use crate::config::{Config, RequestConfig, RuntimeConfig};
use crate::crypto::Passwords;
use crate::error::GatewayError;
use crate::guardrails::Guardrails;
use crate::limits::Limiter;
use crate::providers::fallbacks::FallbackChains;
use crate::providers::model_gate::ModelGate;
use crate::providers::primary::credentials::per_user::{PrimaryAuth, UserTokens};
use crate::providers::primary::credentials::TokenManager;
use crate::providers::primary::models::ModelCache;
use crate::providers::primary::request::ChatUrl;
use crate::providers::user_direct::UserDirect;
use crate::providers::{Accounts, Registry};
use crate::store::Store;
use crate::upstream::client::HttpClient;
use crate::upstream::Upstream;
use crate::usage::UsageSink;

/// The shared state of the service; clone freely.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

struct Shared {
    config: Config,
    runtime: ArcSwap<RuntimeConfig>,
    /// The runtime values of the environment alone: what a field returns to
    /// when its stored value is removed.
    env_runtime: Arc<RuntimeConfig>,
    /// The cold paths' client (OAuth, SSO, credential refresh, guardrail
    /// service, trace export).
    http: reqwest::Client,
    /// The hot path's client (chat calls, counting, model listings).
    upstream_http: HttpClient,
    /// Where each provider's credentials come from, per caller.
    accounts: Accounts,
    models: ModelCache,
    /// Full deployment: the model registry as requests see it.
    model_gate: ModelGate,
    /// Full deployment: the administrator's fallback chains.
    fallbacks: FallbackChains,
    /// Full deployment: the guardrail rules and profiles.
    guardrails: Arc<Guardrails>,
    proxy_key: Option<KeyHash>,
    /// Full deployment's store (`None` in proxy mode).
    store: Option<Store>,
    /// Argon2id with the configured cost.
    passwords: Passwords,
    /// True once an admin was seen; it never goes back (an admin cannot be
    /// removed while last), so only `false` is re-checked in the store.
    setup_complete: AtomicBool,
    /// Full deployment: API key hash -> owner.
    key_cache: KeyCache,
    /// Full deployment: usage records on their way to the writer task.
    usage: UsageSink,
    /// Full deployment: budgets and rate limits.
    limiter: Arc<Limiter>,
    /// The export of traces, when an OTLP endpoint is set.
    traces: Option<crate::telemetry::traces::Exporter>,
    started: Instant,
    /// Set once shutdown starts: `GET /ready` answers 503 from then on.
    draining: AtomicBool,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("mode", &self.0.config.mode)
            .finish_non_exhaustive()
    }
}

/// What [`AppState::new`] is built from.
pub struct Parts {
    pub config: Config,
    /// The runtime configuration of the environment alone (before stored values).
    pub env_runtime: Arc<RuntimeConfig>,
    /// The cold paths' client.
    pub http: reqwest::Client,
    /// The hot path's client.
    pub upstream_http: HttpClient,
    /// Proxy mode's shared `primary` token manager.
    pub tokens: TokenManager,
    pub models: ModelCache,
    /// Full deployment's store.
    pub store: Option<Store>,
}

impl AppState {
    /// Assemble the state. The live runtime configuration starts as `config.runtime`.
    pub fn new(parts: Parts) -> Self {
        let Parts {
            config,
            env_runtime,
            http,
            upstream_http,
            tokens,
            models,
            store,
        } = parts;
        let passwords = Passwords::new(
            config.tuning.auth.argon2_memory_kib,
            config.tuning.auth.argon2_iterations,
        );
        let proxy_key = config
            .proxy_api_key
            .as_ref()
            .map(|k| KeyHash::of(k.expose()));
        let shared_primary = PrimaryAuth::Shared {
            tokens,
            chat_url: ChatUrl::under(&config.upstream.api_endpoint),
        };
        let accounts = Accounts::new(
            shared_primary,
            UserTokens::new(&config, &http),
            store.clone(),
            Registry::from_config(&config, &http),
            UserDirect::new(&config, &http),
        );
        let limiter = Arc::new(
            match config
                .redis_url
                .as_ref()
                .map(|u| Limiter::redis(u.expose()))
            {
                Some(Ok(l)) => l,
                Some(Err(e)) => {
                    // Unreadable URL (the prefix was checked): count here, say so.
                    tracing::warn!(
                        "REDIS_URL unusable ({e}); rate limits and budgets count in this process"
                    );
                    Limiter::local()
                }
                None => Limiter::local(),
            },
        );
        let traces = config
            .traces
            .clone()
            .map(|t| crate::telemetry::traces::start(t, http.clone()));
        AppState(Arc::new(Shared {
            runtime: ArcSwap::from_pointee(config.runtime.clone()),
            env_runtime,
            config,
            http,
            upstream_http,
            accounts,
            models,
            model_gate: ModelGate::default(),
            fallbacks: FallbackChains::default(),
            guardrails: Arc::default(),
            proxy_key,
            store,
            passwords,
            setup_complete: AtomicBool::new(false),
            key_cache: KeyCache::new(),
            usage: UsageSink::new(),
            limiter,
            traces,
            started: Instant::now(),
            draining: AtomicBool::new(false),
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
        // Boxed: this read happens only until setup is done, and inline it
        // would size the future of every `/v1` request's middleware.
        let done = Box::pin(store.users().has_admin()).await?;
        if done {
            self.0.setup_complete.store(true, Ordering::Release);
        }
        Ok(done)
    }

    /// The export of traces, when it is on.
    pub(crate) fn traces(&self) -> Option<&crate::telemetry::traces::Exporter> {
        self.0.traces.as_ref()
    }

    /// When this process started, in unix seconds.
    pub fn started_at(&self) -> i64 {
        crate::store::clock::now() - i64::try_from(self.uptime().as_secs()).unwrap_or(0)
    }

    /// How long the process has been serving.
    pub fn uptime(&self) -> Duration {
        self.0.started.elapsed()
    }

    /// Mark this replica as shutting down (it never comes back).
    pub fn begin_draining(&self) {
        self.0.draining.store(true, Ordering::Release);
    }

    /// Whether shutdown has started.
    pub fn draining(&self) -> bool {
        self.0.draining.load(Ordering::Acquire)
    }

    /// A snapshot of the live runtime configuration.
    pub fn runtime(&self) -> Arc<RuntimeConfig> {
        self.0.runtime.load_full()
    }

    /// Replace the live runtime configuration (hot fields apply at once).
    pub fn set_runtime(&self, runtime: RuntimeConfig) {
        self.0.accounts.follow_runtime(&runtime);
        self.0.runtime.store(Arc::new(runtime));
    }

    /// The configuration the process started with.
    pub fn config(&self) -> &Config {
        &self.0.config
    }

    /// The runtime configuration of the environment alone (the baseline the
    /// stored values are laid over).
    pub fn env_runtime(&self) -> &Arc<RuntimeConfig> {
        &self.0.env_runtime
    }

    /// The cold paths' client (OAuth and device flows, SSO, the guardrail
    /// service); upstream calls go through [`AppState::upstream`].
    pub fn http(&self) -> &reqwest::Client {
        &self.0.http
    }

    /// The hot path's client with the policy and timeouts of `rt`.
    pub fn upstream(&self, rt: &RuntimeConfig) -> Upstream {
        Upstream::new(&self.0.upstream_http, rt, &self.0.config.tuning)
    }

    /// `primary`'s model cache.
    pub fn models(&self) -> &ModelCache {
        &self.0.models
    }

    /// The administrator's fallback chains (none in proxy mode).
    pub fn fallbacks(&self) -> &FallbackChains {
        &self.0.fallbacks
    }

    /// The guardrail rules and profiles (none in proxy mode).
    pub fn guardrails(&self) -> &Arc<Guardrails> {
        &self.0.guardrails
    }

    /// The model registry as requests see it (empty in proxy mode).
    pub fn model_gate(&self) -> &ModelGate {
        &self.0.model_gate
    }

    /// What [`crate::providers::offer::offered`] reads, for one request.
    pub fn offer_sources<'a>(
        &'a self,
        upstream: &'a Upstream,
        rt: &RuntimeConfig,
    ) -> crate::providers::offer::Sources<'a> {
        crate::providers::offer::Sources {
            accounts: &self.0.accounts,
            models: &self.0.models,
            gate: &self.0.model_gate,
            upstream,
            ttl: rt.model_cache_refresh,
        }
    }

    /// Every provider's accounts, per caller.
    pub fn accounts(&self) -> &Accounts {
        &self.0.accounts
    }

    /// The API-key lookup cache (full deployment).
    pub fn key_cache(&self) -> &KeyCache {
        &self.0.key_cache
    }

    /// The per-user `primary` token sources (full deployment).
    pub fn user_tokens(&self) -> &UserTokens {
        self.0.accounts.user_tokens()
    }

    /// Budgets and rate limits (full deployment).
    pub fn limiter(&self) -> &Arc<Limiter> {
        &self.0.limiter
    }

    /// Where usage records go (full deployment).
    pub fn usage_sink(&self) -> &UsageSink {
        &self.0.usage
    }

    /// SHA-256 of `PROXY_API_KEY` (proxy mode).
    pub(crate) fn proxy_key_hash(&self) -> Option<&KeyHash> {
        self.0.proxy_key.as_ref()
    }
}

/// The request's configuration snapshot, as the front door took it; a
/// request that did not pass it (a test calling a handler directly) takes
/// one here.
impl axum::extract::FromRequestParts<AppState> for RequestConfig {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        app: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<RequestConfig>()
            .cloned()
            .unwrap_or_else(|| RequestConfig(app.runtime())))
    }
}
