//! The gateway service. Its rooms, lowest first (an import points only
//! down this list, `docs/architecture.md` draws the map):
//!
//! - leaves: [`error`], [`config`], [`code_pages`], [`crypto`], [`ids`], [`logging`], [`body`],
//!   [`telemetry`] (the metrics registry), [`cache`] (the per-request caches' map);
//! - [`store`] (SQLite or PostgreSQL), [`upstream`] (the HTTP client, retries,
//!   the one body reader);
//! - [`auth`] (callers and API keys), [`usage`] (accounting), [`sso`];
//! - [`turn`]: the context of one `/v1` request;
//! - [`providers`]: each provider in one place, and the accounts of a caller;
//! - [`state`]: `AppState`, the composition root;
//! - [`pipeline`] (dispatch of a `/v1` call, writing the answer), [`live`]
//!   (replicas in step with the store), [`routes`] (`/`, `/health`, `/ready`, `/metrics`, `/v1`),
//!   [`ui_api`] (`/_ui/api`), [`console`] (the web console under `/_ui/`);
//! - [`server`] (router and middleware), [`cli`], and [`serve`] here.
//!
//! Integration tests, benches and the binary see only what they use: the
//! rooms they reach are `pub`, the others `pub(crate)`, and `unreachable_pub`
//! keeps every item inside no wider than its room.
//!
//! Entry point: [`serve`], which tests call with a listener bound to port 0.
//! It depends on `translate` and `wire`, never the other way round.

#![warn(unreachable_pub)]

pub mod auth;
pub(crate) mod body;
pub(crate) mod cache;
pub mod cli;
pub(crate) mod code_pages;
pub mod config;
pub(crate) mod console;
pub mod crypto;
pub(crate) mod error;
pub mod guardrails;
pub mod ids;
pub mod limits;
pub(crate) mod live;
pub mod logging;
pub(crate) mod pipeline;
pub mod providers;
pub(crate) mod routes;
pub(crate) mod server;
pub(crate) mod sso;
pub(crate) mod state;
pub mod store;
pub(crate) mod telemetry;
pub(crate) mod turn;
pub(crate) mod ui_api;
pub mod upstream;
pub(crate) mod usage;

use std::future::Future;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

pub use config::Config;
pub use error::GatewayError;
pub(crate) use state::AppState;

use config::GatewayMode;
use providers::primary::credentials::{self as primary_credentials, TokenManager};
use providers::primary::models::{ModelCache, ModelFetcher};

