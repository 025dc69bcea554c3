//! A direct provider's answer read as canonical events, for a client of the
//! other format (cross-format relay): a stream through the shared reader
//! ([`crate::upstream::reader::SseEvents`]) and the provider format's
//! `StreamParser` ([`ProviderEvents`]), a whole JSON answer through its
//! format's `response_events` ([`answer_events`]).
//!
//! Every way the stream can break ends it with a `ChatEvent::Error`: the
//! connection failing, no data for `idle` (the gap between two reads), an
//! event that does not parse, or an end before the answer was complete (the
//! parsers' `finish` reports that), so the client's encoder writes its
//! format's error event instead of a clean end.

use std::time::Duration;

use axum::http::StatusCode;
use translate::{ChatEvent, StreamError};

use crate::error::GatewayError;
use crate::providers::WireFormat;
use crate::upstream::reader::{Peer, Read, Reader, SseEvents};

/// The provider format's stream parser.
enum Parser {
    OpenAi(translate::openai::StreamParser),
    Anthropic(translate::anthropic::StreamParser),
}

/// An open provider stream, read in batches of events.
pub struct ProviderEvents {
    reader: Reader<SseEvents>,
    parser: Parser,
    format: WireFormat,
    provider: &'static str,
    done: bool,
    /// Reading failed (transport or unreadable bytes), as opposed to the
    /// provider reporting an error in its stream.
    broken: bool,
}

impl ProviderEvents {
    /// `format` is the provider's (OpenAI or Anthropic).
    pub fn new(
        response: crate::upstream::client::Response,
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
            reader: Reader::new(response, SseEvents::new(), idle),
            parser,
            format,
            provider,
            done: false,
            broken: false,
        }
    }

    /// Whether reading failed (rather than the provider reporting an error).
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// Read until at least one event was added or the stream ended; `false`
    /// once it has ended (the last events are in `out`).
    pub async fn fill(&mut self, out: &mut Vec<ChatEvent>) -> bool {
        let start = out.len();
        while !self.done {
            // Everything already buffered goes into this batch.
            let read = match self.reader.ready() {
                Some(read) => read,
                None if out.len() > start => return true,
                None => self.reader.next().await,
            };
            match read {
                Read::Item(event) => self.push(&event, out),
                Read::End => {
                    if let Some(err) = self.stray_error() {
                        out.push(ChatEvent::Error(err));
                        self.done = true;
                        continue;
                    }
                    match &mut self.parser {
                        Parser::OpenAi(p) => p.finish(out),
                        Parser::Anthropic(p) => p.finish(out),
                    }
                    self.done = true;
                }
                Read::Failed(failure) => self.fail(out, failure.describe(Peer::Provider)),
            }
        }
        false
    }

    /// Parse one provider event; a provider error ends the stream.
    fn push(&mut self, event: &wire::sse::SseEvent, out: &mut Vec<ChatEvent>) {
        let before = out.len();
        let pushed = match &mut self.parser {
            Parser::OpenAi(p) => p.push(event, out),
            Parser::Anthropic(p) => p.push(event, out),
        };
        if let Err(e) = pushed {
            return self.fail(out, e.to_string());
        }
        if out[before..]
            .iter()
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
        }
    }

    /// The error of a body that held no event at all (a JSON error answered
    /// with a success status, say).
    fn stray_error(&self) -> Option<StreamError> {
        let bytes = self.reader.decoder().stray()?;
        if let Some(err) = error_in_body(self.format, bytes) {
            return Some(err);
        }
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return None;
        }
        let (message, _) = crate::upstream::http::parse_error_body(StatusCode::OK, bytes);
        Some(StreamError {
            status: 502,
            kind: translate::StreamErrorKind::UpstreamApi,
            message: format!(
                "the provider answered with a JSON body instead of an event stream: {}",
                crate::logging::mask_text(&message)
            ),
        })
    }

    fn fail(&mut self, out: &mut Vec<ChatEvent>, message: String) {
        tracing::warn!(
            provider = self.provider,
            "provider stream failed: {message}"
        );
        self.done = true;
        self.broken = true;
        out.push(ChatEvent::Error(StreamError {
            status: 502,
            kind: translate::StreamErrorKind::UpstreamApi,
            message,
        }));
    }
}

/// The error a provider put in a success answer's body (`{"error": ...}`
/// with no answer beside it), if it did.
///
/// Every non-streaming answer passes here, so the common case costs a byte
/// search: only a body naming `"error"` is read, and then only its three
/// top-level members that matter, borrowed, not as a whole `Value`.
pub fn error_in_body(format: WireFormat, body: &[u8]) -> Option<StreamError> {
    /// Whether a member is there at all (`null` included).
    #[derive(Default)]
    struct Present(bool);
    impl<'de> serde::Deserialize<'de> for Present {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            serde::de::IgnoredAny::deserialize(d).map(|_| Present(true))
        }
    }
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, default)]
        error: Option<&'a serde_json::value::RawValue>,
        #[serde(default)]
        content: Present,
        #[serde(default)]
        choices: Present,
    }
    memchr::memmem::find(body, b"\"error\"")?;
    let probe: Probe<'_> = serde_json::from_slice(body).ok()?;
    let answered = match format {
        WireFormat::Anthropic => probe.content.0,
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => probe.choices.0,
    };
    if answered {
        return None;
    }
    let raw = probe.error?.get();
    let error: serde_json::Value = serde_json::from_str(raw).ok()?;
    Some(match format {
        WireFormat::Anthropic => match serde_json::from_str::<wire::anthropic::ErrorDetail>(raw) {
            Ok(detail) => translate::anthropic::provider_error(&detail),
            Err(_) => translate::openai::provider_error(&error),
        },
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
            translate::openai::provider_error(&error)
        }
    })
}

/// The events of a provider's whole (non-streaming) answer.
pub fn answer_events(format: WireFormat, body: &[u8]) -> Result<Vec<ChatEvent>, GatewayError> {
    if let Some(err) = error_in_body(format, body) {
        return Err(err.into());
    }
    let unreadable = |e: serde_json::Error| {
        GatewayError::upstream(
            StatusCode::BAD_GATEWAY,
            format!("the provider's answer is not understood: {e}"),
        )
    };
    Ok(match format {
        WireFormat::Anthropic => {
            let resp: wire::anthropic::MessagesResponse =
                serde_json::from_slice(body).map_err(unreadable)?;
            translate::anthropic::response_events(&resp)
        }
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
            let resp: wire::openai::ChatCompletionResponse =
                serde_json::from_slice(body).map_err(unreadable)?;
            translate::openai::response_events(&resp)
        }
    })
}
