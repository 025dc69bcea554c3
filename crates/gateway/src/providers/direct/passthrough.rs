//! Native pass-through: the client speaks the provider's format, so its body
//! goes out as it came (only `model` rewritten, and for chat-completions
//! streams `stream_options.include_usage` set) and the provider's answer comes
//! back as it is.
//!
//! A stream is copied block by block, without re-encoding: the shared reader
//! cuts it into raw event blocks ([`crate::upstream::reader::SseBlocks`]) and
//! [`translate::watch`] reads usage and errors on the side. The blocks that
//! arrived together go to the client in one write ([`Batch`]), not one
//! write per event. [`NativeRelay::take`] decides, once per block, what the
//! client gets ([`NativeRelay::step`] waits for the next block,
//! [`NativeRelay::step_ready`] takes only what is already read); the two
//! phases of the answer use it:
//!
//! 1. before anything is sent, blocks are held until the first one with
//!    content: an error there (a provider error event, a cut, a broken
//!    connection) is still a plain HTTP error (interfaces.md 4);
//! 2. after that, a provider error event reaches the client as the provider
//!    sent it and ends the stream; a cut stream gets the format's error event
//!    appended, never a clean end; a finished chat-completions stream that
//!    lost its `[DONE]` gets one.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use translate::{ClientFormat, StreamError};

use super::Early;
use crate::error::GatewayError;
use crate::providers::WireFormat;
use crate::turn::{error_event, sse_response};
use crate::upstream::client::Response as ClientResponse;
use crate::upstream::reader::{Peer, RawEvent, Read, Reader, SseBlocks};
use crate::usage::{Unfinished, UsageTicket};
use translate::watch::{Ending, Watch};

/// Largest single provider event accepted.
const MAX_EVENT: usize = 16 * 1024 * 1024;
/// Largest non-streaming provider answer accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Response headers of the provider that a native client may rely on.
const FORWARDED_HEADER_PREFIXES: [&str; 2] = ["anthropic-ratelimit-", "x-ratelimit-"];

/// What one step of the relay gives the client.
enum Step {
    /// An event block to forward; `substantive` when it carries content or
    /// ends the answer.
    Block { bytes: Bytes, substantive: bool },
    /// The provider reported an error; `bytes` is its event as the client
    /// gets it (none when the event is one the client does not see).
    ProviderError {
        err: StreamError,
        bytes: Option<Bytes>,
    },
    /// The input ended: `tail` still goes to the client (a last event
    /// completed with its blank line, a missing `[DONE]`); `cut` when the
    /// answer was incomplete.
    End { tail: BytesMut, cut: bool },
    /// Reading failed (connection, idle timeout, an unreadable stream).
    Failed(String),
}

/// A natively relayed stream: the reader and the side view.
struct NativeRelay {
    reader: Reader<SseBlocks>,
    watch: Watch,
    format: WireFormat,
}

impl NativeRelay {
    /// Read until something for the client (blocks the client does not see,
    /// such as an unrequested usage chunk, are skipped).
    async fn step(&mut self) -> Step {
        loop {
            let read = self.reader.next().await;
            if let Some(step) = self.take(read) {
                return step;
            }
        }
    }

    /// The next step that needs no wait for the network, if there is one:
    /// what a relay adds to the write it is about to make.
    fn step_ready(&mut self) -> Option<Step> {
        loop {
            let read = self.reader.ready()?;
            if let Some(step) = self.take(read) {
                return Some(step);
            }
        }
    }

