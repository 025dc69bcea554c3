//! The one loop that reads an upstream answer's body: bytes in, decoded items
//! out. Every relay mode (primary's event stream, a direct provider's SSE
//! read as events, the native pass-through) plugs its decoder into a
//! [`Reader`] and gets one of three outcomes per read ([`Read`]): an item,
//! the end of input, or a failure with its reason. The reader owns what is
//! the same for all of them: the idle timeout between two reads, feeding the
//! decoder, the end of input (where the decoder says whether it was cut
//! inside an item) and the wording of each failure.

use std::time::Duration;

use bytes::{Bytes, BytesMut};

/// A decoder of one wire format over the bytes read so far.
pub trait Decode {
    type Item;
    /// Take in the next chunk of the body.
    fn feed(&mut self, chunk: &[u8]);
    /// The next whole item buffered, `Ok(None)` until more input arrives.
    fn decode(&mut self) -> Result<Option<Self::Item>, DecodeError>;
    /// The input has ended: the last item (an unterminated one some formats
    /// allow), `Ok(None)` when nothing is left, an error when the input
    /// stopped inside an item.
    fn finish(&mut self) -> Result<Option<Self::Item>, DecodeError>;
}

/// Why the decoder refused the bytes (the text names the format's problem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

/// Why reading stopped before the end of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The connection broke (reset, body error).
    Connection(String),
    /// Nothing arrived for the idle timeout.
    Idle(Duration),
    /// The bytes are not the format's (corrupt frame, unreadable event).
    Decode(String),
    /// The body ended inside an item (a frame cut short).
    Truncated(String),
}

/// What one read gave.
#[derive(Debug)]
pub enum Read<T> {
    Item(T),
    /// The body ended and every item was handed out.
    End,
    Failed(Failure),
}

/// Who is on the other end, for the failure texts ("the upstream", "the provider").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Upstream,
    Provider,
}

impl Peer {
    fn as_str(self) -> &'static str {
        match self {
            Peer::Upstream => "upstream",
            Peer::Provider => "provider",
        }
    }
}

impl Failure {
    /// The sentence a log line and a client's error event carry.
    pub fn describe(&self, peer: Peer) -> String {
        match self {
            Failure::Connection(e) => format!("the {} connection failed: {e}", peer.as_str()),
            Failure::Idle(d) => format!("no data from the {} for {}s", peer.as_str(), d.as_secs()),
            Failure::Decode(e) | Failure::Truncated(e) => e.clone(),
        }
    }
}

/// An upstream body read through a decoder.
pub struct Reader<D> {
    response: super::client::Response,
    decoder: D,
    idle: Duration,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    /// The body ended; the decoder's last items are being handed out.
    Draining,
    Over,
}

impl<D: Decode> Reader<D> {
    /// Read `response` through `decoder`; `idle` bounds the wait for each chunk.
    pub fn new(response: super::client::Response, decoder: D, idle: Duration) -> Self {
        Reader {
            response,
            decoder,
            idle,
            state: State::Reading,
        }
    }

    /// The decoder, for state it keeps beside the items.
    pub fn decoder(&self) -> &D {
        &self.decoder
    }

    /// The next item, the end, or why reading stopped. After `End` or
    /// `Failed`, every further call answers `End`.
    pub async fn next(&mut self) -> Read<D::Item> {
        loop {
            if let Some(read) = self.ready() {
                return read;
            }
            match tokio::time::timeout(self.idle, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.decoder.feed(&chunk),
                Ok(Ok(None)) => self.state = State::Draining,
                Ok(Err(e)) => return self.fail(Failure::Connection(e.to_string())),
                Err(_) => return self.fail(Failure::Idle(self.idle)),
            }
        }
    }

    /// What can be had without waiting for the network: a buffered item,
    /// the end, or a decoding failure; `None` when the next read must wait.
    /// Relays drain this before they hand a batch on, so everything that
    /// arrived in one chunk goes to the client in one write.
    pub fn ready(&mut self) -> Option<Read<D::Item>> {
        match self.state {
            State::Over => Some(Read::End),
            State::Draining => Some(match self.decoder.finish() {
                Ok(Some(item)) => Read::Item(item),
                Ok(None) => {
                    self.state = State::Over;
                    Read::End
                }
                Err(DecodeError(e)) => self.fail(Failure::Truncated(e)),
            }),
            State::Reading => match self.decoder.decode() {
                Ok(Some(item)) => Some(Read::Item(item)),
                Ok(None) => None,
                Err(DecodeError(e)) => Some(self.fail(Failure::Decode(e))),
            },
        }
    }

    fn fail(&mut self, failure: Failure) -> Read<D::Item> {
        self.state = State::Over;
        Read::Failed(failure)
    }
}

