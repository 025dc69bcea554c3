//! Native pass-through: the client speaks the provider's format, so its body
//! goes out as it came (only `model` rewritten, and for chat-completions
//! streams `stream_options.include_usage` set) and the provider's answer comes
//! back as it is.
//!
//! Streams are copied event by event, without re-encoding ([`super::sse_blocks`]
//! finds the boundaries, [`super::watch`] reads usage and errors on the side).
//! Before anything is sent to the client, events are held until the first one
//! with content: an error there is still a plain HTTP error (interfaces.md 4).
//! After that, a provider error event reaches the client as the provider sent
//! it and ends the stream; a cut stream gets the format's error event
//! appended, never a clean end; a finished chat-completions stream that lost
//! its `[DONE]` gets one.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use translate::{ClientFormat, StreamError};
use wire::sse::{SseEvent, SseParser};

use super::respond::{self, Unfinished};
use super::sse_blocks::BlockSplitter;
use super::watch::{Ending, Watch};
use crate::error::GatewayError;
use crate::usage::UsageTicket;

/// Largest single provider event accepted.
const MAX_EVENT: usize = 16 * 1024 * 1024;
/// Largest non-streaming provider answer accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Response headers of the provider that a native client may rely on.
const FORWARDED_HEADER_PREFIXES: [&str; 2] = ["anthropic-ratelimit-", "x-ratelimit-"];

/// One read from the provider.
enum Step {
    /// A whole event block, with the event it holds (none for comments).
    Block(Bytes, Option<SseEvent>),
    /// End of input; `rest` is an unterminated last piece, if any.
    End {
        rest: Option<(Bytes, Option<SseEvent>)>,
    },
    Failed(String),
}

/// Reads a provider stream as raw blocks plus their parsed events.
struct Reader {
    response: reqwest::Response,
    splitter: BlockSplitter,
    parser: SseParser,
    idle: Duration,
    ended: bool,
}

impl Reader {
    fn new(response: reqwest::Response, idle: Duration) -> Self {
        Reader {
            response,
            splitter: BlockSplitter::new(MAX_EVENT),
            parser: SseParser::with_limits(MAX_EVENT, MAX_EVENT),
            idle,
            ended: false,
        }
    }

    async fn next(&mut self) -> Step {
        if self.ended {
            return Step::End { rest: None };
        }
        loop {
            match self.splitter.next_block() {
                Ok(Some(block)) => {
                    self.parser.feed(&block);
                    return match self.parser.next_event() {
                        Ok(event) => Step::Block(block, event),
                        Err(e) => self.fail(format!("unreadable provider stream: {e}")),
                    };
                }
                Ok(None) => {}
                Err(e) => return self.fail(e.to_string()),
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.splitter.feed(&chunk),
                Ok(Ok(None)) => {
                    self.ended = true;
                    let rest = self.splitter.take_rest().map(|rest| {
                        self.parser.feed(&rest);
                        let event = self.parser.finish().ok().flatten();
                        (rest, event)
                    });
                    return Step::End { rest };
                }
                Ok(Err(e)) => return self.fail(format!("the provider connection failed: {e}")),
                Err(_) => {
                    return self.fail(format!(
                        "no data from the provider for {}s",
                        self.idle.as_secs()
                    ))
                }
            }
        }
    }

    fn fail(&mut self, message: String) -> Step {
        self.ended = true;
        Step::Failed(message)
    }
}

/// The side view of a relayed stream and its usage account. Dropped before
/// the stream ended (the client went away), it notes the usage seen so far.
struct Relayed {
    watch: Watch,
    state: Unfinished,
}

impl Relayed {
    /// The provider's stream failed: note its usage and status; the error
    /// event is the stream's end.
    fn failed(&mut self, status: u16) {
        if let Some(t) = self.state.usage() {
            t.add_usage(&self.watch.usage());
            t.stream_failed(status);
        }
        self.state.finish();
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        if !self.state.is_finished() {
            if let Some(t) = self.state.usage() {
                t.add_usage(&self.watch.usage());
            }
        }
    }
}

