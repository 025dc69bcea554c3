//! Answers shared by several `/_ui/api` calls.
//!
//! Every `/_ui/api` answer is a typed struct deriving `Serialize`; the
//! TypeScript the web console uses is generated from these structs (see
//! [`super::ts_types`]), so the API and the UI cannot drift apart.

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