/// AWS event-stream frames (the `primary` upstream): both CRCs checked, an
/// input that ends inside a frame is an error. A body that opens with a JSON
/// object instead (an error answered with a success status) is reported with
/// the upstream's message rather than as a corrupt frame.
#[derive(Debug, Default)]
pub struct Frames {
    decoder: wire::eventstream::Decoder,
    buf: BytesMut,
    decoded_any: bool,
}

impl Frames {
    pub fn new() -> Self {
        Frames {
            decoder: wire::eventstream::Decoder::new(),
            buf: BytesMut::with_capacity(16 * 1024),
            decoded_any: false,
        }
    }
}

impl Decode for Frames {
    type Item = wire::eventstream::Frame;

    fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    fn decode(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        match self.decoder.decode(&mut self.buf) {
            Ok(frame) => {
                self.decoded_any |= frame.is_some();
                Ok(frame)
            }
            Err(_) if !self.decoded_any && self.buf.first() == Some(&b'{') => {
                let (message, _) =
                    super::http::parse_error_body(axum::http::StatusCode::OK, &self.buf);
                Err(DecodeError(format!(
                    "the upstream answered with a JSON body instead of an event stream: {}",
                    crate::logging::mask_text(&message)
                )))
            }
            Err(e) => Err(DecodeError(format!("corrupt event-stream frame: {e}"))),
        }
    }

    fn finish(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        self.decoder
            .decode_eof(&mut self.buf)
            .map_err(|e| DecodeError(format!("the stream ended inside a frame: {e}")))
    }
}

/// Server-sent events, parsed (a cross-format relay reads their data).
/// Until the first event, the raw input is kept (up to [`STRAY_LIMIT`]
/// bytes), so a body that was not an event stream at all (an error answered
/// with a success status) can be reported for what it said.
#[derive(Debug)]
pub struct SseEvents {
    parser: wire::sse::SseParser,
    /// The input while no event has come out, else empty.
    stray: BytesMut,
    decoded_any: bool,
}

/// Most bytes kept of a body that has not yielded an event.
const STRAY_LIMIT: usize = 64 * 1024;

impl SseEvents {
    pub fn new() -> Self {
        SseEvents {
            parser: wire::sse::SseParser::new(),
            stray: BytesMut::new(),
            decoded_any: false,
        }
    }

    /// The input, when it ended without a single event.
    pub fn stray(&self) -> Option<&[u8]> {
        (!self.decoded_any && !self.stray.is_empty()).then_some(&self.stray[..])
    }
}

impl Default for SseEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl Decode for SseEvents {
    type Item = wire::sse::SseEvent;

    fn feed(&mut self, chunk: &[u8]) {
        if !self.decoded_any && self.stray.len() < STRAY_LIMIT {
            let room = STRAY_LIMIT - self.stray.len();
            self.stray
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        self.parser.feed(chunk);
    }

    fn decode(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        let event = self.parser.next_event().map_err(unreadable)?;
        self.saw(event.is_some());
        Ok(event)
    }

    fn finish(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        let event = self.parser.finish().map_err(unreadable)?;
        self.saw(event.is_some());
        Ok(event)
    }
}

impl SseEvents {
    fn saw(&mut self, event: bool) {
        if event && !self.decoded_any {
            self.decoded_any = true;
            self.stray = BytesMut::new();
        }
    }
}

fn unreadable(e: impl std::fmt::Display) -> DecodeError {
    DecodeError(format!("unreadable provider stream: {e}"))
}

/// Server-sent events as the raw bytes of each event block (forwarded as
/// they came) with the event they hold (`None` for a block without data),
/// from one scan of the bytes (`wire::sse`'s raw-span mode). An unterminated
/// last block at the end of input is flagged by [`RawEvent::unterminated`].
#[derive(Debug)]
pub struct SseBlocks {
    parser: wire::sse::SseParser,
}

/// One raw event block.
#[derive(Debug)]
pub struct RawEvent {
    pub bytes: Bytes,
    pub event: Option<wire::sse::SseEvent>,
    /// The input ended before the block's blank line.
    pub unterminated: bool,
}

impl SseBlocks {
    /// Blocks larger than `max_event` bytes are refused.
    pub fn new(max_event: usize) -> Self {
        SseBlocks {
            parser: wire::sse::SseParser::with_limits(max_event, max_event),
        }
    }
}

impl From<wire::sse::SseBlock> for RawEvent {
    fn from(block: wire::sse::SseBlock) -> Self {
        RawEvent {
            bytes: block.raw,
            event: block.event,
            unterminated: !block.terminated,
        }
    }
}

impl Decode for SseBlocks {
    type Item = RawEvent;

    fn feed(&mut self, chunk: &[u8]) {
        self.parser.feed(chunk);
    }

    fn decode(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        Ok(self
            .parser
            .next_block()
            .map_err(unreadable)?
            .map(RawEvent::from))
    }

    fn finish(&mut self) -> Result<Option<Self::Item>, DecodeError> {
        Ok(self
            .parser
            .finish_block()
            .map_err(unreadable)?
            .map(RawEvent::from))
    }
}
