//! The Anthropic messages format around the canonical model.
//!
//! The same five pieces as every format module (see `docs/architecture.md`):
//!
//! | Piece | Direction | Module |
//! |---|---|---|
//! | [`into_chat_request`] | client request -> `ChatRequest` | `to_canonical` |
//! | [`from_chat_request`] | `ChatRequest` -> provider request (relays) | `from_canonical` |
//! | [`StreamEncoder`], [`error_event`] | `ChatEvent`s -> client SSE bytes | `encoder` |
//! | [`write_response`], [`render_response`], [`response_events`] | whole answers, both ways | `response` |
//! | [`StreamParser`], [`provider_error`] | provider SSE events -> `ChatEvent`s | `parser` |
//! | [`StreamWatch`] | provider SSE events, relayed as they are -> usage, errors, ending | `watch` |

mod encoder;
mod event;
mod from_canonical;
mod parser;
mod response;
mod to_canonical;
mod watch;

pub use encoder::{error_event, StreamEncoder};
pub use from_canonical::{effort_budget, from_chat_request, DEFAULT_MAX_TOKENS};
pub use parser::{provider_error, StreamParser};
pub use response::{render_response, response_events, write_response};
pub use to_canonical::into_chat_request;
pub use watch::StreamWatch;

use serde_json::{Map, Value};

use crate::model::Usage;

/// See [`crate::fast_paths_agree`].
pub(crate) fn fast_path_agrees(data: &str) -> Result<(), String> {
    crate::json_scan::agrees::<wire::anthropic::StreamEvent>("messages event", data, event::scan)
}

/// Canonical usage of a stream event's usage object (all four counts).
fn usage_from_stream(u: &wire::anthropic::StreamUsage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_input_tokens,
        cache_write_tokens: u.cache_creation_input_tokens,
    }
}

/// Tool-call arguments as the object Anthropic requires. Empty, invalid or
/// non-object JSON (e.g. a call truncated mid-stream) becomes `{}`: the format
/// has no way to carry raw text in `input`, and a parse error would fail the
/// whole request or answer for one damaged call.
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}
