//! The simulated guardrail service (the AWS Bedrock `ApplyGuardrail` API),
//! under [`PREFIX`] on the API listener:
//! `POST /guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply`.
//!
//! Each call is checked as the service does it: its SigV4 signature
//! ([`sigv4`], service `bedrock`, any well-formed region, a key of
//! [`GuardrailConfig::credentials`], `x-amz-date` within 5 minutes; else 403),
//! then the path and body ([`request`]; else 400 `ValidationException`).
//! Its answer comes from the `sim: guardrail …` lines of its texts
//! ([`scenario`]) that apply to its source, built by [`assess`]; errors are
//! [`error`]. Calls are counted per source ([`GuardrailStats`]).

pub mod assess;
pub mod config;
pub mod error;
pub mod request;
pub mod scenario;
pub mod sigv4;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use axum::{Extension, Router};
use bytes::Bytes;

use crate::body::{json_body, Step};
use crate::http::unix_now;
use crate::recorder::ReceivedBody;
use crate::state::lock;
use config::GuardrailConfig;
use error::GuardrailError;
use scenario::{GuardrailKind, GuardrailScenario, Source};
use sigv4::SignableRequest;

/// Path prefix of the guardrail service on the API listener
/// (`GUARDRAIL_ENDPOINT = {base_url}/guardrail-service`).
pub const PREFIX: &str = "/guardrail-service";
/// The service name of the signature's credential scope.
pub const SERVICE: &str = "bedrock";
/// `guardrailProcessingLatency` of an answer without delays, in milliseconds.
const BASE_LATENCY_MS: u64 = 12;

/// How many calls the guardrail service received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GuardrailStats {
    /// Calls whose body named `source: INPUT` (whatever the answer).
    pub input: u64,
    /// Calls whose body named `source: OUTPUT` (whatever the answer).
    pub output: u64,
    /// Calls answered with an error (signature, validation, `status` line).
    pub errors: u64,
}

#[derive(Debug, Default)]
struct Counters {
    input: AtomicU64,
    output: AtomicU64,
    errors: AtomicU64,
}

/// The guardrail service's state: its settings, the `times` counters of its
/// lines, and its call counters.
#[derive(Debug)]
pub(crate) struct GuardrailState {
    settings: Mutex<GuardrailConfig>,
    times: Mutex<HashMap<String, u32>>,
    counters: Counters,
}

impl GuardrailState {
    pub fn new(config: GuardrailConfig) -> Self {
        GuardrailState {
            settings: Mutex::new(config),
            times: Mutex::new(HashMap::new()),
            counters: Counters::default(),
        }
    }

    pub fn settings(&self) -> MutexGuard<'_, GuardrailConfig> {
        lock(&self.settings)
    }

    pub fn stats(&self) -> GuardrailStats {
        let c = &self.counters;
        GuardrailStats {
            input: c.input.load(Ordering::SeqCst),
            output: c.output.load(Ordering::SeqCst),
            errors: c.errors.load(Ordering::SeqCst),
        }
    }

    /// Forget the call counts.
    pub fn clear_stats(&self) {
        let c = &self.counters;
        for n in [&c.input, &c.output, &c.errors] {
            n.store(0, Ordering::SeqCst);
        }
    }

    /// Forget the `times` counters.
    pub fn reset(&self) {
        lock(&self.times).clear();
    }

    /// The lines that apply to a call of `source`: their source matches and
    /// their `times` (counted per key) are not used up.
    fn admit(&self, source: Source, lines: Vec<GuardrailScenario>) -> Vec<GuardrailScenario> {
        let mut times = lock(&self.times);
        lines
            .into_iter()
            .filter(|line| line.applies_to(source))
            .filter(|line| {
                let Some(limit) = line.times else { return true };
                let used = times.entry(line.counter_key()).or_insert(0);
                *used += 1;
                *used <= limit
            })
            .collect()
    }
}

