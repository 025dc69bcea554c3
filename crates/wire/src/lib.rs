//! Every wire format the gateway speaks, as types and codecs.
//!
//! This crate owns: the OpenAI chat-completions types ([`openai`]), the Anthropic
//! messages types ([`anthropic`]), the `primary` upstream request and event payloads
//! ([`primary`]), request validation that follows the spec's tables ([`validate`]),
//! the AWS event-stream frame codec ([`eventstream`]), the SSE codec ([`sse`]),
//! fast JSON string literals ([`json`]) and the `Cookie` header ([`cookie`]).
//!
//! It is pure: no I/O, no async runtime, no HTTP framework. It must never depend on
//! tokio, axum, reqwest or sqlx, nor on the `translate` crate above it.

pub mod anthropic;
pub mod cookie;
pub mod eventstream;
pub mod json;
pub mod openai;
pub mod primary;
pub mod sse;
pub mod validate;
