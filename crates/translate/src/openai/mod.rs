//! The OpenAI chat-completions format on both sides of the canonical model.
//!
//! As a client format: [`into_chat_request`] (request in), [`StreamEncoder`]
//! (events out as `chat.completion.chunk` SSE lines), [`write_response`]
//! (collected answer out as JSON; [`render_response`] as a typed object)
//! and [`error_event`] / [`error_body`] (errors out).
//! As a provider format (OpenAI itself, `custom` endpoints, the assistant
//! vendor): [`from_chat_request`] (request out), [`StreamParser`] (provider
//! SSE events in), [`response_events`] (provider JSON response in) and
//! [`provider_error`] (a provider's error object); relayed natively,
//! [`StreamWatch`] (usage, errors and ending of a stream passed through).
//!
//! Files, as in every format module: `to_canonical` (client request in),
//! `from_canonical` (request out), `encoder`, `parser` (with `chunk`, the
//! fast read of one provider chunk), `response`, `watch`.
//!
//! Usage convention: canonical `input_tokens` counts the prompt tokens that
//! were neither read from nor written to the prompt cache (the messages-format
//! meaning), so OpenAI's `prompt_tokens` is `input + cache_read + cache_write`
//! and `prompt_tokens_details.cached_tokens` is `cache_read`; the parser does
//! the reverse (`input = prompt_tokens - cached_tokens`).

mod chunk;
mod encoder;
mod from_canonical;
mod parser;
mod response;
mod to_canonical;
mod watch;

pub use encoder::{error_event, StreamEncoder};
pub use from_canonical::{effort_for_budget, from_chat_request};
pub use parser::{provider_error, StreamParser};
pub use response::{error_body, render_response, response_events, write_response};
pub use to_canonical::into_chat_request;
pub use watch::StreamWatch;

use crate::model::Usage;

/// See [`crate::fast_paths_agree`].
pub(crate) fn fast_path_agrees(data: &str) -> Result<(), String> {
    crate::json_scan::agrees::<chunk::Payload>("chat-completions chunk", data, chunk::scan)
}

/// OpenAI `prompt_tokens` for canonical usage (cached tokens included).
fn prompt_tokens(usage: &Usage) -> u32 {
    usage
        .input_tokens
        .unwrap_or(0)
        .saturating_add(usage.cache_read_tokens.unwrap_or(0))
        .saturating_add(usage.cache_write_tokens.unwrap_or(0))
}

/// Canonical usage for an OpenAI usage object.
fn usage_from_wire(usage: &wire::openai::CompletionUsage) -> Usage {
    let cached = usage.prompt_tokens_details.and_then(|d| d.cached_tokens);
    Usage {
        input_tokens: Some(usage.prompt_tokens.saturating_sub(cached.unwrap_or(0))),
        output_tokens: Some(usage.completion_tokens),
        cache_read_tokens: cached,
        cache_write_tokens: None,
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod request_tests;

#[cfg(test)]
#[path = "encoder_tests.rs"]
mod encoder_tests;

#[cfg(test)]
#[path = "parser_tests.rs"]
mod parser_tests;
