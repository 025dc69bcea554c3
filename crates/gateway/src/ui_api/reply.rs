//! Answers shared by several `/_ui/api` calls.
//!
//! Every `/_ui/api` answer is a typed struct deriving `Serialize`; the
//! TypeScript the web console uses is generated from these structs (see
//! [`super::ts_types`]), so the API and the UI cannot drift apart.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// `{ok: true}`: the call did what it was asked.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "Ok"))]
pub(crate) struct Done {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
}

/// The one `{ok: true}`.
pub(crate) const DONE: Done = Done { ok: true };

/// The `ok: true` member of answers that carry more.
pub(crate) const OK: bool = true;

/// 302 to `location` (to the console's start when it is not a valid header
/// value), never cached, without a referrer.
pub(crate) fn redirect(location: &str) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    let headers = response.headers_mut();
    let target =
        HeaderValue::from_str(location).unwrap_or_else(|_| HeaderValue::from_static("/_ui/"));
    headers.insert(header::LOCATION, target);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
