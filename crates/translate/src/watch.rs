//! The side view of a natively relayed stream (the client speaks the
//! provider's format, so the bytes go through untouched): each provider
//! event is read only as far as usage accounting and error detection need,
//! and the view says whether the stream ended properly. The formats' halves
//! are [`crate::openai::StreamWatch`] and [`crate::anthropic::StreamWatch`],
//! beside their stream parsers and sharing their error classifiers.
//!
//! Usage: feed every event of the stream to [`Watch::observe`] (forward it
//! unless [`Seen::drop`]; it is the first "real" event when
//! [`Seen::substantive`]); at the end, [`Watch::ending`] says what the client
//! still needs and [`Watch::usage`] what the stream reported.

use wire::sse::SseEvent;

use crate::model::{ClientFormat, StreamError, Usage};
use crate::{anthropic, openai};

/// What one event means to the relay.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Leave this event out of the client's stream.
    pub drop: bool,
    /// The provider reported an error (the event itself is still forwarded).
    pub error: Option<StreamError>,
    /// The event carries content or ends the answer (not `message_start`,
    /// `content_block_start`, `ping`, a role-only or usage-only chunk).
    pub substantive: bool,
}

/// How a stream ended, as far as the client must be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Properly ended.
    Complete,
    /// The answer finished but `[DONE]` never came: the relay adds it.
    MissingDone,
    /// Cut off: the relay adds the format's error event.
    Cut,
}

/// Side view of one stream, in either format.
#[derive(Debug, Clone)]
pub enum Watch {
    Anthropic(anthropic::StreamWatch),
    OpenAi(openai::StreamWatch),
}

impl Watch {
    /// The view for a stream of `format`; `strip_usage`: the client asked for
    /// no usage chunk (chat completions only: the gateway always asks).
    pub fn new(format: ClientFormat, strip_usage: bool) -> Watch {
        match format {
            ClientFormat::Anthropic => Watch::anthropic(),
            ClientFormat::OpenAi => Watch::openai(strip_usage),
        }
    }

    pub fn anthropic() -> Watch {
        Watch::Anthropic(anthropic::StreamWatch::new())
    }

    /// `strip_usage`: the client asked for no usage chunk.
    pub fn openai(strip_usage: bool) -> Watch {
        Watch::OpenAi(openai::StreamWatch::new(strip_usage))
    }

    pub fn observe(&mut self, ev: &SseEvent) -> Seen {
        match self {
            Watch::Anthropic(w) => w.observe(ev),
            Watch::OpenAi(w) => w.observe(ev),
        }
    }

    pub fn ending(&self) -> Ending {
        match self {
            Watch::Anthropic(w) => w.ending(),
            Watch::OpenAi(w) => w.ending(),
        }
    }

    /// The usage the stream reported so far (canonical: input tokens exclude
    /// cache reads and writes).
    pub fn usage(&self) -> Usage {
        match self {
            Watch::Anthropic(w) => w.usage(),
            Watch::OpenAi(w) => w.usage(),
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