/// Relay a streaming answer. `strip_usage`: drop the chat-completions usage
/// chunk (the client did not ask for it; the gateway always does). The
/// response body reads the provider as the client takes the events (no task
/// in between), holds `usage` until the stream ends and notes the usage the
/// side view saw and how the stream ended.
pub async fn stream(
    resp: reqwest::Response,
    format: ClientFormat,
    strip_usage: bool,
    idle: Duration,
    provider: &'static str,
    usage: Option<UsageTicket>,
) -> Result<Response, GatewayError> {
    let forwarded = forwarded_headers(resp.headers());
    let mut reader = Reader::new(resp, idle);
    let mut watch = match format {
        ClientFormat::Anthropic => Watch::anthropic(),
        ClientFormat::OpenAi => Watch::openai(strip_usage),
    };

    // Hold events until the first one with content (or an end).
    let mut held: Vec<Bytes> = Vec::new();
    let over = loop {
        match reader.next().await {
            Step::Block(block, event) => {
                let seen = event.as_ref().map(|e| watch.observe(e)).unwrap_or_default();
                if let Some(err) = seen.error {
                    return Err(upstream_error(err));
                }
                if !seen.drop {
                    held.push(block);
                }
                if seen.substantive {
                    break false;
                }
            }
            Step::End { rest } => {
                // Ended before any content: complete (an empty answer) or
                // not, it is decided here, before anything is sent.
                if let Some((bytes, event)) = rest {
                    let seen = event.as_ref().map(|e| watch.observe(e)).unwrap_or_default();
                    if let Some(err) = seen.error {
                        return Err(upstream_error(err));
                    }
                    if !seen.drop {
                        let mut whole = BytesMut::from(&bytes[..]);
                        whole.extend_from_slice(b"\n\n");
                        held.push(whole.freeze());
                    }
                }
                match watch.ending() {
                    Ending::Cut => {
                        return Err(GatewayError::upstream(
                            StatusCode::BAD_GATEWAY,
                            format!("{provider} ended the stream before the answer began"),
                        ))
                    }
                    Ending::MissingDone => held.push(Bytes::from_static(wire::sse::DONE)),
                    Ending::Complete => {}
                }
                break true;
            }
            Step::Failed(message) => {
                return Err(GatewayError::upstream(StatusCode::BAD_GATEWAY, message))
            }
        }
    };

    let mut relay = Relayed {
        watch,
        state: Unfinished::new(usage),
    };
    let body = async_stream::stream! {
        for block in held {
            yield Ok::<_, Infallible>(block);
        }
        if over {
            relay.state.finish();
            log_stream_usage(provider, &relay.watch, relay.state.usage());
            return;
        }
        loop {
            match reader.next().await {
                Step::Block(block, event) => {
                    let seen = event.as_ref().map(|e| relay.watch.observe(e)).unwrap_or_default();
                    if let Some(err) = seen.error {
                        tracing::warn!(
                            provider,
                            status = err.status,
                            "provider error in the stream: {}",
                            err.message
                        );
                        relay.failed(err.status);
                        if !seen.drop {
                            yield Ok(block);
                        }
                        return;
                    }
                    if !seen.drop {
                        yield Ok(block);
                    }
                }
                Step::End { rest } => {
                    let mut tail = BytesMut::new();
                    if let Some((bytes, event)) = rest {
                        let seen = event.as_ref().map(|e| relay.watch.observe(e)).unwrap_or_default();
                        let whole = relay.watch.ending() != Ending::Cut || seen.error.is_some();
                        if whole && !seen.drop {
                            // The last event lacked its blank line: end it for the client.
                            tail.extend_from_slice(&bytes);
                            tail.extend_from_slice(b"\n\n");
                        }
                        if let Some(err) = &seen.error {
                            relay.failed(err.status);
                            yield Ok(tail.freeze());
                            return;
                        }
                    }
                    match relay.watch.ending() {
                        Ending::Complete => {}
                        Ending::MissingDone => tail.extend_from_slice(wire::sse::DONE),
                        Ending::Cut => {
                            let message = format!(
                                "{provider} ended the stream before the answer was complete"
                            );
                            tracing::warn!(provider, "{message}");
                            let err = cut_error(message);
                            relay.failed(err.status);
                            error_event(format, &err, &mut tail);
                        }
                    }
                    relay.state.finish();
                    log_stream_usage(provider, &relay.watch, relay.state.usage());
                    if !tail.is_empty() {
                        yield Ok(tail.freeze());
                    }
                    return;
                }
                Step::Failed(message) => {
                    tracing::warn!(provider, "{message}");
                    let err = cut_error(message);
                    relay.failed(err.status);
                    let mut tail = BytesMut::new();
                    error_event(format, &err, &mut tail);
                    yield Ok(tail.freeze());
                    return;
                }
            }
        }
    };
    let mut response = respond::sse_response(axum::body::Body::from_stream(body));
    response.headers_mut().extend(forwarded);
    Ok(response)
}

