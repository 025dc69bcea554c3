//! `GatewayError`: the one error of the service and its HTTP form (spec part 7):
//! `{"error":{"message":..., "type":...}}` with the status of its kind.
//!
//! Which variant to use:
//! - the client sent something wrong: `Validation`, `InvalidModel`, `PayloadTooLarge`;
//! - the client is not allowed: `Auth` (401), `Forbidden` (403);
//! - an upstream answered with an error or could not be reached: `Upstream`
//!   (its status is kept; a 429 keeps `Retry-After`);
//! - our own bug or an I/O failure: `Internal` (the client sees a generic
//!   message, the detail goes to the log with the request id);
//! - the deployment is not ready: `Config`, `SetupRequired`, `NotReady`.
//!
//! `IntoResponse` also stores the error in the response extensions (as
//! [`LoggedError`]) so the access-log middleware records it inside the request span.

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Why client authentication failed; the message says which (spec 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization: Bearer` and no `x-api-key` header.
    MissingKey,
    /// A key was presented and it is not valid.
    InvalidKey,
    /// A key was presented and it expired (its `expires_at` has passed).
    ExpiredKey,
    /// Web UI: no `gw_session` cookie, or its session has expired or ended.
    NoSession,
    /// Web UI sign-in: wrong email or password (which one is not said).
    BadCredentials,
    /// Web UI sign-in: the second step's code or login token is not valid.
    BadSecondFactor,
    /// `GET /metrics` without the `METRICS_TOKEN` it requires.
    MetricsToken,
}

/// The service error.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// 400 `validation_error`: invalid body, missing field, invalid value.
    #[error("{0}")]
    Validation(String),
    /// 400 `invalid_model`: the model name cannot be resolved.
    #[error("{0}")]
    InvalidModel(String),
    /// 401 `auth_error`.
    #[error("{}", auth_message(*.0))]
    Auth(AuthFailure),
    /// 403 `forbidden`.
    #[error("{0}")]
    Forbidden(String),
    /// The caller has no account for the provider the request needs; the
    /// message says how to connect one (403 `provider_not_connected`).
    #[error("{0}")]
    ProviderNotConnected(String),
    /// An administrator switched the provider off (403 `provider_disabled`).
    #[error("{0}")]
    ProviderDisabled(String),
    /// The resolved model is disabled in the model registry (403
    /// `model_disabled`), refused before any upstream call.
    #[error("{0}")]
    ModelDisabled(String),
    /// A gateway rate limit of the key or its user (429 `rate_limited`).
    #[error("{message}")]
    RateLimited { message: String, retry_after: u64 },
    /// The key's or its user's budget is spent (429 `budget_exceeded`).
    #[error("{0}")]
    BudgetExceeded(String),
    /// Content a guardrail blocked (403 `guardrail_blocked`): at `stage`
    /// (`input` or `output`), with the violations (interfaces-full.md 5).
    #[error("Content blocked by guardrail policy ({stage})")]
    GuardrailBlocked {
        stage: &'static str,
        violations: serde_json::Value,
    },
    /// 409 `conflict`: the request clashes with the current state (an email
    /// already taken, the last admin, 2FA already enabled).
    #[error("{0}")]
    Conflict(String),
    /// 423 `account_locked`: too many failed sign-ins for this email (spec
    /// 5.7); the body carries `retry_after_secs`.
    #[error("too many failed sign-in attempts; try again in {retry_after_secs} seconds")]
    AccountLocked { retry_after_secs: u64 },
    /// 404 `not_found`.
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 408 `request_timeout`: the client did not send its body within
    /// `body_read_timeout`.
    #[error("the request body did not arrive within {0} seconds")]
    RequestTimeout(u64),
    /// 413 `request_too_large`: the body exceeds `max_request_body` (bytes, when known).
    #[error("{}", too_large_message(*.limit))]
    PayloadTooLarge { limit: Option<u64> },
    /// `upstream_api_error` with the upstream's status (502 when it could not be reached).
    #[error("{message}")]
    Upstream {
        status: StatusCode,
        message: String,
        /// Seconds, forwarded as `Retry-After` on a 429.
        retry_after: Option<u64>,
    },
    /// 500 `internal_error`: the client sees a generic message.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
    /// 500 `config_error`: the deployment is misconfigured.
    #[error("{0}")]
    Config(String),
    /// 503 `setup_required`: full deployment without its first admin.
    #[error("setup is not complete")]
    SetupRequired,
    /// 503 `not_ready`: this replica should get no traffic now (`GET /ready`:
    /// its store does not answer, or it is shutting down).
    #[error("{0}")]
    NotReady(String),
}

fn too_large_message(limit: Option<u64>) -> String {
    match limit {
        Some(limit) => format!("request body is larger than the limit of {limit} bytes"),
        None => "request body is too large".to_owned(),
    }
}

fn auth_message(failure: AuthFailure) -> &'static str {
    match failure {
        AuthFailure::MissingKey => {
            "missing API key: send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'"
        }
        AuthFailure::InvalidKey => "invalid API key",
        AuthFailure::ExpiredKey => "this API key has expired",
        AuthFailure::NoSession => "not signed in, or the session has expired",
        AuthFailure::BadCredentials => "invalid email or password",
        AuthFailure::BadSecondFactor => "invalid or expired code or login token",
        AuthFailure::MetricsToken => {
            "the metrics need the scrape token: send 'Authorization: Bearer <METRICS_TOKEN>'"
        }
    }
}

impl GatewayError {
    pub fn validation(message: impl Into<String>) -> Self {
        GatewayError::Validation(message.into())
    }

    pub fn internal(err: impl Into<anyhow::Error>) -> Self {
        GatewayError::Internal(err.into())
    }

    /// An upstream error that keeps the upstream's status.
    pub fn upstream(status: StatusCode, message: impl Into<String>) -> Self {
        GatewayError::Upstream {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            GatewayError::Validation(_) => StatusCode::BAD_REQUEST,
            GatewayError::InvalidModel(_) => StatusCode::BAD_REQUEST,
            GatewayError::Auth(_) => StatusCode::UNAUTHORIZED,
            GatewayError::Forbidden(_)
            | GatewayError::ProviderNotConnected(_)
            | GatewayError::ProviderDisabled(_)
            | GatewayError::ModelDisabled(_)
            | GatewayError::GuardrailBlocked { .. } => StatusCode::FORBIDDEN,
            GatewayError::RateLimited { .. } | GatewayError::BudgetExceeded(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            GatewayError::Conflict(_) => StatusCode::CONFLICT,
            GatewayError::AccountLocked { .. } => StatusCode::LOCKED,
            GatewayError::NotFound(_) => StatusCode::NOT_FOUND,
            GatewayError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            GatewayError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            GatewayError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            GatewayError::Upstream { status, .. } => *status,
            GatewayError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            GatewayError::Config(_) => StatusCode::INTERNAL_SERVER_ERROR,
            GatewayError::SetupRequired | GatewayError::NotReady(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }

    /// The `type` of the error body.
    pub fn kind(&self) -> &'static str {
        match self {
            GatewayError::Validation(_) => "validation_error",
            GatewayError::InvalidModel(_) => "invalid_model",
            GatewayError::Auth(_) => "auth_error",
            GatewayError::Forbidden(_) => "forbidden",
            GatewayError::ProviderNotConnected(_) => "provider_not_connected",
            GatewayError::ProviderDisabled(_) => "provider_disabled",
            GatewayError::ModelDisabled(_) => "model_disabled",
            GatewayError::RateLimited { .. } => "rate_limited",
            GatewayError::BudgetExceeded(_) => "budget_exceeded",
            GatewayError::GuardrailBlocked { .. } => "guardrail_blocked",
            GatewayError::Conflict(_) => "conflict",
            GatewayError::AccountLocked { .. } => "account_locked",
            GatewayError::NotFound(_) => "not_found",
            GatewayError::MethodNotAllowed => "method_not_allowed",
            GatewayError::RequestTimeout(_) => "request_timeout",
            GatewayError::PayloadTooLarge { .. } => "request_too_large",
            GatewayError::Upstream { .. } => "upstream_api_error",
            GatewayError::Internal(_) => "internal_error",
            GatewayError::Config(_) => "config_error",
            GatewayError::SetupRequired => "setup_required",
            GatewayError::NotReady(_) => "not_ready",
        }
    }

    /// The message the client sees (internal detail is withheld).
    pub fn public_message(&self) -> String {
        match self {
            GatewayError::Internal(_) => {
                "An internal error occurred; the x-request-id header identifies it in the server log."
                    .to_owned()
            }
            GatewayError::SetupRequired => {
                "Setup is not complete: open /_ui/ to create the first admin account.".to_owned()
            }
            other => other.to_string(),
        }
    }

    /// `{"error":{"message":..., "type":...}}`; a lockout adds
    /// `"retry_after_secs"` beside `error` (interfaces.md 6).
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                message: self.public_message(),
                kind: self.kind(),
                stage: match self {
                    GatewayError::GuardrailBlocked { stage, .. } => Some(stage),
                    _ => None,
                },
                violations: match self {
                    GatewayError::GuardrailBlocked { violations, .. } => Some(violations.clone()),
                    _ => None,
                },
            },
            retry_after_secs: match self {
                GatewayError::AccountLocked { retry_after_secs } => Some(*retry_after_secs),
                _ => None,
            },
        }
    }

    /// `Retry-After` seconds to send with the response, if any.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            GatewayError::Upstream { retry_after, .. } => *retry_after,
            GatewayError::AccountLocked { retry_after_secs } => Some(*retry_after_secs),
            GatewayError::RateLimited { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }
}

/// A provider's error reported inside its answer (an error event, a failed
/// stream), before anything reached the client: a plain HTTP error with the
/// provider's status (502 when it is not a valid status) and message.
impl From<translate::StreamError> for GatewayError {
    fn from(err: translate::StreamError) -> Self {
        GatewayError::Upstream {
            status: StatusCode::from_u16(err.status).unwrap_or(StatusCode::BAD_GATEWAY),
            message: err.message,
            retry_after: None,
        }
    }
}

/// The body of an error answer (OpenAI's error shape; `/v1/messages`
/// writes Anthropic's own).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ApiError"))]
pub struct ErrorBody {
    pub error: ErrorDetail,
    /// A locked account: seconds until it may sign in again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub retry_after_secs: Option<u64>,
}

/// What went wrong: a message for people, a type for programs.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ErrorDetail {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// A guardrail block: `input` or `output`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub stage: Option<&'static str>,
    /// A guardrail block: what the service found.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional, type = "Array<Violation>"))]
    pub violations: Option<serde_json::Value>,
}

/// What the access log needs of an error; stored in the response extensions.
#[derive(Debug, Clone)]
pub(crate) struct LoggedError(pub Arc<GatewayError>);

impl IntoResponse for GatewayError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if matches!(
            self,
            GatewayError::Auth(
                AuthFailure::MissingKey
                    | AuthFailure::InvalidKey
                    | AuthFailure::ExpiredKey
                    | AuthFailure::MetricsToken
            )
        ) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
            .extensions_mut()
            .insert(LoggedError(Arc::new(self)));
        response
    }
}

impl From<translate::TranslateError> for GatewayError {
    fn from(err: translate::TranslateError) -> Self {
        match err {
            translate::TranslateError::Invalid { .. } => GatewayError::Validation(err.to_string()),
            translate::TranslateError::Upstream(message) => GatewayError::Upstream {
                status: StatusCode::BAD_GATEWAY,
                message: format!("upstream protocol error: {message}"),
                retry_after: None,
            },
        }
    }
}

impl From<wire::validate::ValidationError> for GatewayError {
    fn from(err: wire::validate::ValidationError) -> Self {
        GatewayError::Validation(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn body_of(resp: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn status_and_kind_of_every_variant() {
        let cases: Vec<(GatewayError, u16, &str)> = vec![
            (GatewayError::validation("x"), 400, "validation_error"),
            (GatewayError::InvalidModel("m".into()), 400, "invalid_model"),
            (
                GatewayError::Auth(AuthFailure::MissingKey),
                401,
                "auth_error",
            ),
            (GatewayError::Forbidden("f".into()), 403, "forbidden"),
            (
                GatewayError::ProviderNotConnected("c".into()),
                403,
                "provider_not_connected",
            ),
            (
                GatewayError::ProviderDisabled("d".into()),
                403,
                "provider_disabled",
            ),
            (
                GatewayError::ModelDisabled("m".into()),
                403,
                "model_disabled",
            ),
            (
                GatewayError::GuardrailBlocked {
                    stage: "input",
                    violations: json!([]),
                },
                403,
                "guardrail_blocked",
            ),
            (GatewayError::Conflict("c".into()), 409, "conflict"),
            (
                GatewayError::AccountLocked {
                    retry_after_secs: 5,
                },
                423,
                "account_locked",
            ),
            (
                GatewayError::Auth(AuthFailure::NoSession),
                401,
                "auth_error",
            ),
            (GatewayError::NotFound("n".into()), 404, "not_found"),
            (GatewayError::MethodNotAllowed, 405, "method_not_allowed"),
            (
                GatewayError::PayloadTooLarge { limit: Some(10) },
                413,
                "request_too_large",
            ),
            (
                GatewayError::upstream(StatusCode::TOO_MANY_REQUESTS, "slow"),
                429,
                "upstream_api_error",
            ),
            (
                GatewayError::internal(anyhow::anyhow!("db")),
                500,
                "internal_error",
            ),
            (GatewayError::Config("c".into()), 500, "config_error"),
            (GatewayError::SetupRequired, 503, "setup_required"),
            (GatewayError::NotReady("n".into()), 503, "not_ready"),
        ];
        for (err, status, kind) in cases {
            assert_eq!(err.status().as_u16(), status, "{err:?}");
            assert_eq!(err.kind(), kind, "{err:?}");
        }
    }

    #[tokio::test]
    async fn body_has_exactly_message_and_type() {
        let resp =
            GatewayError::InvalidModel("model 'gpt-9' is not available".into()).into_response();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.extensions().get::<LoggedError>().is_some());
        let body = body_of(resp).await;
        assert_eq!(
            body,
            json!({"error": {"message": "model 'gpt-9' is not available", "type": "invalid_model"}})
        );
    }

    #[tokio::test]
    async fn internal_detail_stays_out_of_the_body() {
        let resp =
            GatewayError::internal(anyhow::anyhow!("password=hunter2 at db")).into_response();
        let logged = resp.extensions().get::<LoggedError>().unwrap().clone();
        assert!(logged.0.to_string().contains("hunter2"));
        let body = body_of(resp).await;
        assert!(!body.to_string().contains("hunter2"));
        assert_eq!(body["error"]["type"], "internal_error");
    }

    #[tokio::test]
    async fn auth_messages_say_missing_or_invalid() {
        let missing = body_of(GatewayError::Auth(AuthFailure::MissingKey).into_response()).await;
        let invalid = body_of(GatewayError::Auth(AuthFailure::InvalidKey).into_response()).await;
        assert!(missing["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("missing API key"));
        assert_eq!(invalid["error"]["message"], "invalid API key");
    }

    #[test]
    fn rate_limit_keeps_retry_after() {
        let resp = GatewayError::Upstream {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: "Too many requests".into(),
            retry_after: Some(7),
        }
        .into_response();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "7");
    }

    #[tokio::test]
    async fn conversions_from_the_pure_crates() {
        let e: GatewayError =
            translate::TranslateError::invalid("messages", "must not be empty").into();
        assert_eq!(e.kind(), "validation_error");
        assert_eq!(e.public_message(), "messages: must not be empty");
        let e: GatewayError = translate::TranslateError::Upstream("bad frame".into()).into();
        assert_eq!(e.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(e.kind(), "upstream_api_error");
        let e: GatewayError =
            wire::validate::ValidationError::new("temperature", "must be 0.0-2.0").into();
        assert_eq!(e.public_message(), "temperature: must be 0.0-2.0");
    }

    #[tokio::test]
    async fn lockout_body_carries_retry_after_secs() {
        let resp = GatewayError::AccountLocked {
            retry_after_secs: 42,
        }
        .into_response();
        assert_eq!(resp.status(), StatusCode::LOCKED);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "42");
        let body = body_of(resp).await;
        assert_eq!(body["retry_after_secs"], 42);
        assert_eq!(body["error"]["type"], "account_locked");
    }

    #[tokio::test]
    async fn session_failures_do_not_ask_for_a_bearer_key() {
        let resp = GatewayError::Auth(AuthFailure::NoSession).into_response();
        assert!(resp.headers().get(header::WWW_AUTHENTICATE).is_none());
        let resp = GatewayError::Auth(AuthFailure::MissingKey).into_response();
        assert_eq!(resp.headers()[header::WWW_AUTHENTICATE], "Bearer");
    }

    #[tokio::test]
    async fn setup_required_directs_to_the_ui() {
        let body = body_of(GatewayError::SetupRequired.into_response()).await;
        assert!(body["error"]["message"].as_str().unwrap().contains("/_ui/"));
    }
}
