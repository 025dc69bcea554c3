//! The simulated `primary` API: `POST /generateAssistantResponse` (an AWS
//! event stream, or an HTTP error) and `GET /ListAvailableModels`.
//!
//! Every call needs `Authorization: Bearer <token>` with an access token the
//! simulated OIDC service issued and that is neither expired nor revoked
//! (unless the simulator accepts any token); otherwise 403 with the real
//! "bearer token ... is invalid" body. Chat bodies are validated
//! ([`validate`]), then a [`scenario::Scenario`] is chosen ([`select`]) and
//! played ([`events`], [`stream`]).

pub(crate) mod cache;
pub use crate::content;
pub mod error;
pub mod events;
pub mod models;
pub mod scenario;
pub mod select;
pub(crate) mod state;
pub mod stream;
pub mod validate;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};

use crate::ids;
use crate::recorder::ReceivedBody;
use crate::stats::StreamGuard;
use state::PrimaryState;

use error::ApiError;
use scenario::{Scenario, ScenarioKind};
use stream::EventStream;
use validate::RequestView;

/// `Content-Type` of a chat answer.
pub const EVENT_STREAM_CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";

/// Routes of the API listener.
pub(crate) fn router(shared: Arc<PrimaryState>) -> Router {
    Router::new()
        .route("/generateAssistantResponse", post(generate))
        .route("/ListAvailableModels", get(list_models))
        .route("/", post(rpc_operation))
        .fallback(unknown_operation)
        .with_state(shared)
}

/// Check the bearer token.
fn authorize(shared: &PrimaryState, headers: &HeaderMap) -> Result<(), ApiError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(ApiError::bad_token)?;
    if shared.accepts_any_token() || shared.oidc().access_token_valid(token, Instant::now()) {
        Ok(())
    } else {
        Err(ApiError::bad_token())
    }
}

fn request_id_header() -> HeaderValue {
    HeaderValue::from_str(&ids::request_id()).unwrap_or(HeaderValue::from_static("0"))
}

/// What a chosen scenario turns into before any waiting.
enum Answer {
    Error(ApiError),
    Stream(std::collections::VecDeque<stream::Step>),
}

fn plan(shared: &PrimaryState, scenario: &Scenario, view: &RequestView<'_>) -> Answer {
    if let ScenarioKind::Status {
        code,
        retry_after,
        reason,
        revoke,
    } = &scenario.kind
    {
        if *revoke {
            shared.oidc().revoke_access_tokens();
        }
        let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut err = if status == StatusCode::BAD_REQUEST && reason.is_none() {
            ApiError::improperly_formed()
        } else {
            ApiError::for_status(status, reason.as_deref())
        };
        err.retry_after = *retry_after;
        return Answer::Error(err);
    }
    let max_input = shared.api.models.max_input_tokens(view.model_id);
    if cache::cacheable(scenario) {
        let content = shared
            .frames
            .get_or_encode(cache::key(scenario, view.model_id), || {
                let evs = events::content_events(scenario, view).unwrap_or_default();
                cache::CachedContent::encode(&evs)
            });
        let trailer = events::trailer(scenario, content.output_chars, view.body_len, max_input);
        // A cacheable scenario has no fault, so this only frames the trailer.
        let (tail, _) = stream::frames(scenario, trailer);
        let steps = [content.frames.clone(), tail]
            .into_iter()
            .filter(|b| !b.is_empty())
            .map(stream::Step::Bytes)
            .collect();
        return Answer::Stream(steps);
    }
    let mut evs = events::content_events(scenario, view).unwrap_or_default();
    if scenario.truncate {
        events::truncate(&mut evs);
    }
    let trailer = events::trailer(
        scenario,
        events::output_chars(&evs),
        view.body_len,
        max_input,
    );
    evs.extend(trailer);
    let (buf, ends) = stream::frames(scenario, evs);
    Answer::Stream(stream::steps(scenario, buf, &ends))
}

async fn generate(
    State(shared): State<Arc<PrimaryState>>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    let (scenario, answer) = {
        let view = match validate::validate(body.json.as_deref(), body.raw.len(), &shared.api) {
            Ok(v) => v,
            Err(e) => return e.into_response(),
        };
        let directives = match select::parse_directives(view.content) {
            Ok(d) => d,
            Err(e) => return ApiError::simulator(e.to_string()).into_response(),
        };
        let scenario = shared.scenarios().choose(directives);
        let answer = plan(&shared, &scenario, &view);
        (scenario, answer)
    };
    if !scenario.header_delay.is_zero() {
        tokio::time::sleep(scenario.header_delay).await;
    }
    match answer {
        Answer::Error(e) => e.into_response(),
        Answer::Stream(steps) => {
            let guard = StreamGuard::start(shared.streams.clone());
            let mut res = Response::new(Body::from_stream(EventStream::new(steps, guard)));
            let h = res.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(EVENT_STREAM_CONTENT_TYPE),
            );
            h.insert("x-amzn-RequestId", request_id_header());
            res
        }
    }
}

async fn list_models(
    State(shared): State<Arc<PrimaryState>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    if query.get("origin").is_none_or(String::is_empty) {
        return ApiError::improperly_formed().into_response();
    }
    if shared.api.require_profile_arn && query.get("profileArn").is_none_or(String::is_empty) {
        return ApiError {
            message: "profileArn is required".to_owned(),
            ..ApiError::improperly_formed()
        }
        .into_response();
    }
    let max_results = match query.get("maxResults").map(|v| v.parse::<usize>()) {
        None => None,
        Some(Ok(n)) if n > 0 => Some(n),
        Some(_) => return ApiError::improperly_formed().into_response(),
    };
    match shared
        .api
        .models
        .page(max_results, query.get("nextToken").map(String::as_str))
    {
        Ok(page) => {
            let mut res = Json(page).into_response();
            res.headers_mut()
                .insert("x-amzn-RequestId", request_id_header());
            res
        }
        Err(_) => ApiError::improperly_formed().into_response(),
    }
}

/// The ARN of the one profile the simulated account has; a request that
/// carries a `profileArn` must name it when `require_profile_arn` is on.
pub const PROFILE_ARN: &str = "arn:aws:codewhisperer:us-east-1:111122223333:profile/SIMULATED";

/// Operations of the awsJson1_0 form (`POST /` with `X-Amz-Target`): only
/// `AmazonCodeWhispererService.ListAvailableProfiles`, which IAM Identity
/// Center accounts need to learn the `profileArn` their calls must carry.
async fn rpc_operation(State(shared): State<Arc<PrimaryState>>, headers: HeaderMap) -> Response {
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if target != "AmazonCodeWhispererService.ListAvailableProfiles" {
        return unknown_operation().await;
    }
    if let Err(e) = authorize(&shared, &headers) {
        return e.into_response();
    }
    let body = serde_json::json!({
        "profiles": [{"arn": PROFILE_ARN, "profileName": "upstream-sim"}],
    });
    let mut res = axum::Json(body).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    res
}

async fn unknown_operation() -> Response {
    ApiError {
        status: StatusCode::NOT_FOUND,
        message: "The requested operation is not supported by upstream-sim.".to_owned(),
        reason: None,
        error_type: "UnknownOperationException".to_owned(),
        retry_after: None,
    }
    .into_response()
}
