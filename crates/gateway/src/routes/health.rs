//! The infrastructure endpoints (spec 4.2), open without authentication:
//! `GET /` -> `{"status":"ok","message","version"}` and
//! `GET /health` -> `{"status":"healthy","timestamp","version"}` and
//! `GET /ready` -> `{"status":"ready","timestamp","version"}` or 503 `not_ready`.
//!
//! `/health` answers `healthy` (the spec leaves `ok` vs `healthy` open; the
//! container health check and `gateway healthcheck` rely on `healthy`).
//!
//! `/health` says the process serves (a liveness probe); `/ready` says this
//! replica should get traffic (a readiness probe). The gateway listens only
//! after its migrations ran, so a listening replica has its schema; `/ready`
//! adds that the store answers a trivial query now, and turns 503 once
//! shutdown starts so a load balancer stops sending while streams drain.

use std::time::Duration;

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::config::GatewayMode;
use crate::error::GatewayError;
use crate::state::AppState;

/// How long `/ready` waits for the store; shorter than a probe's timeout, so
/// a hung database answers 503 instead of a probe timing out.
const STORE_ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// The version of the running build.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `GET /`.
pub(crate) async fn root(State(state): State<AppState>) -> Json<Value> {
    let message = match state.config().mode {
        GatewayMode::Proxy => {
            "Chat gateway (proxy mode): POST /v1/chat/completions, POST /v1/messages, GET /v1/models"
        }
        GatewayMode::Full => {
            "Chat gateway: POST /v1/chat/completions, POST /v1/messages, GET /v1/models; web UI at /_ui/"
        }
    };
    Json(json!({"status": "ok", "message": message, "version": VERSION}))
}

/// `GET /health`.
pub(crate) async fn health() -> Json<Value> {
    Json(json!({"status": "healthy", "timestamp": now_rfc3339(), "version": VERSION}))
}

/// `GET /ready`: 200 when this replica can serve (proxy mode: always, until
/// shutdown), 503 `not_ready` while shutting down or when the store does not
/// answer within [`STORE_ANSWER_TIMEOUT`].
pub(crate) async fn ready(State(state): State<AppState>) -> Result<Json<Value>, GatewayError> {
    if state.draining() {
        return Err(GatewayError::NotReady(
            "shutting down: open requests are finishing".into(),
        ));
    }
    if let Some(store) = state.store_opt() {
        // The newest applied migration: a read any healthy store answers at once.
        match tokio::time::timeout(STORE_ANSWER_TIMEOUT, store.meta().schema_version()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!("readiness: the store failed: {e}");
                return Err(GatewayError::NotReady(
                    "the database does not answer".into(),
                ));
            }
            Err(_) => {
                return Err(GatewayError::NotReady(format!(
                    "the database did not answer within {}s",
                    STORE_ANSWER_TIMEOUT.as_secs()
                )));
            }
        }
    }
    Ok(Json(
        json!({"status": "ready", "timestamp": now_rfc3339(), "version": VERSION}),
    ))
}

/// The current UTC time as RFC 3339 with millisecond precision (`2025-01-31T12:00:00.123Z`).
pub(crate) fn now_rfc3339() -> String {
    rfc3339_millis(OffsetDateTime::now_utc())
}

/// `t` in UTC as `YYYY-MM-DDTHH:MM:SS.mmmZ` (always three fraction digits).
pub(crate) fn rfc3339_millis(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, EnvSource};
    use crate::providers::primary::credentials::TokenManager;
    use crate::providers::primary::models::ModelCache;

    fn proxy_state() -> AppState {
        let config = Config::from_source(&EnvSource::from_pairs([
            ("GATEWAY_MODE", "proxy"),
            ("PROXY_API_KEY", "test-key-0123456789"),
        ]))
        .unwrap();
        AppState::new(crate::state::Parts {
            env_runtime: std::sync::Arc::new(config.runtime.clone()),
            http: reqwest::Client::new(),
            upstream_http: crate::upstream::client::HttpClient::direct(
                std::time::Duration::from_secs(5),
            ),
            tokens: TokenManager::without_credentials("us-east-1"),
            models: ModelCache::with_fallback(),
            store: None,
            config,
        })
    }

    // Over HTTP this is hard to see: shutdown also stops accepting
    // connections, so only a request on a connection opened before can ask.
    #[tokio::test]
    async fn readiness_turns_503_once_shutdown_starts() {
        let state = proxy_state();
        let Json(body) = ready(State(state.clone())).await.unwrap();
        assert_eq!(body["status"], "ready");
        state.begin_draining();
        let err = ready(State(state)).await.unwrap_err();
        assert_eq!(err.status().as_u16(), 503);
        assert_eq!(err.kind(), "not_ready");
        assert!(err.public_message().contains("shutting down"));
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_millis() {
        let ts = now_rfc3339();
        assert!(ts.ends_with('Z'), "{ts}");
        assert_eq!(ts.len(), "2025-01-31T12:00:00.123Z".len(), "{ts}");
        let parsed = OffsetDateTime::parse(&ts, &time::format_description::well_known::Rfc3339);
        assert!(parsed.is_ok());
        let t = time::macros::datetime!(2025-01-02 03:04:05.000 UTC);
        assert_eq!(rfc3339_millis(t), "2025-01-02T03:04:05.000Z");
    }
}
