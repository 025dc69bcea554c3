//! The canonical chat model and every conversion into and out of it.
//!
//! This crate owns [`model::ChatRequest`] and the [`model::ChatEvent`] stream, and
//! the N + M converters around them: each client format ([`openai`], [`anthropic`])
//! converts its request into `ChatRequest` and has one streaming encoder that turns
//! `ChatEvent`s into its SSE bytes; each provider format ([`primary`], and the
//! OpenAI / Anthropic formats again for the direct relays) turns its stream into
//! `ChatEvent`s. Non-streaming answers are the same events folded by
//! [`collect::Collector`] and rendered by the client format.
//!
//! Also here: the `<thinking>` splitter ([`thinking`]), fake-reasoning injection
//! ([`fake_reasoning`]), truncation detection and recovery ([`truncation`]),
//! token estimates ([`tokens`]) and the side view of a stream relayed in its
//! own format ([`watch`]: usage, errors, how it ended).
//!
//! It is pure: no I/O, no clock, no randomness (ids and timestamps come from the
//! caller). It depends on `wire` only, never on tokio, axum, reqwest or sqlx.

#[cfg(test)]
mod answer_strategies;
pub mod anthropic;
pub mod collect;
pub mod error;
pub mod fake_reasoning;
mod json_scan;
pub mod model;
pub mod openai;
pub mod primary;
pub mod stop;
pub mod thinking;
pub mod tokens;
pub mod truncation;
pub mod watch;

pub use collect::{ChatResponse, Collector};
pub use error::TranslateError;
pub use model::*;

/// For the fuzz target `provider_payloads`: whether the hand-written fast
/// paths that read `data` (a provider's chat-completions chunk, a messages
/// stream event) answer what serde_json answers wherever they answer at
/// all. `Err` names the path that disagreed, with both readings.
#[doc(hidden)]
pub fn fast_paths_agree(data: &str) -> Result<(), String> {
    openai::fast_path_agrees(data)?;
    anthropic::fast_path_agrees(data)
}

/// Identity of a response as the client sees it; supplied by the caller
/// (this crate has no clock and no randomness).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseMeta {
    /// `chatcmpl-...` or `msg_...`.
    pub id: String,
    /// The model name reported to the client.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
}
