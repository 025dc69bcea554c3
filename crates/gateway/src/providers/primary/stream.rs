//! Reading a `primary` answer: the call is sent with the retry policy and the
//! bearer token of the request's token source ([`PrimaryAuth`]), and the
//! binary event stream that answers is decoded frame by frame (both CRCs
//! checked, [`crate::upstream::reader::Frames`]) and parsed into `ChatEvent`s
//! ([`EventSource`]).
//!
//! Time limits: the status line and the first event must arrive within
//! `first_token_timeout` (the upstream may hold its headers back until the
//! first token is ready), else the call is retried up to `http_max_retries`
//! times; after that, the gap between two reads is bounded by
//! `http_request_timeout`, so a healthy long stream is never cut.

use axum::http::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use axum::http::StatusCode;
use bytes::Bytes;
use translate::primary::{ParserOptions, StreamParser, StreamSummary};
use translate::{ChatEvent, StreamError};

use super::credentials::per_user::PrimaryAuth;
use super::models::ResolvedModel;
use super::request::bearer_header;
use crate::error::GatewayError;
use crate::providers::leading_error;
use crate::telemetry::{self, UpstreamFailure};
use crate::upstream::http::{send_with_retry, Outgoing};
use crate::upstream::reader::{Failure, Frames, Peer, Read, Reader};
use crate::upstream::Upstream;

/// What one read from the upstream gave.
#[derive(Debug)]
pub enum Step {
    /// Events were added; the stream goes on.
    More,
    /// The stream is over; the final events were added.
    Done(StreamSummary),
}

/// How reading an answer stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The connection broke or the body ended inside a frame: the answer
    /// was cut short, like one that ends without its completion signal.
    Cut,
    /// Nothing arrived for the idle timeout.
    Stalled,
    /// The bytes were not a valid event stream (a CRC, a size limit).
    Corrupt,
}

/// An open upstream answer, read as `ChatEvent` batches.
pub struct EventSource {
    reader: Reader<Frames>,
    parser: StreamParser,
    done: bool,
    /// Why reading stopped early, when it did (an error event was emitted).
    interrupted: Option<Interruption>,
    /// What the parser still held when a cut stopped it (text behind a
    /// split tag, the end of an open tool call, usage and stop): a
    /// truncation recovery continues from it instead of the error.
    cut_tail: Vec<ChatEvent>,
}

impl EventSource {
    fn new(reader: Reader<Frames>, parser: StreamParser) -> Self {
        EventSource {
            reader,
            parser,
            done: false,
            interrupted: None,
            cut_tail: Vec::new(),
        }
    }

    /// Why reading stopped early, if it did.
    pub fn interrupted(&self) -> Option<Interruption> {
        self.interrupted
    }

    /// The events the parser held when a cut stopped the answer.
    pub fn take_cut_tail(&mut self) -> Vec<ChatEvent> {
        std::mem::take(&mut self.cut_tail)
    }

    /// Read until at least one event was produced or the stream ended.
    ///
    /// Transport failures, timeouts and corrupt frames end the stream with a
    /// `ChatEvent::Error` (never a silent cut).
    pub async fn fill(&mut self, out: &mut Vec<ChatEvent>) -> Step {
        if self.done {
            return Step::Done(self.parser.finish(out));
        }
        let start = out.len();
        loop {
            // Everything already buffered goes into this batch; wait for
            // the network only when nothing is.
            let read = match self.reader.ready() {
                Some(read) => read,
                None if out.len() > start => return Step::More,
                None => self.reader.next().await,
            };
            match read {
                Read::Item(frame) => match frame.message() {
                    Ok(msg) => self.parser.push(&msg, out),
                    Err(e) => {
                        let message = format!("malformed event-stream message: {e}");
                        return self.fail(out, Interruption::Corrupt, message);
                    }
                },
                Read::End => {
                    self.done = true;
                    return Step::Done(self.parser.finish(out));
                }
                Read::Failed(failure) => {
                    let kind = match failure {
                        Failure::Connection(_) | Failure::Truncated(_) => Interruption::Cut,
                        Failure::Idle(_) => Interruption::Stalled,
                        Failure::Decode(_) => Interruption::Corrupt,
                    };
                    return self.fail(out, kind, failure.describe(Peer::Upstream));
                }
            }
        }
    }

