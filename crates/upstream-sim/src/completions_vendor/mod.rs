//! The simulated OpenAI-format chat APIs, one code for three mounts
//! ([`Flavor`]): the completions vendor under [`PREFIX`] (the gateway calls
//! `/v1/chat/completions` and `/v1/models` below it, as below
//! `https://api.openai.com`), the custom OpenAI-compatible endpoint whose `/v1`
//! root is [`CUSTOM_PREFIX`] (`{base}/chat/completions`, `{base}/models`), and
//! the assistant vendor's chat API (`/assistant_vendor_api/chat/completions`
//! and `/models`, with its own credentials, see [`crate::assistant_vendor`]).
//!
//! Authentication: the completions vendor wants `Authorization: Bearer <its
//! key>`; the custom endpoint its key when one is configured (any or none
//! otherwise); both answer 401 in the OpenAI shape. Bodies are validated
//! ([`validate`]), a scenario is chosen (the vendor's queue, then `sim:` lines
//! of the last user message), and its plan is rendered ([`render`]) as SSE
//! chunks or a JSON completion, with the request's `model` echoed back. Every
//! answer has `x-request-id`; the completions vendor and the assistant vendor
//! add the `x-ratelimit-*` headers ([`ratelimit`]).

pub mod error;
pub mod models;
pub mod ratelimit;
pub mod render;
pub mod validate;

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Json, Router};
use bytes::Bytes;

use crate::assistant_vendor;
use crate::recorder::ReceivedBody;
use crate::state::Shared;
use crate::vendor_common::answer::Answer;
use crate::vendor_common::http::{
    authorization, json_body, set_header, streamed, unix_now, SSE_CONTENT_TYPE,
};
use crate::vendor_common::scenario::{VendorFault, VendorKind};
use crate::vendor_common::sse::{play, play_body, to_json};
use crate::vendor_common::{ids, Vendor};

use error::{OpenAiError, DEFAULT_STREAM_ERROR};
use render::ChunkMeta;

/// Path prefix of the completions vendor on the API listener
/// (`COMPLETIONS_VENDOR_BASE_URL = {base_url}/completions_vendor`).
pub const PREFIX: &str = "/completions_vendor";
/// The custom endpoint's `/v1` root (`CUSTOM_BASE_URL = {base_url}/custom/v1`).
pub const CUSTOM_PREFIX: &str = "/custom/v1";

/// Which OpenAI-format API a router serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Completions,
    Custom,
    Assistant,
}

impl Flavor {
    fn vendor(self) -> Vendor {
        match self {
            Flavor::Completions => Vendor::Completions,
            Flavor::Custom => Vendor::Custom,
            Flavor::Assistant => Vendor::Assistant,
        }
    }

    /// The root that `chat/completions` and `models` sit under.
    fn base(self) -> String {
        match self {
            Flavor::Completions => format!("{PREFIX}/v1"),
            Flavor::Custom => CUSTOM_PREFIX.to_owned(),
            Flavor::Assistant => assistant_vendor::API_PREFIX.to_owned(),
        }
    }

    /// The first path segment, for the catch-all 404.
    fn root(self) -> &'static str {
        match self {
            Flavor::Completions => PREFIX,
            Flavor::Custom => "/custom",
            Flavor::Assistant => assistant_vendor::API_PREFIX,
        }
    }
}

#[derive(Clone)]
struct Ctx {
    shared: Arc<Shared>,
    flavor: Flavor,
}

/// Routes of one flavor, with their full paths.
pub(crate) fn router(shared: Arc<Shared>, flavor: Flavor) -> Router {
    let base = flavor.base();
    Router::new()
        .route(&format!("{base}/chat/completions"), post(chat))
        .route(&format!("{base}/models"), get(list_models))
        .route(&format!("{}/{{*rest}}", flavor.root()), any(not_found))
        .with_state(Ctx { shared, flavor })
}

fn bearer_key(headers: &HeaderMap, expected: &str, any_key: bool) -> Result<(), OpenAiError> {
    match authorization(headers, "bearer") {
        None => Err(OpenAiError::missing_key()),
        Some(key) if any_key || key == expected => Ok(()),
        Some(key) => Err(OpenAiError::wrong_key(key)),
    }
}

