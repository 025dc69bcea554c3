//! Sending one upstream request with the retry policy (protocol doc 1.8, fixing
//! 10.1 items 5 and 7):
//!
//! - 429, 5xx, connection errors and header timeouts are retried up to
//!   `http_max_retries` times with exponential backoff (base, 2x base, 4x base,
//!   ...) plus up to 10 % jitter;
//! - `Retry-After` (seconds) is honoured: the wait is at least that long; one
//!   longer than the cap is not waited for, the 429 goes back to the caller with it;
//! - quota 429s (`MONTHLY_REQUEST_COUNT`, `DAILY_REQUEST_COUNT`, ...) and other
//!   4xx are not retried;
//! - a 403 (except account-level reasons) calls the refresh hook once and
//!   retries once, outside the retry budget.
//!
//! With traces on, each attempt is a client span of the request's server
//! span and carries it upstream in `traceparent`; off, the request is sent
//! as built.
//!
//! The request is rebuilt for every attempt by a closure, so each attempt gets
//! the current access token and the pipeline can reuse [`send_with_retry`] for
//! its own first-token-timeout retries. Requests go through the hot path's
//! client ([`HttpClient`]).

use std::future::Future;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use bytes::Bytes;
use rand::Rng;

use super::client::{HttpClient, Response};

use crate::config::{RuntimeConfig, Tuning};
use crate::error::GatewayError;
use crate::telemetry::traces::{ClientSpan, ServerSpan};
use crate::telemetry::{self, UpstreamFailure};

/// How many bytes of an error body are read (enough for any JSON error).
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// 429 reasons that mean a plan quota is used up: retrying cannot help.
const QUOTA_REASONS: [&str; 4] = [
    "MONTHLY_REQUEST_COUNT",
    "DAILY_REQUEST_COUNT",
    "OVERAGE_REQUEST_LIMIT_EXCEEDED",
    "CONVERSATION_LIMIT_EXCEEDED",
];

/// 403 reasons that are about the account, not the token: no refresh.
const ACCOUNT_403_REASONS: [&str; 2] = ["TEMPORARILY_SUSPENDED", "FEATURE_NOT_SUPPORTED"];

/// The retry settings of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (`http_max_retries`).
    pub max_retries: u32,
    /// First backoff delay; doubled for each further retry.
    pub base_delay: Duration,
    /// Upper bound of one backoff delay (before jitter).
    pub max_delay: Duration,
    /// A `Retry-After` above this is not waited for.
    pub retry_after_cap: Duration,
    /// Time allowed for the status line and headers of one attempt.
    pub request_timeout: Duration,
}

impl RetryPolicy {
    /// The policy of the current runtime configuration.
    pub fn new(runtime: &RuntimeConfig, tuning: &Tuning) -> Self {
        RetryPolicy {
            max_retries: runtime.http_max_retries,
            base_delay: tuning.retry_base_delay,
            max_delay: tuning.retry_max_delay,
            retry_after_cap: tuning.retry_after_cap,
            request_timeout: runtime.http_request_timeout,
        }
    }

    /// Backoff before retry number `retry` (0 for the first retry), without jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(20)).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// What to do with an upstream status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusClass {
    /// 2xx: hand the response to the caller.
    Success,
    /// Transient (429 throttling, 5xx): retry with backoff.
    Retryable,
    /// 403 with a token problem: refresh the credentials, retry once.
    RefreshAndRetry,
    /// Anything else (quota 429, 4xx): return the error at once.
    Fatal,
}

/// Classify a status and the `reason` of its error body.
pub fn classify(status: StatusCode, reason: Option<&str>) -> StatusClass {
    if status.is_success() {
        return StatusClass::Success;
    }
    match status.as_u16() {
        429 => {
            if reason.is_some_and(|r| QUOTA_REASONS.contains(&r)) {
                StatusClass::Fatal
            } else {
                StatusClass::Retryable
            }
        }
        403 => {
            let account_level = reason.is_some_and(|r| {
                ACCOUNT_403_REASONS.contains(&r) || r.starts_with("UNAUTHORIZED_")
            });
            if account_level {
                StatusClass::Fatal
            } else {
                StatusClass::RefreshAndRetry
            }
        }
        500..=599 => StatusClass::Retryable,
        _ => StatusClass::Fatal,
    }
}

