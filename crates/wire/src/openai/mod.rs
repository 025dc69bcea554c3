//! The OpenAI chat-completions format: the request a client (or our relay)
//! sends, the response, the stream chunk, the model list and the error body,
//! plus [`validate`], the spec's rules (4.1, 8) for a request.
//!
//! Requests keep what they do not know: unknown top-level fields and unknown
//! message fields land in an `extra` map and serialize back unchanged, and
//! content parts of a type we do not model are kept as given
//! ([`ContentPart::Other`]). Wrong JSON types and unknown roles are serde
//! errors (with the field path when read through `serde_path_to_error`), never
//! silently accepted.
//!
//! Responses and chunks are read leniently (missing members take defaults),
//! because OpenAI-compatible servers differ in what they omit.

mod error;
mod models;
mod request;
mod response;
mod stream;
mod validate;

pub use error::*;
pub use models::*;
pub use request::*;
pub use response::*;
pub use stream::*;
pub use validate::validate;

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
