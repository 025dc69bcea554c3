//! Keeping this replica's caches true to the store (full deployment):
//!
//! - PostgreSQL: a dedicated connection `LISTEN`s on
//!   [`INVALIDATE_CHANNEL`]. `key:<hex hash>` (sent by a trigger whenever an
//!   API key row is deleted, its user's deletion included) drops that key from
//!   the lookup cache; `creds:<user id>` (sent when upstream credentials are
//!   saved or deleted) drops that user's token source; `accounts:<user id>`
//!   (sent when a user's provider accounts or order change) drops that
//!   user's direct providers; `switches`, `models` and `fallbacks` reload
//!   the provider switches, the model registry's view and the fallback
//!   chains. Notifications arrive
//!   within milliseconds of the commit. When the connection is lost, the
//!   listener reconnects with backoff and, since notifications sent
//!   meanwhile are lost, drops both caches whole.
//! - Both backends: every [`RECHECK_EVERY`] the cached key hashes are checked
//!   against the store and the missing ones dropped, a safety net for
//!   anything missed (and SQLite's only cross-path check; a single SQLite
//!   replica also invalidates locally at every change). The same tick reads
//!   the provider switches and the model registry again, and writes when
//!   provider accounts last answered (`last_used`, batched).

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool};
use tokio_util::sync::CancellationToken;

use crate::state::AppState;
use crate::store::fallbacks::FALLBACKS_PAYLOAD;
use crate::store::guardrails::GUARDRAILS_PAYLOAD;
use crate::store::ids::UserId;
use crate::store::model_registry::MODELS_PAYLOAD;
use crate::store::provider_accounts::POOL_PAYLOAD;
use crate::store::provider_switches::SWITCHES_PAYLOAD;
use crate::store::upstream_credentials::INVALIDATE_CHANNEL;
use crate::store::Pool;

/// How often cached keys are re-checked against the store.
pub(crate) const RECHECK_EVERY: Duration = Duration::from_secs(30);
/// First wait before reconnecting the listener; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Start the listener (PostgreSQL) and the periodic re-check; both stop at `cancel`.
pub(crate) fn spawn(app: AppState, cancel: CancellationToken) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    if let Some(Pool::Postgres(pool)) = app.store_opt().map(|s| s.pool().clone()) {
        #[expect(
            clippy::disallowed_methods,
            reason = "tracked: serve() awaits these handles at shutdown"
        )]
        tasks.push(tokio::spawn(listen(app.clone(), pool, cancel.clone())));
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits these handles at shutdown"
    )]
    tasks.push(tokio::spawn(recheck(app, cancel)));
    tasks
}

/// Apply one notification payload.
pub(crate) async fn apply(app: &AppState, payload: &str) {
    if let Some(hash) = payload.strip_prefix("key:") {
        app.key_cache().invalidate_hex(hash);
        tracing::debug!("API key revoked elsewhere: dropped from the cache");
    } else if let Some(user) = payload.strip_prefix("creds:") {
        if let Ok(user) = user.parse::<UserId>() {
            app.user_tokens().invalidate(user);
            tracing::debug!(user_id = %user, "upstream credentials changed elsewhere");
        }
    } else if payload == SWITCHES_PAYLOAD {
        reload_switches(app).await;
    } else if payload == MODELS_PAYLOAD {
        reload_models(app).await;
    } else if payload == FALLBACKS_PAYLOAD {
        reload_fallbacks(app).await;
    } else if payload == GUARDRAILS_PAYLOAD {
        reload_guardrails(app).await;
    } else if payload == POOL_PAYLOAD {
        app.accounts().invalidate_all_users();
        tracing::debug!("the provider pool changed elsewhere");
    } else if let Some(user) = payload.strip_prefix("accounts:") {
        if let Ok(user) = user.parse::<UserId>() {
            app.accounts().invalidate_user(user);
            tracing::debug!(user_id = %user, "provider accounts changed elsewhere");
        }
    }
}