/// Why an upstream call failed, after the retries it was allowed.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The upstream answered with an error status.
    #[error("upstream answered {status}: {message}")]
    Status {
        status: StatusCode,
        /// The upstream's own message (`message` of its JSON body, else its text).
        message: String,
        /// The `reason` of its JSON body (`INVALID_MODEL_ID`, `MONTHLY_REQUEST_COUNT`, ...).
        reason: Option<String>,
        retry_after: Option<Duration>,
    },
    /// No answer: the connection failed or the headers did not come in time.
    #[error("upstream unreachable: {message}")]
    Transport { message: String, timeout: bool },
    /// The request could not be built (e.g. no valid credentials).
    #[error(transparent)]
    Gateway(#[from] GatewayError),
}

impl From<UpstreamError> for GatewayError {
    fn from(err: UpstreamError) -> Self {
        match err {
            UpstreamError::Status {
                status,
                message,
                retry_after,
                ..
            } => GatewayError::Upstream {
                status,
                message,
                retry_after: retry_after.map(|d| d.as_secs().max(1)),
            },
            UpstreamError::Transport { message, timeout } => GatewayError::Upstream {
                status: if timeout {
                    StatusCode::GATEWAY_TIMEOUT
                } else {
                    StatusCode::BAD_GATEWAY
                },
                message: format!("upstream unreachable: {message}"),
                retry_after: None,
            },
            UpstreamError::Gateway(e) => e,
        }
    }
}