/// Relay a non-streaming answer: the provider's JSON body as it is; its
/// usage is noted on `usage`.
pub async fn whole(
    resp: reqwest::Response,
    timeout: Duration,
    provider: &'static str,
    usage: Option<&UsageTicket>,
) -> Result<Response, GatewayError> {
    let forwarded = forwarded_headers(resp.headers());
    let body = read_body(resp, timeout).await?;
    log_whole_usage(provider, &body, usage);
    let mut response = (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    response.headers_mut().extend(forwarded);
    Ok(response)
}

/// The whole body of a provider answer, bounded in size and time.
pub async fn read_body(
    mut resp: reqwest::Response,
    timeout: Duration,
) -> Result<Bytes, GatewayError> {
    let read = async {
        let mut body = BytesMut::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("reading the provider's answer failed: {e}"),
            )
        })? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(GatewayError::upstream(
                    StatusCode::BAD_GATEWAY,
                    format!("the provider's answer is larger than {MAX_BODY} bytes"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or_else(|_| {
            Err(GatewayError::upstream(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the provider's answer did not complete within {}s",
                    timeout.as_secs()
                ),
            ))
        })
}

fn log_stream_usage(provider: &'static str, watch: &Watch, ticket: Option<&UsageTicket>) {
    let usage = watch.usage();
    if let Some(t) = ticket {
        t.add_usage(&usage);
    }
    tracing::info!(
        provider,
        input_tokens = usage.input_tokens,
        output_tokens = usage.output_tokens,
        cache_read_tokens = usage.cache_read_tokens,
        cache_write_tokens = usage.cache_write_tokens,
        "stream relayed"
    );
}

fn log_whole_usage(provider: &'static str, body: &[u8], ticket: Option<&UsageTicket>) {
    #[derive(serde::Deserialize)]
    struct WithUsage {
        #[serde(default)]
        usage: Option<serde_json::Value>,
    }
    let usage = serde_json::from_slice::<WithUsage>(body)
        .ok()
        .and_then(|w| w.usage);
    if let (Some(t), Some(u)) = (ticket, usage.as_ref()) {
        t.add_usage(&usage_of_body(u));
    }
    let usage = usage.map(|u| u.to_string()).unwrap_or_default();
    tracing::info!(provider, usage = %usage, "answer relayed");
}

/// The canonical usage of a whole answer's `usage` object, in either format
/// (input tokens exclude cache reads and writes, as everywhere).
fn usage_of_body(u: &serde_json::Value) -> translate::Usage {
    let n = |v: &serde_json::Value| v.as_u64().map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    if u.get("prompt_tokens").is_some() || u.get("completion_tokens").is_some() {
        // Chat completions: prompt_tokens counts cached tokens too.
        let cached = n(&u["prompt_tokens_details"]["cached_tokens"]);
        translate::Usage {
            input_tokens: n(&u["prompt_tokens"]).map(|p| p.saturating_sub(cached.unwrap_or(0))),
            output_tokens: n(&u["completion_tokens"]),
            cache_read_tokens: cached,
            cache_write_tokens: None,
        }
    } else {
        translate::Usage {
            input_tokens: n(&u["input_tokens"]),
            output_tokens: n(&u["output_tokens"]),
            cache_read_tokens: n(&u["cache_read_input_tokens"]),
            cache_write_tokens: n(&u["cache_creation_input_tokens"]),
        }
    }
}

fn forwarded_headers(headers: &reqwest::header::HeaderMap) -> axum::http::HeaderMap {
    headers
        .iter()
        .filter(|(name, _)| {
            FORWARDED_HEADER_PREFIXES
                .iter()
                .any(|p| name.as_str().starts_with(p))
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

fn cut_error(message: String) -> StreamError {
    StreamError {
        status: 502,
        kind: translate::StreamErrorKind::UpstreamApi,
        message,
    }
}

/// The client format's in-stream error event.
pub fn error_event(format: ClientFormat, err: &StreamError, out: &mut BytesMut) {
    match format {
        ClientFormat::OpenAi => translate::openai::error_event(err, out),
        ClientFormat::Anthropic => translate::anthropic::error_event(err, out),
    }
}

/// A provider's error before anything reached the client: a plain HTTP error
/// with the provider's status and message.
pub fn upstream_error(err: StreamError) -> GatewayError {
    GatewayError::Upstream {
        status: StatusCode::from_u16(err.status).unwrap_or(StatusCode::BAD_GATEWAY),
        message: err.message,
        retry_after: None,
    }
}
