//! Server-Sent Events: the incremental parser for upstream streams
//! ([`SseParser`]: events, or raw blocks with their events in one pass for
//! byte-for-byte relays, [`SseBlock`]) and the writers for the gateway's own streams
//! ([`write_data`], [`write_event`], [`write_comment`], [`DONE`]).
//!
//! The parser follows the WHATWG `text/event-stream` rules, with two choices
//! of ours, both documented on [`SseParser`]: invalid UTF-8 is an error rather
//! than U+FFFD, and an event left unterminated at end of input is dispatched.

mod parser;
mod write;

pub use parser::{
    EventName, SseBlock, SseError, SseEvent, SseParser, DEFAULT_MAX_BLOCK, DEFAULT_MAX_EVENT,
    DEFAULT_MAX_LINE,
};
pub use write::{write_comment, write_data, write_event, DONE};

#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod write_tests;