    fn fail(&mut self, out: &mut Vec<ChatEvent>, kind: Interruption, message: String) -> Step {
        tracing::warn!("primary stream failed: {message}");
        self.done = true;
        self.interrupted = Some(kind);
        let mut tail = Vec::new();
        let mut summary = self.parser.finish(&mut tail);
        if kind == Interruption::Cut {
            self.cut_tail = tail;
        }
        let err = StreamError {
            status: StatusCode::BAD_GATEWAY.as_u16(),
            kind: translate::StreamErrorKind::UpstreamApi,
            message,
        };
        summary.error = Some(err.clone());
        out.push(ChatEvent::Error(err));
        Step::Done(summary)
    }
}

/// Send the call with the access tokens of `auth` and wait for its first events.
///
/// Returns the open source, the first batch of events and whether that batch
/// already ended the stream. A first event that does not come within
/// `first_token_timeout` makes a new attempt (up to `http_max_retries`).
pub async fn open(
    upstream: &Upstream,
    auth: &PrimaryAuth,
    body: Bytes,
    model: &ResolvedModel,
    extract_thinking: bool,
) -> Result<(EventSource, Vec<ChatEvent>, Option<StreamSummary>), GatewayError> {
    let mut policy = upstream.policy.clone();
    // The upstream may hold its headers until the first token is ready.
    policy.request_timeout = policy.request_timeout.min(upstream.first_token);
    let url = auth.chat_url().get()?;
    let mut late_retries = 0u32;
    loop {
        let response = send_with_retry(
            "primary",
            &policy,
            &upstream.http,
            |_| {
                let body = body.clone();
                let url = url.clone();
                async move {
                    let token = auth.access_token().await?;
                    let mut headers = HeaderMap::with_capacity(3);
                    headers.insert(AUTHORIZATION, bearer_header(&token)?);
                    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    headers.insert(
                        ACCEPT,
                        HeaderValue::from_static("application/vnd.amazon.eventstream"),
                    );
                    Ok(Outgoing::post(url, headers, body))
                }
            },
            || async { auth.force_refresh().await },
        )
        .await
        .map_err(|e| auth.explain(e.into()))?;
        let parser = StreamParser::new(ParserOptions {
            extract_thinking,
            context_window: model.context_window,
            claude_tokens: translate::tokens::is_claude(&model.id),
        });
        let reader = Reader::new(response, Frames::new(), upstream.idle);
        let mut source = EventSource::new(reader, parser);
        let mut first = Vec::new();
        match tokio::time::timeout(upstream.first_token, source.fill(&mut first)).await {
            Ok(Step::More) => return Ok((source, first, None)),
            // The connection broke, stalled or carried no event stream before
            // any content: nothing reached the client, so it is asked again
            // (the upstream's own exceptions are its answer and are not).
            Ok(Step::Done(_))
                if source.interrupted().is_some()
                    && leading_error(&first).is_some()
                    && late_retries < policy.max_retries =>
            {
                late_retries += 1;
                telemetry::meters().upstream_retry(telemetry::provider_index("primary"));
                tracing::warn!(
                    attempt = late_retries,
                    "the upstream answer broke before any content; retrying"
                );
            }
            Ok(Step::Done(summary)) => return Ok((source, first, Some(summary))),
            Err(_) if late_retries < policy.max_retries => {
                late_retries += 1;
                first_token_missed();
                telemetry::meters().upstream_retry(telemetry::provider_index("primary"));
                tracing::warn!(
                    attempt = late_retries,
                    "no first event within {}s; retrying",
                    upstream.first_token.as_secs()
                );
            }
            Err(_) => {
                first_token_missed();
                return Err(GatewayError::Upstream {
                    status: StatusCode::GATEWAY_TIMEOUT,
                    message: format!(
                        "the upstream sent no first event within {}s ({} attempts)",
                        upstream.first_token.as_secs(),
                        late_retries + 1
                    ),
                    retry_after: None,
                });
            }
        }
    }
}

/// No first event within `first_token_timeout`: an upstream timeout in the
/// metrics.
fn first_token_missed() {
    telemetry::meters().upstream_error(
        telemetry::provider_index("primary"),
        UpstreamFailure::Timeout,
    );
}
