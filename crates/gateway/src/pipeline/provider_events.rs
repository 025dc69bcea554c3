//! A direct provider's SSE stream read as canonical events: bytes ->
//! [`SseParser`] -> the provider format's `StreamParser` -> `ChatEvent`s.
//! Used when the client speaks the other format (cross-format relay).
//!
//! Every way the stream can break ends it with a `ChatEvent::Error`: the
//! connection failing, no data for `idle` (the gap between two reads), an
//! event that does not parse, or an end before the answer was complete (the
//! parsers' `finish` reports that), so the client's encoder writes its
//! format's error event instead of a clean end.

use std::time::Duration;

use translate::{ChatEvent, StreamError};
use wire::sse::SseParser;

use crate::providers::WireFormat;

/// The provider format's stream parser.
enum Parser {
    OpenAi(translate::openai::StreamParser),
    Anthropic(translate::anthropic::StreamParser),
}

/// An open provider stream, read in batches of events.
pub struct ProviderEvents {
    response: reqwest::Response,
    sse: SseParser,
    parser: Parser,
    idle: Duration,
    provider: &'static str,
    done: bool,
}

impl ProviderEvents {
    /// `format` is the provider's (OpenAI or Anthropic).
    pub fn new(
        response: reqwest::Response,
        format: WireFormat,
        idle: Duration,
        provider: &'static str,
    ) -> Self {
        let parser = match format {
            WireFormat::Anthropic => Parser::Anthropic(translate::anthropic::StreamParser::new()),
            WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
                Parser::OpenAi(translate::openai::StreamParser::new())
            }
        };
        ProviderEvents {
            response,
            sse: SseParser::new(),
            parser,
            idle,
            provider,
            done: false,
        }
    }

    /// Read until at least one event was added or the stream ended; `false`
    /// once it has ended (the last events are in `out`).
    pub async fn fill(&mut self, out: &mut Vec<ChatEvent>) -> bool {
        let start = out.len();
        while !self.done {
            if let Err(message) = self.drain(out, false) {
                self.fail(out, message);
                break;
            }
            if out.len() > start {
                return !self.done;
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.sse.feed(&chunk),
                Ok(Ok(None)) => {
                    if let Err(message) = self.drain(out, true) {
                        self.fail(out, message);
                        break;
                    }
                    if !self.done {
                        match &mut self.parser {
                            Parser::OpenAi(p) => p.finish(out),
                            Parser::Anthropic(p) => p.finish(out),
                        }
                        self.done = true;
                    }
                }
                Ok(Err(e)) => self.fail(out, format!("the provider connection failed: {e}")),
                Err(_) => self.fail(
                    out,
                    format!("no data from the provider for {}s", self.idle.as_secs()),
                ),
            }
        }
        false
    }

    /// Parse every buffered event (all of them at end of input).
    fn drain(&mut self, out: &mut Vec<ChatEvent>, eof: bool) -> Result<(), String> {
        loop {
            let next = if eof {
                self.sse.finish()
            } else {
                self.sse.next_event()
            };
            let Some(event) = next.map_err(|e| format!("unreadable provider stream: {e}"))? else {
                return Ok(());
            };
            let before = out.len();
            let pushed = match &mut self.parser {
                Parser::OpenAi(p) => p.push(&event, out),
                Parser::Anthropic(p) => p.push(&event, out),
            };
            pushed.map_err(|e| e.to_string())?;
            if out
                .iter()
                .skip(before)
                .any(|e| matches!(e, ChatEvent::Error(_)))
            {
                if let Some(ChatEvent::Error(err)) = out.last() {
                    tracing::warn!(
                        provider = self.provider,
                        status = err.status,
                        "provider error in the stream: {}",
                        err.message
                    );
                }
                self.done = true;
                return Ok(());
            }
        }
    }

    fn fail(&mut self, out: &mut Vec<ChatEvent>, message: String) {
        tracing::warn!(
            provider = self.provider,
            "provider stream failed: {message}"
        );
        self.done = true;
        out.push(ChatEvent::Error(StreamError {
            status: 502,
            kind: translate::StreamErrorKind::UpstreamApi,
            message,
        }));
    }
}