fn authorize(ctx: &Ctx, headers: &HeaderMap) -> Result<(), OpenAiError> {
    let any_key = ctx.shared.accepts_any_token();
    match ctx.flavor {
        Flavor::Completions => {
            let expected = ctx.shared.vendors.settings().completions_api_key.clone();
            bearer_key(headers, &expected, any_key)
        }
        Flavor::Custom => match ctx.shared.vendors.settings().custom_api_key.clone() {
            None => Ok(()),
            Some(expected) => bearer_key(headers, &expected, any_key),
        },
        Flavor::Assistant => assistant_vendor::authorize(&ctx.shared, headers),
    }
}

fn model_known(flavor: Flavor, model: &str) -> bool {
    match flavor {
        Flavor::Completions => models::completions_known(model),
        Flavor::Custom => models::custom_known(model),
        Flavor::Assistant => assistant_vendor::models::known(model),
    }
}

/// A successful answer's headers.
fn decorate(flavor: Flavor, mut res: Response) -> Response {
    let headers = res.headers_mut();
    set_header(headers, "x-request-id", &ids::openai_request_id());
    match flavor {
        Flavor::Completions => {
            set_header(headers, "openai-version", "2020-10-01");
            set_header(headers, "openai-organization", "user-upstream-sim");
            set_header(headers, "openai-processing-ms", "1");
            ratelimit::set(headers, false);
        }
        Flavor::Assistant => ratelimit::set(headers, false),
        Flavor::Custom => {}
    }
    res
}

async fn chat(
    State(ctx): State<Ctx>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    if let Err(e) = authorize(&ctx, &headers) {
        return e.into_response();
    }
    let json = body.json.clone();
    let view = match validate::validate(json.as_deref(), body.raw.len()) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    if ctx.flavor == Flavor::Assistant && view.images {
        if let Err(e) = assistant_vendor::require_vision_header(&headers) {
            return e.into_response();
        }
    }
    let vendors = &ctx.shared.vendors;
    if vendors.settings().strict_models && !model_known(ctx.flavor, view.model) {
        return OpenAiError::model_not_found(view.model).into_response();
    }
    let vendor = ctx.flavor.vendor();
    let scenario = match vendors.choose(vendor, &view.info.user_text) {
        Ok(s) => s,
        Err(e) => return OpenAiError::invalid_request(e.to_string()).into_response(),
    };
    if !scenario.header_delay.is_zero() {
        tokio::time::sleep(scenario.header_delay).await;
    }
    if let VendorKind::Status {
        code,
        retry_after,
        error_type,
    } = &scenario.kind
    {
        let mut e = OpenAiError::for_status(*code, error_type.as_deref(), view.model);
        e.retry_after = *retry_after;
        return e.into_response();
    }
    let Some(answer) = Answer::plan(&scenario, &view.info, vendor, ids::call_id) else {
        return OpenAiError::for_type(DEFAULT_STREAM_ERROR).into_response();
    };
    let id = ids::completion_id();
    let fingerprint = format!("fp_{}", ids::hex(10));
    let meta = ChunkMeta {
        id: &id,
        created: unix_now(),
        model: view.model,
        fingerprint: &fingerprint,
        include_usage: view.include_usage,
        extra: scenario.extra,
    };
    let res = if view.stream {
        let frames = render::stream(&answer, &meta);
        let steps = play(&scenario, frames, error::stream_error_event);
        streamed(steps, vendors.streams(vendor).clone(), SSE_CONTENT_TYPE)
    } else if let Some(VendorFault::ErrorEvent { error_type, .. }) = &scenario.fault {
        let t = error_type.as_deref().unwrap_or(DEFAULT_STREAM_ERROR);
        return OpenAiError::for_type(t).into_response();
    } else {
        let out = render::response(&answer, &meta);
        json_body(play_body(&scenario, Bytes::from(to_json(&out))))
    };
    decorate(ctx.flavor, res)
}

async fn list_models(State(ctx): State<Ctx>, headers: HeaderMap) -> Response {
    if let Err(e) = authorize(&ctx, &headers) {
        return e.into_response();
    }
    let list = match ctx.flavor {
        Flavor::Completions => models::completions_list(),
        Flavor::Custom => models::custom_list(),
        Flavor::Assistant => assistant_vendor::models::list(),
    };
    decorate(ctx.flavor, Json(list).into_response())
}

async fn not_found() -> Response {
    OpenAiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "invalid_request_error",
        "Unknown request URL. Please check the URL for typos.",
    )
    .code("unknown_url")
    .into_response()
}