/// Read the provider switches, the model registry, the fallback chains
/// and the guardrails again (announcements of them may have been missed).
async fn reload_views(app: &AppState) {
    reload_switches(app).await;
    reload_models(app).await;
    reload_fallbacks(app).await;
    reload_guardrails(app).await;
}

async fn reload_guardrails(app: &AppState) {
    if let Some(store) = app.store_opt() {
        if let Err(e) = app.guardrails().reload(store).await {
            tracing::warn!("the guardrail rules could not be reloaded: {e}");
        }
    }
}

async fn reload_fallbacks(app: &AppState) {
    if let Some(store) = app.store_opt() {
        if let Err(e) = app.fallbacks().reload(store).await {
            tracing::warn!("the fallback chains could not be reloaded: {e}");
        }
    }
}

async fn reload_switches(app: &AppState) {
    if let Some(store) = app.store_opt() {
        if let Err(e) = app.accounts().switches().reload(store).await {
            tracing::warn!("the provider switches could not be reloaded: {e}");
        }
    }
}

async fn reload_models(app: &AppState) {
    if let Some(store) = app.store_opt() {
        if let Err(e) = app.model_gate().reload(store).await {
            tracing::warn!("the model registry could not be reloaded: {e}");
        }
    }
}

fn drop_everything(app: &AppState) {
    app.key_cache().invalidate_all();
    app.user_tokens().invalidate_all();
    app.accounts().invalidate_all_users();
}

async fn listen(app: AppState, pool: PgPool, cancel: CancellationToken) {
    let mut backoff = FIRST_BACKOFF;
    let mut connected_before = false;
    loop {
        let listener = async {
            let mut l = PgListener::connect_with(&pool).await?;
            l.listen(INVALIDATE_CHANNEL).await?;
            Ok::<_, sqlx::Error>(l)
        };
        let mut listener = tokio::select! {
            () = cancel.cancelled() => return,
            l = listener => match l {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!("cache invalidation listener cannot connect (retrying in {}ms): {e}", backoff.as_millis());
                    if sleep_or_cancel(backoff, &cancel).await {
                        return;
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            },
        };
        if connected_before {
            // Whatever was announced while we were away is unknown.
            drop_everything(&app);
            reload_views(&app).await;
            tracing::info!("cache invalidation listener reconnected; caches dropped");
        }
        connected_before = true;
        backoff = FIRST_BACKOFF;
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return,
                n = listener.try_recv() => n,
            };
            match next {
                Ok(Some(notification)) => apply(&app, notification.payload()).await,
                Ok(None) => {
                    // The connection was lost; `try_recv` reconnects next time.
                    tracing::warn!(
                        "cache invalidation listener lost its connection; caches dropped"
                    );
                    drop_everything(&app);
                }
                Err(e) => {
                    tracing::warn!("cache invalidation listener failed: {e}");
                    drop_everything(&app);
                    if sleep_or_cancel(backoff, &cancel).await {
                        return;
                    }
                    break;
                }
            }
        }
    }
}

async fn recheck(app: AppState, cancel: CancellationToken) {
    let mut tick = tokio::time::interval(RECHECK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await; // the first tick is immediate
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Some(store) = app.store_opt() else {
            return;
        };
        match app.key_cache().recheck(store).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(dropped = n, "cached API keys no longer stored were dropped"),
            Err(e) => tracing::warn!("re-checking cached API keys failed: {e}"),
        }
        // Expired entries are never served; dropping them here keeps the
        // per-user caches' memory to the users seen recently.
        app.accounts().purge_expired_users();
        app.user_tokens().purge_expired();
        reload_views(&app).await;
        let used = app.accounts().rate_limits().take_used();
        if let Err(e) = store.provider_accounts().mark_used(&used).await {
            tracing::warn!("writing when provider accounts were last used failed: {e}");
        }
    }
}

/// Sleep `d`; true when cancelled meanwhile.
async fn sleep_or_cancel(d: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        () = cancel.cancelled() => true,
        () = tokio::time::sleep(d) => false,
    }
}
