//! The `primary` upstream: [`build_request`] turns a [`crate::ChatRequest`]
//! into its `generateAssistantResponse` body, and [`StreamParser`] turns its
//! event-stream messages back into [`crate::ChatEvent`]s.
//!
//! Layout: `tools` (tool definitions: name checks, descriptions, schema
//! sanitising, `tool_choice`), `turns` (messages to alternating upstream turns),
//! `request` (assembly: system folding, placeholders, additions), `stream`
//! (the parser).

mod request;
mod stream;
mod tools;
mod turns;

pub use request::{build_request, RequestOptions, DEFAULT_TOOL_DESCRIPTION_MAX_LENGTH};
pub use stream::{exception_status, ParserOptions, StreamParser, StreamSummary, ERROR_KIND};
pub use tools::{sanitize_schema, MAX_TOOL_NAME_LEN};
