//! `DEBUG_MODE` body logging for `/v1` calls: `errors` logs the request body of
//! a failed call, `all` logs every request body. Bodies are masked first
//! (`logging::mask_secrets`), so keys and tokens never reach the log, and the
//! line carries the request id through the request span.

use axum::response::Response;

use crate::config::DebugMode;
use crate::error::GatewayError;
use crate::state::AppState;

/// Longest body logged, in bytes; the rest is elided.
const MAX_LOGGED: usize = 64 * 1024;

/// Log the request body as the live `debug_mode` asks.
pub fn log_exchange(app: &AppState, body: &[u8], outcome: &Result<Response, GatewayError>) {
    let mode = app.runtime().debug_mode;
    let failed = outcome.is_err();
    let wanted = match mode {
        DebugMode::Off => false,
        DebugMode::Errors => failed,
        DebugMode::All => true,
    };
    if !wanted {
        return;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(MAX_LOGGED)]);
    let masked = crate::logging::mask_secrets(&text);
    let elided = body.len().saturating_sub(MAX_LOGGED);
    match outcome {
        Err(err) => tracing::info!(
            status = err.status().as_u16(),
            elided_bytes = elided,
            "request body of a failed call: {masked}"
        ),
        Ok(resp) => tracing::info!(
            status = resp.status().as_u16(),
            elided_bytes = elided,
            "request body: {masked}"
        ),
    }
}
