//! The simulated OpenAI-format chat APIs, one code for three mounts (a
//! `Mount` says where, which credentials, which models): the completions
//! vendor under [`PREFIX`] (the gateway calls `/v1/chat/completions` and
//! `/v1/models` below it, as below `https://api.openai.com`), the custom
//! OpenAI-compatible endpoint whose `/v1` root is [`CUSTOM_PREFIX`]
//! (`{base}/chat/completions`, `{base}/models`), both here, and the assistant
//! vendor's chat API (`/assistant_vendor_api/chat/completions` and `/models`),
//! whose mount with its own credentials lives in `assistant_vendor`.
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
use serde_json::Value;

use crate::body::json_body;
use crate::http::{authorization, set_header, unix_now};
use crate::recorder::ReceivedBody;
use crate::vendor_common::answer::Answer;
use crate::vendor_common::reply::{streamed, SSE_CONTENT_TYPE};
use crate::vendor_common::scenario::{VendorFault, VendorKind};
use crate::vendor_common::sse::{play, play_body, to_json};
use crate::vendor_common::state::VendorState;
use crate::vendor_common::{ids, Vendor};

use error::{OpenAiError, DEFAULT_STREAM_ERROR};
use render::ChunkMeta;
use validate::ChatView;

/// Path prefix of the completions vendor on the API listener
/// (`COMPLETIONS_VENDOR_BASE_URL = {base_url}/completions_vendor`).
pub const PREFIX: &str = "/completions_vendor";
/// The custom endpoint's `/v1` root (`CUSTOM_BASE_URL = {base_url}/custom/v1`).
pub const CUSTOM_PREFIX: &str = "/custom/v1";

/// What differs between the mounts of the OpenAI-format API: where it sits,
/// which credentials it wants, its models and its own headers.
pub(crate) trait Mount: Send + Sync + 'static {
    fn vendors(&self) -> &VendorState;
    fn vendor(&self) -> Vendor;
    /// The root that `chat/completions` and `models` sit under.
    fn base(&self) -> String;
    /// The first path segment, for the catch-all 404.
    fn root(&self) -> &'static str;
    /// Check the request's credentials (and required headers).
    fn authorize(&self, headers: &HeaderMap) -> Result<(), OpenAiError>;
    /// Checks of a valid chat body that depend on the mount.
    fn check(&self, _headers: &HeaderMap, _view: &ChatView<'_>) -> Result<(), OpenAiError> {
        Ok(())
    }
    /// Whether `model` is one the mount lists.
    fn known(&self, model: &str) -> bool;
    /// The model listing.
    fn models(&self) -> Value;
    /// Headers of a successful answer besides `x-request-id`.
    fn decorate(&self, _headers: &mut HeaderMap) {}
}

/// The two mounts that take an API key: the completions vendor and custom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyed {
    Completions,
    Custom,
}

/// A mount of [`Keyed`] over the vendors' shared state.
pub(crate) struct KeyedMount {
    pub vendors: Arc<VendorState>,
    pub keyed: Keyed,
}

impl Mount for KeyedMount {
    fn vendors(&self) -> &VendorState {
        &self.vendors
    }

    fn vendor(&self) -> Vendor {
        match self.keyed {
            Keyed::Completions => Vendor::Completions,
            Keyed::Custom => Vendor::Custom,
        }
    }

    fn base(&self) -> String {
        match self.keyed {
            Keyed::Completions => format!("{PREFIX}/v1"),
            Keyed::Custom => CUSTOM_PREFIX.to_owned(),
        }
    }

    fn root(&self) -> &'static str {
        match self.keyed {
            Keyed::Completions => PREFIX,
            Keyed::Custom => "/custom",
        }
    }

    fn authorize(&self, headers: &HeaderMap) -> Result<(), OpenAiError> {
        let settings = self.vendors.settings();
        if self.keyed == Keyed::Custom && settings.custom_api_key.is_none() {
            return Ok(());
        }
        let any_key = self.vendors.accepts_any_token();
        match authorization(headers, "bearer") {
            None => Err(OpenAiError::missing_key()),
            Some(key) if any_key || settings.accepts_api_key(self.vendor(), key) => Ok(()),
            Some(key) => Err(OpenAiError::wrong_key(key)),
        }
    }

    fn known(&self, model: &str) -> bool {
        match self.keyed {
            Keyed::Completions => models::completions_known(model),
            Keyed::Custom => models::custom_known(model),
        }
    }

    fn models(&self) -> Value {
        match self.keyed {
            Keyed::Completions => models::completions_list(),
            Keyed::Custom => models::custom_list(),
        }
    }

    fn decorate(&self, headers: &mut HeaderMap) {
        if self.keyed == Keyed::Completions {
            set_header(headers, "openai-version", "2020-10-01");
            set_header(headers, "openai-organization", "user-upstream-sim");
            set_header(headers, "openai-processing-ms", "1");
            ratelimit::set(headers, false);
        }
    }
}

type Ctx = Arc<dyn Mount>;

/// Routes of one mount, with their full paths.
pub(crate) fn router(mount: Ctx) -> Router {
    let base = mount.base();
    Router::new()
        .route(&format!("{base}/chat/completions"), post(chat))
        .route(&format!("{base}/models"), get(list_models))
        .route(&format!("{}/{{*rest}}", mount.root()), any(not_found))
        .with_state(mount)
}

/// A successful answer's headers.
fn decorate(mount: &dyn Mount, mut res: Response) -> Response {
    let headers = res.headers_mut();
    set_header(headers, "x-request-id", &ids::openai_request_id());
    mount.decorate(headers);
    res
}

async fn chat(
    State(mount): State<Ctx>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    if let Err(e) = mount.authorize(&headers) {
        return e.into_response();
    }
    let json = body.json.clone();
    let view = match validate::validate(json.as_deref(), body.raw.len()) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = mount.check(&headers, &view) {
        return e.into_response();
    }
    let vendors = mount.vendors();
    if vendors.settings().strict_models && !mount.known(view.model) {
        return OpenAiError::model_not_found(view.model).into_response();
    }
    let vendor = mount.vendor();
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
    decorate(mount.as_ref(), res)
}

async fn list_models(State(mount): State<Ctx>, headers: HeaderMap) -> Response {
    if let Err(e) = mount.authorize(&headers) {
        return e.into_response();
    }
    decorate(mount.as_ref(), Json(mount.models()).into_response())
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