    /// What one read means for the client; `None` for a block it does not see.
    fn take(&mut self, read: Read<RawEvent>) -> Option<Step> {
        let raw = match read {
            Read::Item(raw) => raw,
            Read::End => {
                return Some(Step::End {
                    tail: self.ending_tail(BytesMut::new()),
                    cut: self.watch.ending() == Ending::Cut,
                })
            }
            Read::Failed(failure) => return Some(Step::Failed(failure.describe(Peer::Provider))),
        };
        let RawEvent {
            bytes,
            event,
            unterminated,
        } = raw;
        if unterminated && event.is_none() {
            // A body that is not an event stream at all (an error answered
            // with a success status): its message, not a silent end.
            if let Some(err) = stray_error(self.format, &bytes) {
                return Some(Step::ProviderError { err, bytes: None });
            }
        }
        let seen = event
            .as_ref()
            .map(|e| self.watch.observe(e))
            .unwrap_or_default();
        // An unterminated last block is passed on (with its blank line)
        // only when the answer is whole, or when it is the error that
        // explains why it is not.
        let forward = !seen.drop
            && (!unterminated || seen.error.is_some() || self.watch.ending() != Ending::Cut);
        let bytes = forward.then(|| terminated(bytes, unterminated));
        if let Some(err) = seen.error {
            return Some(Step::ProviderError { err, bytes });
        }
        if unterminated {
            // The last piece of the input: the end follows.
            let mut tail = BytesMut::new();
            if let Some(b) = bytes {
                tail.extend_from_slice(&b);
            }
            return Some(Step::End {
                tail: self.ending_tail(tail),
                cut: self.watch.ending() == Ending::Cut,
            });
        }
        bytes.map(|bytes| Step::Block {
            bytes,
            substantive: seen.substantive,
        })
    }

    /// `tail` with the `[DONE]` a finished chat-completions stream lost.
    fn ending_tail(&self, mut tail: BytesMut) -> BytesMut {
        if self.watch.ending() == Ending::MissingDone {
            tail.extend_from_slice(wire::sse::DONE);
        }
        tail
    }
}

/// The error in a body that arrived where an event stream should have.
fn stray_error(format: WireFormat, bytes: &[u8]) -> Option<StreamError> {
    if let Some(err) = super::stream::error_in_body(format, bytes) {
        return Some(err);
    }
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    let (message, _) = crate::upstream::http::parse_error_body(StatusCode::OK, bytes);
    Some(cut_error(format!(
        "the provider answered with a JSON body instead of an event stream: {}",
        crate::logging::mask_text(&message)
    )))
}

/// A block as the client gets it: an unterminated one ends with its blank line.
fn terminated(bytes: Bytes, unterminated: bool) -> Bytes {
    if !unterminated {
        return bytes;
    }
    let mut whole = BytesMut::with_capacity(bytes.len() + 2);
    whole.extend_from_slice(&bytes);
    whole.extend_from_slice(b"\n\n");
    whole.freeze()
}

/// The least room a batch of several blocks starts with.
const MIN_BATCH: usize = 4 * 1024;

/// Event blocks gathered for one write to the client: one block as it
/// came, several copied into one buffer.
#[derive(Default)]
struct Batch {
    one: Option<Bytes>,
    many: BytesMut,
}

impl Batch {
    fn push(&mut self, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        if self.one.is_none() && self.many.is_empty() {
            self.one = Some(bytes);
            return;
        }
        if let Some(first) = self.one.take() {
            // Room for several more blocks of this size without regrowing.
            self.many
                .reserve(MIN_BATCH.max(4 * (first.len() + bytes.len())));
            self.many.extend_from_slice(&first);
        }
        self.many.extend_from_slice(&bytes);
    }

    /// The gathered bytes, leaving the batch empty; `None` when there are none.
    fn take(&mut self) -> Option<Bytes> {
        self.one
            .take()
            .or_else(|| (!self.many.is_empty()).then(|| self.many.split().freeze()))
    }
}

/// A relayed stream after its first content, with its usage account.
/// Dropped before the stream ended (the client went away), it notes the
/// usage seen so far.
struct Relayed {
    relay: NativeRelay,
    state: Unfinished,
}

impl Relayed {
    /// The provider's stream failed: note its usage and status; the error
    /// event is the stream's end.
    fn failed(&mut self, status: u16) {
        if let Some(t) = self.state.usage() {
            t.add_usage(&self.relay.watch.usage());
            t.stream_failed(status);
        }
        self.state.finish();
    }