/// `message` and `reason` of an upstream error body: JSON
/// `{"message","reason"}` (also `Message`, `error_description`, or a nested
/// `{"error":{"message"}}`), else the trimmed text, else the status phrase.
pub fn parse_error_body(status: StatusCode, body: &[u8]) -> (String, Option<String>) {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(body) {
        let text = |key: &str| map.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let reason = text("reason");
        let message = text("message")
            .or_else(|| text("Message"))
            .or_else(|| text("error_description"))
            .or_else(|| {
                map.get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(|m| m.as_str())
                    .map(str::to_owned)
            })
            .or_else(|| text("error"));
        if let Some(message) = message.filter(|m| !m.trim().is_empty()) {
            return (message, reason);
        }
        if let Some(reason) = reason {
            return (reason.clone(), Some(reason));
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        let phrase = status.canonical_reason().unwrap_or("error");
        return (format!("{} {phrase}", status.as_u16()), None);
    }
    let mut message: String = text.chars().take(500).collect();
    if message.len() < text.len() {
        message.push_str("...");
    }
    // A quota reason may come in a non-JSON body too.
    let reason = QUOTA_REASONS
        .iter()
        .find(|r| text.contains(*r))
        .map(|r| (*r).to_owned());
    (message, reason)
}

/// `Retry-After` in seconds (the HTTP-date form is not used by the upstreams).
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(axum::http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

fn jitter(delay: Duration) -> Duration {
    let max_extra = delay.as_millis() as u64 / 10;
    if max_extra == 0 {
        return delay;
    }
    delay + Duration::from_millis(rand::thread_rng().gen_range(0..=max_extra))
}

/// Read at most [`ERROR_BODY_LIMIT`] bytes of an error response.
async fn read_error_body(mut resp: Response) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(ERROR_BODY_LIMIT);
    body
}

/// One attempt's request: what [`send_with_retry`]'s `build` makes.
#[derive(Debug)]
pub struct Outgoing {
    pub method: Method,
    pub url: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Outgoing {
    /// `GET url` without a body.
    pub fn get(url: Uri, headers: HeaderMap) -> Self {
        Outgoing {
            method: Method::GET,
            url,
            headers,
            body: Bytes::new(),
        }
    }

    /// `POST url` with `body`.
    pub fn post(url: Uri, headers: HeaderMap, body: Bytes) -> Self {
        Outgoing {
            method: Method::POST,
            url,
            headers,
            body,
        }
    }
}

/// One attempt's result before the policy decides.
enum Attempt {
    Response(Response),
    Failed(UpstreamError),
}

async fn attempt(client: &HttpClient, request: Outgoing, timeout: Duration) -> Attempt {
    let Outgoing {
        method,
        url,
        headers,
        body,
    } = request;
    match tokio::time::timeout(timeout, client.send(method, url, headers, body)).await {
        Err(_) => Attempt::Failed(UpstreamError::Transport {
            message: format!("no response headers within {}s", timeout.as_secs()),
            timeout: true,
        }),
        Ok(Err(e)) => Attempt::Failed(UpstreamError::Transport {
            message: e.message,
            timeout: e.timeout,
        }),
        Ok(Ok(resp)) => Attempt::Response(resp),
    }
}

/// The attempt's client span, child of `server`, carried by `request` in
/// `traceparent`.
fn traced(request: &mut Outgoing, server: &ServerSpan, provider: &'static str) -> ClientSpan {
    let span = server.client(provider, request.url.host().unwrap_or_default());
    if let Ok(value) = HeaderValue::from_str(&span.traceparent()) {
        request.headers.insert("traceparent", value);
    }
    span
}

/// Send one upstream request of `provider` under `policy`. Each failed
/// attempt and each retry is counted in the provider's metrics.
///
/// `build(attempt)` makes the request of each attempt (0-based); `on_forbidden`
/// refreshes the credentials after a 403 (called at most once). Returns the
/// successful response with its headers read and its body untouched.
pub async fn send_with_retry<B, BF, R, RF>(
    provider: &'static str,
    policy: &RetryPolicy,
    client: &HttpClient,
    mut build: B,
    mut on_forbidden: R,
) -> Result<Response, UpstreamError>
where
    B: FnMut(u32) -> BF,
    BF: Future<Output = Result<Outgoing, GatewayError>>,
    R: FnMut() -> RF,
    RF: Future<Output = Result<(), GatewayError>>,
{
    let mut retries_used = 0u32;
    let mut refreshed = false;
    let mut attempt_no = 0u32;
    let provider_index = telemetry::provider_index(provider);
    let server_span = telemetry::traces::current();
    loop {
        let mut request = build(attempt_no).await?;
        attempt_no += 1;
        let client_span = server_span
            .as_ref()
            .map(|server| traced(&mut request, server, provider));
        let (failure, class) = match attempt(client, request, policy.request_timeout).await {
            Attempt::Response(resp) => {
                let status = resp.status();
                if let Some(span) = client_span {
                    span.answered(status.as_u16());
                }
                if status.is_success() {
                    return Ok(resp);
                }
                let retry_after = parse_retry_after(resp.headers());
                let request_id = resp
                    .headers()
                    .get("x-amzn-requestid")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let body = read_error_body(resp).await;
                let (message, reason) = parse_error_body(status, &body);
                tracing::warn!(
                    status = status.as_u16(),
                    reason = reason.as_deref().unwrap_or(""),
                    upstream_request_id = request_id.as_deref().unwrap_or(""),
                    attempt = attempt_no,
                    "upstream error: {}",
                    crate::logging::mask_text(&message)
                );
                let class = classify(status, reason.as_deref());
                telemetry::meters()
                    .upstream_error(provider_index, UpstreamFailure::of_status(status.as_u16()));
                (
                    UpstreamError::Status {
                        status,
                        message,
                        reason,
                        retry_after,
                    },
                    class,
                )
            }
            Attempt::Failed(e) => {
                let timeout = matches!(e, UpstreamError::Transport { timeout: true, .. });
                if let Some(span) = client_span {
                    span.failed(if timeout { "timeout" } else { "connect" });
                }
                telemetry::meters().upstream_error(
                    provider_index,
                    if timeout {
                        UpstreamFailure::Timeout
                    } else {
                        UpstreamFailure::Connect
                    },
                );
                tracing::warn!(attempt = attempt_no, "upstream call failed: {e}");
                (e, StatusClass::Retryable)
            }
        };
        match class {
            StatusClass::Success | StatusClass::Fatal => return Err(failure),
            StatusClass::RefreshAndRetry => {
                if refreshed {
                    return Err(failure);
                }
                refreshed = true;
                if let Err(e) = on_forbidden().await {
                    tracing::warn!("credential refresh after a 403 failed: {e}");
                    return Err(failure);
                }
            }
            StatusClass::Retryable => {
                if retries_used >= policy.max_retries {
                    return Err(failure);
                }
                let retry_after = match &failure {
                    UpstreamError::Status { retry_after, .. } => *retry_after,
                    _ => None,
                };
                if retry_after.is_some_and(|ra| ra > policy.retry_after_cap) {
                    // The caller (and its client) should wait, not us.
                    return Err(failure);
                }
                let delay =
                    jitter(policy.backoff(retries_used)).max(retry_after.unwrap_or_default());
                retries_used += 1;
                telemetry::meters().upstream_retry(provider_index);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
