//! The simulated assistant vendor (Copilot): the code host's token exchange
//! and the chat API it points to.
//!
//! - `GET /assistant_vendor_code_host/copilot_internal/v2/token` (the
//!   gateway's `ASSISTANT_VENDOR_TOKEN_URL` is its full URL) wants
//!   `Authorization: token <the configured code-host token>` (`Bearer` is
//!   accepted too, as the code host does) and a `User-Agent` (the code host
//!   refuses requests without one). It answers `{token, expires_at,
//!   refresh_in, endpoints: {api: "{base}/assistant_vendor_api", …}, …}`, with
//!   the configured (possibly very short) lifetime. Bad credentials: 401
//!   `{"message":"Bad credentials",…}`; a denied account: 404.
//! - `POST /assistant_vendor_api/chat/completions` and `GET
//!   /assistant_vendor_api/models` are the OpenAI-format API of
//!   [`crate::completions_vendor`] with this vendor's checks (its `Mount`):
//!   `Authorization: Bearer <a current exchanged token>` (401 when expired or
//!   unknown, so the client exchanges again) and the `Copilot-Integration-Id`
//!   and `Editor-Version` headers (400 when missing); a request with an
//!   image also needs `Copilot-Vision-Request: true` (400 otherwise).

pub mod code_host;
pub mod models;
pub mod tokens;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::http::{HeaderMap, StatusCode};
use axum::Router;

use crate::completions_vendor::error::OpenAiError;
use crate::completions_vendor::validate::ChatView;
use crate::completions_vendor::{self, Mount};
use crate::http::{authorization, header_str};
use crate::state::lock;
use crate::vendor_common::state::VendorState;
use crate::vendor_common::Vendor;

use code_host::store::CodeHostStore;
use tokens::{AssistantTokenState, AssistantTokens};

/// Path prefix of the code host on the API listener.
pub const CODE_HOST_PREFIX: &str = "/assistant_vendor_code_host";
/// The token exchange below [`CODE_HOST_PREFIX`].
pub const TOKEN_PATH: &str = "/copilot_internal/v2/token";
/// Path prefix of the chat API (the token's `endpoints.api`).
pub const API_PREFIX: &str = "/assistant_vendor_api";
/// Headers the chat API requires.
pub const REQUIRED_HEADERS: [&str; 2] = ["Copilot-Integration-Id", "Editor-Version"];

/// The assistant vendor's state: what every vendor shares, the code host's
/// users and logins, and the tokens the exchange issued (its chat API
/// accepts them).
#[derive(Debug)]
pub(crate) struct AssistantState {
    pub vendors: Arc<VendorState>,
    code_host: Mutex<CodeHostStore>,
    tokens: Mutex<AssistantTokens>,
}

impl AssistantState {
    pub fn new(vendors: Arc<VendorState>) -> Self {
        AssistantState {
            vendors,
            code_host: Mutex::new(CodeHostStore::default()),
            tokens: Mutex::new(AssistantTokens::default()),
        }
    }

    pub fn code_host(&self) -> MutexGuard<'_, CodeHostStore> {
        lock(&self.code_host)
    }

    pub fn tokens(&self) -> MutexGuard<'_, AssistantTokens> {
        lock(&self.tokens)
    }
}

/// Routes of the code host, with their full paths.
pub(crate) fn code_host_router(shared: Arc<AssistantState>) -> Router {
    code_host::router(shared)
}

fn unauthorized(message: &str, code: &str) -> OpenAiError {
    OpenAiError::new(StatusCode::UNAUTHORIZED, "invalid_request_error", message).code(code)
}

/// The chat API: the OpenAI-format API of `completions_vendor` mounted under
/// [`API_PREFIX`] with this vendor's credentials and headers.
pub(crate) fn api_router(shared: Arc<AssistantState>) -> Router {
    completions_vendor::router(Arc::new(ApiMount(shared)))
}

struct ApiMount(Arc<AssistantState>);

impl Mount for ApiMount {
    fn vendors(&self) -> &VendorState {
        &self.0.vendors
    }

    fn vendor(&self) -> Vendor {
        Vendor::Assistant
    }

    fn base(&self) -> String {
        API_PREFIX.to_owned()
    }

    fn root(&self) -> &'static str {
        API_PREFIX
    }

    fn authorize(&self, headers: &HeaderMap) -> Result<(), OpenAiError> {
        authorize(&self.0, headers)
    }

    fn check(&self, headers: &HeaderMap, view: &ChatView<'_>) -> Result<(), OpenAiError> {
        if view.images {
            require_vision_header(headers)?;
        }
        Ok(())
    }

    fn known(&self, model: &str) -> bool {
        models::known(model)
    }

    fn models(&self) -> serde_json::Value {
        models::list()
    }

    fn decorate(&self, headers: &mut HeaderMap) {
        completions_vendor::ratelimit::set(headers, false);
    }
}

/// The chat API's checks: a current exchanged token, then the required headers.
fn authorize(shared: &AssistantState, headers: &HeaderMap) -> Result<(), OpenAiError> {
    let Some(token) = authorization(headers, "bearer") else {
        return Err(unauthorized(
            "unauthorized: missing authorization header",
            "missing_token",
        ));
    };
    if !shared.vendors.accepts_any_token() {
        match shared.tokens().state(token, Instant::now()) {
            AssistantTokenState::Valid => {}
            AssistantTokenState::Expired => {
                return Err(unauthorized("unauthorized: token expired", "token_expired"))
            }
            AssistantTokenState::Unknown => {
                return Err(unauthorized("unauthorized: invalid token", "invalid_token"))
            }
        }
    }
    for name in REQUIRED_HEADERS {
        if header_str(headers, name).is_none_or(str::is_empty) {
            return Err(OpenAiError::invalid_request(format!(
                "bad request: missing {name} header for IDE auth"
            ))
            .code("missing_header"));
        }
    }
    Ok(())
}

/// An image request needs `Copilot-Vision-Request: true`.
fn require_vision_header(headers: &HeaderMap) -> Result<(), OpenAiError> {
    match header_str(headers, "Copilot-Vision-Request") {
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(()),
        _ => Err(OpenAiError::invalid_request(
            "missing required Copilot-Vision-Request header for vision requests",
        )
        .code("missing_header")),
    }
}