    /// The stream ended properly: note its usage.
    fn completed(&mut self, provider: &'static str) {
        self.state.finish();
        log_stream_usage(provider, &self.relay.watch, self.state.usage());
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        if !self.state.is_finished() {
            if let Some(t) = self.state.usage() {
                t.add_usage(&self.relay.watch.usage());
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
    resp: ClientResponse,
    format: ClientFormat,
    strip_usage: bool,
    idle: Duration,
    provider: &'static str,
    usage: Option<UsageTicket>,
) -> Result<Response, Early> {
    let forwarded = forwarded_headers(resp.headers());
    let mut relay = NativeRelay {
        reader: Reader::new(resp, SseBlocks::new(MAX_EVENT), idle),
        watch: match format {
            ClientFormat::Anthropic => Watch::anthropic(),
            ClientFormat::OpenAi => Watch::openai(strip_usage),
        },
        format: match format {
            ClientFormat::Anthropic => WireFormat::Anthropic,
            ClientFormat::OpenAi => WireFormat::OpenAi,
        },
    };

    // Phase 1: hold events until the first one with content (or the end).
    let mut held: Vec<Bytes> = Vec::new();
    let over = loop {
        match relay.step().await {
            Step::Block { bytes, substantive } => {
                held.push(bytes);
                if substantive {
                    break false;
                }
            }
            Step::ProviderError { err, .. } => return Err(Early::Answered(err.into())),
            Step::End { cut: true, .. } => {
                return Err(Early::Answered(GatewayError::upstream(
                    StatusCode::BAD_GATEWAY,
                    format!("{provider} ended the stream before the answer began"),
                )))
            }
            Step::End { tail, cut: false } => {
                if !tail.is_empty() {
                    held.push(tail.freeze());
                }
                break true;
            }
            Step::Failed(message) => {
                return Err(Early::Broken(GatewayError::upstream(
                    StatusCode::BAD_GATEWAY,
                    message,
                )))
            }
        }
    };

    // Phase 2: the client has its answer; relay the rest as it comes.
    if let Some(ticket) = &usage {
        ticket.first_token();
    }
    let mut relayed = Relayed {
        relay,
        state: Unfinished::new(usage),
    };
    let body = async_stream::stream! {
        let mut batch = Batch::default();
        for block in held {
            batch.push(block);
        }
        if over {
            if let Some(bytes) = batch.take() {
                yield Ok::<_, Infallible>(bytes);
            }
            relayed.completed(provider);
            return;
        }
        loop {
            // What has already been read goes out in one write; only then
            // does the relay wait for the provider again.
            let ready = loop {
                match relayed.relay.step_ready() {
                    Some(Step::Block { bytes, .. }) => batch.push(bytes),
                    other => break other,
                }
            };
            let step = match ready {
                Some(step) => step,
                None => {
                    if let Some(bytes) = batch.take() {
                        yield Ok(bytes);
                    }
                    relayed.relay.step().await
                }
            };
            match step {
                Step::Block { bytes, .. } => batch.push(bytes),
                Step::ProviderError { err, bytes } => {
                    tracing::warn!(
                        provider,
                        status = err.status,
                        "provider error in the stream: {}",
                        err.message
                    );
                    relayed.failed(err.status);
                    if let Some(bytes) = bytes {
                        batch.push(bytes);
                    }
                    if let Some(bytes) = batch.take() {
                        yield Ok(bytes);
                    }
                    return;
                }
                Step::End { mut tail, cut } => {
                    if cut {
                        let message =
                            format!("{provider} ended the stream before the answer was complete");
                        tracing::warn!(provider, "{message}");
                        let err = cut_error(message);
                        relayed.failed(err.status);
                        error_event(format, &err, &mut tail);
                    } else {
                        relayed.completed(provider);
                    }
                    batch.push(tail.freeze());
                    if let Some(bytes) = batch.take() {
                        yield Ok(bytes);
                    }
                    return;
                }
                Step::Failed(message) => {
                    tracing::warn!(provider, "{message}");
                    let err = cut_error(message);
                    relayed.failed(err.status);
                    let mut tail = BytesMut::new();
                    error_event(format, &err, &mut tail);
                    batch.push(tail.freeze());
                    if let Some(bytes) = batch.take() {
                        yield Ok(bytes);
                    }
                    return;
                }
            }
        }
    };
    let mut response = sse_response(axum::body::Body::from_stream(body));
    response.headers_mut().extend(forwarded);
    Ok(response)
}

/// Relay a non-streaming answer: the provider's JSON body as it is (an
/// error object in a success answer becomes the provider's error); its
/// usage is noted on `usage`.
pub async fn whole(
    resp: ClientResponse,
    format: WireFormat,
    timeout: Duration,
    provider: &'static str,
    usage: Option<&UsageTicket>,
) -> Result<Response, Early> {
    let forwarded = forwarded_headers(resp.headers());
    let body = read_body(resp, timeout).await.map_err(Early::Broken)?;
    if let Some(err) = super::stream::error_in_body(format, &body) {
        return Err(Early::Answered(err.into()));
    }
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
pub async fn read_body(mut resp: ClientResponse, timeout: Duration) -> Result<Bytes, GatewayError> {
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
    note_relayed(provider, &watch.usage(), ticket, "stream");
}

/// Note a relayed answer's usage on its ticket (which feeds the usage
/// record and `gateway_tokens_total`) and, at debug level, in the log: at
/// info, the access line is the one line a request writes.
fn note_relayed(
    provider: &'static str,
    usage: &translate::Usage,
    ticket: Option<&UsageTicket>,
    what: &'static str,
) {
    if let Some(t) = ticket {
        t.add_usage(usage);
    }
    tracing::debug!(
        provider,
        input_tokens = usage.input_tokens,
        output_tokens = usage.output_tokens,
        cache_read_tokens = usage.cache_read_tokens,
        cache_write_tokens = usage.cache_write_tokens,
        "{what} relayed"
    );
}

fn log_whole_usage(provider: &'static str, body: &[u8], ticket: Option<&UsageTicket>) {
    #[derive(serde::Deserialize)]
    struct WithUsage {
        #[serde(default)]
        usage: Option<BodyUsage>,
    }
    let usage = serde_json::from_slice::<WithUsage>(body)
        .ok()
        .and_then(|w| w.usage)
        .map(BodyUsage::canonical)
        .unwrap_or_default();
    note_relayed(provider, &usage, ticket, "answer");
}

/// The `usage` object of a whole answer in either format, read straight
/// into its numbers (no `Value` map to look keys up in).
#[derive(serde::Deserialize)]
struct BodyUsage {
    // Chat completions.
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptTokensDetails>,
    // Messages.
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(serde::Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}

impl BodyUsage {
    fn canonical(self) -> translate::Usage {
        let n = |v: Option<u64>| v.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        if self.prompt_tokens.is_some() || self.completion_tokens.is_some() {
            // Chat completions: prompt_tokens counts cached tokens too.
            let cached = n(self.prompt_tokens_details.and_then(|d| d.cached_tokens));
            translate::Usage {
                input_tokens: n(self.prompt_tokens).map(|p| p.saturating_sub(cached.unwrap_or(0))),
                output_tokens: n(self.completion_tokens),
                cache_read_tokens: cached,
                cache_write_tokens: None,
            }
        } else {
            translate::Usage {
                input_tokens: n(self.input_tokens),
                output_tokens: n(self.output_tokens),
                cache_read_tokens: n(self.cache_read_input_tokens),
                cache_write_tokens: n(self.cache_creation_input_tokens),
            }
        }
    }
}

fn forwarded_headers(headers: &axum::http::HeaderMap) -> axum::http::HeaderMap {
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