/// Run the service on `listener` until `shutdown` completes.
///
/// In proxy mode the primary credentials are set up first (spec 3.6: the
/// device flow runs before the gateway serves when there are none), then the
/// model list is loaded. After `shutdown`, open requests and streams may run
/// for `shutdown_grace`; connections still open then are cut.
pub async fn serve(
    mut config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let stop = CancellationToken::new();
    {
        let stop = stop.clone();
        #[expect(
            clippy::disallowed_methods,
            reason = "lives as long as the shutdown future; only cancels a token"
        )]
        tokio::spawn(async move {
            shutdown.await;
            stop.cancel();
        });
    }

    // Full deployment: the store (created on first run, migrated, its
    // encryption key checked); a failure stops the start with the reason.
    let store = match config.mode {
        GatewayMode::Full => Some(
            store::Store::open(&config)
                .await
                .context("opening the store")?,
        ),
        GatewayMode::Proxy => None,
    };

    // The runtime values of the environment alone (what a field returns to
    // when its stored value is removed), then the stored values over them,
    // so restart fields stored by an admin apply from this start on.
    let env_runtime = std::sync::Arc::new(config.runtime.clone());
    if let Some(store) = &store {
        live::config::overlay_stored(store, &mut config.runtime)
            .await
            .context("reading the stored configuration")?;
    }

    let http = upstream::build_http_client(&config.runtime).context("building the HTTP client")?;
    let upstream_http =
        upstream::build_upstream_client(&config.runtime).context("the outbound proxy variables")?;
    let tokens = match config.mode {
        GatewayMode::Proxy => {
            tokio::select! {
                result = primary_credentials::start_primary(&config, &http) => result?,
                _ = stop.cancelled() => {
                    tracing::info!("shutdown requested before the upstream credentials were ready");
                    return Ok(());
                }
            }
        }
        GatewayMode::Full => {
            TokenManager::without_credentials(config.runtime.upstream_region.as_str())
        }
    };
    warn_about_region(&config);
    telemetry::meters().set_build_info(
        routes::health::VERSION,
        match config.mode {
            GatewayMode::Proxy => "proxy",
            GatewayMode::Full => "full",
        },
    );

    let models = ModelCache::with_fallback();
    let background = CancellationToken::new();
    let mut tasks = Vec::new();
    if tokens.has_credentials() {
        let fetcher = ModelFetcher {
            http: upstream_http.clone(),
            api_endpoint: config.upstream.api_endpoint.clone(),
            tokens: tokens.clone(),
            policy: upstream::http::RetryPolicy::new(&config.runtime, &config.tuning),
        };
        models.refresh_logged(&fetcher).await;
        tasks.push(models.spawn_refresher(
            fetcher,
            config.runtime.model_cache_refresh,
            background.clone(),
        ));
        tasks.push(tokens.spawn_refresher(background.clone()));
    } else {
        tracing::info!("no primary credentials yet: serving the static model list");
    }

    let state = AppState::new(state::Parts {
        config,
        env_runtime,
        http,
        upstream_http,
        tokens,
        models,
        store,
    });
    if let Some(store) = state.store_opt() {
        ui_api::bootstrap::prepare(&state).await?;
        state
            .accounts()
            .switches()
            .reload(store)
            .await
            .context("reading the provider switches")?;
        let upstream = state.upstream(&state.runtime());
        providers::populate::seed_once(store, state.accounts(), state.models(), &upstream)
            .await
            .context("seeding the model registry")?;
        state
            .model_gate()
            .reload(store)
            .await
            .context("reading the model registry")?;
        state
            .fallbacks()
            .reload(store)
            .await
            .context("reading the fallback chains")?;
        state
            .guardrails()
            .reload(store)
            .await
            .context("reading the guardrail rules")?;
        tasks.push(ui_api::bootstrap::spawn_cleanup(
            state.clone(),
            background.clone(),
        ));
        tasks.push(live::config::spawn_sync(
            state.clone(),
            state.env_runtime().clone(),
            background.clone(),
        ));
        tasks.extend(live::invalidation::spawn(state.clone(), background.clone()));
        tasks.push(live::heartbeat::spawn(state.clone(), background.clone()));
        if state.limiter().is_shared() {
            tracing::info!(
                "rate limits and budgets are counted in Redis (REDIS_URL), shared by every replica"
            );
        } else {
            tracing::info!(
                "REDIS_URL is not set: rate limits and budgets are counted in this process; \
                 with several replicas each counts its own"
            );
        }
    }
    // The usage writer stops last (after the server and its streams), so
    // the records of the final requests are drained into the store.
    let usage_stop = CancellationToken::new();
    let usage_writer = match (state.store_opt(), state.usage_sink().take_receiver()) {
        (Some(store), Some(rx)) => Some(usage::writer::spawn(
            store.clone(),
            rx,
            state.model_gate().price_book(),
            state.limiter().clone(),
            usage_stop.clone(),
        )),
        _ => None,
    };
    let front_door = server::FrontDoor::new(state.clone(), server::router(state.clone()));
    let limits = server::listen::ConnectionLimits {
        header_read_timeout: state.config().runtime.header_read_timeout,
    };
    let addr = listener
        .local_addr()
        .context("reading the listen address")?;
    tracing::info!(
        mode = state.config().mode.as_str(),
        version = routes::health::VERSION,
        "listening on http://{addr}"
    );
    // Start-up is over: its code pages may leave the RSS, and again once
    // the first requests and background rounds are over, then now and then.
    code_pages::log_release("start-up code pages given back");
    tasks.push(code_pages::spawn_releases(background.clone()));

    let server = server::listen::serve(listener, front_door, limits, stop.clone());
    tokio::pin!(server);
    let grace_state = state.clone();
    let result = tokio::select! {
        () = &mut server => Ok(()),
        _ = async {
            stop.cancelled().await;
            grace_state.begin_draining();
            let grace = grace_state.runtime().shutdown_grace;
            tracing::info!("shutting down; open requests have {}s to finish", grace.as_secs());
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("shutdown grace period elapsed; closing the remaining connections");
            Ok(())
        }
    };

    background.cancel();
    for task in tasks {
        let _ = task.await;
    }
    usage_stop.cancel();
    if let Some(writer) = usage_writer {
        let _ = writer.await;
    }
    tracing::info!("stopped");
    result
}

/// The primary data plane exists in two regions only (protocol doc 1.1).
fn warn_about_region(config: &Config) {
    let region = config.runtime.upstream_region.as_str();
    let default_endpoint =
        config.upstream.api_endpoint == format!("https://q.{region}.amazonaws.com");
    if default_endpoint && !matches!(region, "us-east-1" | "eu-central-1") {
        tracing::warn!(
            "UPSTREAM_REGION={region}: the primary API is served in us-east-1 and eu-central-1 only; \
             set UPSTREAM_SSO_REGION for the login region instead"
        );
    }
}
