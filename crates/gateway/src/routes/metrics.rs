//! `GET /metrics` (interfaces-full.md 6): every metric of [`crate::telemetry`]
//! in the Prometheus text format 0.0.4. Open to anyone unless
//! `METRICS_TOKEN` is set; then only to `Authorization: Bearer <token>`
//! (401 otherwise). No label names a user or a key.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::auth::keys::ApiKeyHash;
use crate::error::{AuthFailure, GatewayError};
use crate::state::AppState;
use crate::telemetry::{self, meters::ScrapeValues};

/// The content type of the text format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /metrics`.
pub(crate) async fn scrape(
    State(app): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, GatewayError> {
    if let Some(token) = &app.config().metrics_token {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        // Compared as digests: how long the comparison takes tells nothing
        // about the token.
        if presented.map(ApiKeyHash::of) != Some(ApiKeyHash::of(token.expose())) {
            return Err(GatewayError::Auth(AuthFailure::MetricsToken));
        }
    }
    let values = ScrapeValues {
        usage_queue_depth: app.usage_sink().queued() as u64,
        usage_dropped: app.usage_sink().dropped(),
        guardrail_fail_opens: app.guardrails().counters().fail_opens,
        runtime_tasks: tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks() as u64,
    };
    let body = telemetry::meters().render(values);
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT))],
        body,
    )
        .into_response())
}
