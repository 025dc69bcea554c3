//! The infrastructure endpoints (spec 4.2), open without authentication:
//! `GET /` -> `{"status":"ok","message","version"}` and
//! `GET /health` -> `{"status":"healthy","timestamp","version"}`.
//!
//! `/health` answers `healthy` (the spec leaves `ok` vs `healthy` open; the
//! container health check and `gateway healthcheck` rely on `healthy`).

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::config::GatewayMode;
use crate::state::AppState;

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