/// Routes of the guardrail service, with their full paths.
pub(crate) fn router(state: Arc<GuardrailState>) -> Router {
    let apply_path = format!("{PREFIX}/guardrail/{{id}}/version/{{version}}/apply");
    Router::new()
        .route(&apply_path, post(apply))
        .route(&format!("{PREFIX}/{{*rest}}"), any(unknown))
        .with_state(state)
}

async fn unknown() -> Response {
    GuardrailError::unknown_operation().into_response()
}

/// The parts of a call the handler reads.
struct Call {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: ReceivedBody,
}

async fn apply(
    State(state): State<Arc<GuardrailState>>,
    Path((id, version)): Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    let counter = match request::source_of(body.json.as_deref()) {
        Some(Source::Input) => Some(&state.counters.input),
        Some(Source::Output) => Some(&state.counters.output),
        None => None,
    };
    if let Some(n) = counter {
        n.fetch_add(1, Ordering::SeqCst);
    }
    let call = Call {
        method,
        uri,
        headers,
        body,
    };
    let res = match answer(&state, &id, &version, &call).await {
        Ok(res) => res,
        Err(e) => e.into_response(),
    };
    if !res.status().is_success() {
        state.counters.errors.fetch_add(1, Ordering::SeqCst);
    }
    res
}

/// Check the signature (or only its shape, when any is accepted).
fn authenticate(state: &GuardrailState, call: &Call) -> Result<(), GuardrailError> {
    let mut headers: Vec<(&str, &str)> = call
        .headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
        .collect();
    // HTTP/2 carries the host as the authority.
    if !call.headers.contains_key(header::HOST) {
        if let Some(authority) = call.uri.authority() {
            headers.push(("host", authority.as_str()));
        }
    }
    let req = SignableRequest {
        method: call.method.as_str(),
        path: call.uri.path(),
        query: call.uri.query().unwrap_or(""),
        headers: &headers,
        body: &call.body.raw,
    };
    let settings = state.settings();
    if settings.accept_any_signature {
        sigv4::read(&req)?;
    } else {
        sigv4::verify(&req, SERVICE, |id| settings.secret_of(id), unix_now())?;
    }
    Ok(())
}

/// The longest of the lines' delays.
fn longest(lines: &[GuardrailScenario], delay: fn(&GuardrailScenario) -> Duration) -> Duration {
    lines.iter().map(delay).max().unwrap_or_default()
}

async fn answer(
    state: &GuardrailState,
    id: &str,
    version: &str,
    call: &Call,
) -> Result<Response, GuardrailError> {
    authenticate(state, call)?;
    request::check_path(id, version)?;
    let req = request::parse_body(call.body.json.as_deref())?;
    let lines = scenario::parse_lines(req.texts.iter().map(String::as_str))
        .map_err(|e| GuardrailError::validation(e.to_string()))?;
    let lines = state.admit(req.source, lines);
    let header_delay = longest(&lines, |l| l.header_delay);
    let first_delay = longest(&lines, |l| l.first_delay);
    if !header_delay.is_zero() {
        tokio::time::sleep(header_delay).await;
    }
    let status = lines.iter().find_map(|l| match &l.kind {
        GuardrailKind::Status { code, error_type } => Some((*code, error_type.as_deref())),
        _ => None,
    });
    if let Some((code, error_type)) = status {
        return Err(GuardrailError::for_status(code, error_type));
    }
    let blocked_message = {
        let settings = state.settings();
        match req.source {
            Source::Input => settings.blocked_input_message.clone(),
            Source::Output => settings.blocked_output_message.clone(),
        }
    };
    let latency = BASE_LATENCY_MS
        .saturating_add(u64::try_from((header_delay + first_delay).as_millis()).unwrap_or(0));
    let value = assess::answer(&req.texts, &lines, &blocked_message, latency);
    let body = Bytes::from(serde_json::to_vec(&value).unwrap_or_default());
    let mut steps = VecDeque::new();
    if !first_delay.is_zero() {
        steps.push_back(Step::Sleep(first_delay));
    }
    steps.push_back(Step::Bytes(body));
    Ok(json_body(steps))
}
