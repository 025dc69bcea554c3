//! The incremental SSE parser.
//!
//! Raw bytes are buffered and only whole lines are looked at, so a multi-byte
//! UTF-8 character (or a CR LF pair) split across network chunks is never
//! seen in halves. Values are decoded once, when their line is complete
//! (`event`, `id`) or when the event is dispatched (`data`).
//!
//! The buffer always starts at the first byte of the current block (the
//! bytes up to and including the blank line that ends an event), so one scan
//! gives both the parsed event and the block's raw bytes: [`SseParser::next_block`]
//! hands the block out as a [`Bytes`] slice of the buffer (no copy), while
//! [`SseParser::next_event`] just drops it.
//!
//! An event's `data` sent on one line (as every provider sends it) is
//! copied once, straight out of the buffer; only data spread over several
//! `data` lines is joined first. The event names of the messages stream
//! cost no allocation (see [`EventName`]).

use std::borrow::Cow;
use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};

/// Default cap on one line, terminator excluded.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;
/// Default cap on one event's `data` (joined lines).
pub const DEFAULT_MAX_EVENT: usize = 16 * 1024 * 1024;
/// Default cap on one block's raw bytes (every line of it, terminators
/// included): room for an event of [`DEFAULT_MAX_EVENT`] plus its other lines.
pub const DEFAULT_MAX_BLOCK: usize = 32 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The most room an event's data buffer keeps between events.
const KEPT_DATA_CAPACITY: usize = 64 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event` field; `None` when absent or empty (WHATWG's default type `message`).
    pub event: Option<EventName>,
    /// The `data` lines joined with `"\n"`.
    pub data: String,
    /// The stream's last event id at dispatch: set by an `id` field in this or
    /// an earlier event, as WHATWG's `lastEventId`; `None` while unset or empty.
    pub id: Option<String>,
    /// The stream's reconnection time in ms, from the latest valid `retry`
    /// field so far (this event's or an earlier block's).
    pub retry: Option<u64>,
}

/// An event's name: the names a messages stream uses are borrowed from a
/// table (an allocation per event saved), any other is owned.
pub type EventName = Cow<'static, str>;

/// The event names read without allocating (the messages stream's, and
/// `error`, which every provider may send).
const KNOWN_NAMES: [&str; 8] = [
    "content_block_delta",
    "content_block_start",
    "content_block_stop",
    "message_delta",
    "message_start",
    "message_stop",
    "ping",
    "error",
];

/// One block of the stream, as received and as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseBlock {
    /// The block's bytes exactly as they arrived: every line up to and
    /// including the blank line that ends it (any line ends, comments, a
    /// leading BOM for the first block). The last block at end of input may
    /// lack its blank line, or be a cut-off fragment. Concatenated, the
    /// blocks are the input.
    pub raw: Bytes,
    /// The event the block dispatches; `None` for a block without `data`
    /// (comments only, `event:` or `id:` alone, a stray blank line).
    pub event: Option<SseEvent>,
    /// The block ends with its blank line; `false` only for the last block at
    /// end of input when the input stopped before one (a relay adds the
    /// blank line so its client sees the event end).
    pub terminated: bool,
}

/// Why the stream cannot be parsed further. Errors are final: every later call
/// returns the same error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("SSE line longer than {max} bytes")]
    LineTooLong { max: usize },
    #[error("SSE event data longer than {max} bytes")]
    EventTooLarge { max: usize },
    #[error("SSE event block longer than {max} bytes")]
    BlockTooLarge { max: usize },
    #[error("SSE field value is not valid UTF-8")]
    InvalidUtf8,
}

/// Incremental `text/event-stream` parser.
///
/// Rules (WHATWG): lines end in CR LF, LF or CR; a line starting with `:` is a
/// comment; `field: value` loses one leading space of the value; a line
/// without `:` is a field with an empty value; `data` lines are joined with
/// `"\n"`; a blank line dispatches the event, unless it had no `data` line;
/// `event`, `id` (ignored when it contains NUL) and `retry` (ignored unless all
/// ASCII digits and within `u64`) are read; other fields are ignored; a UTF-8
/// BOM opening the stream is skipped.
///
/// Our choices: a field value we keep that is not UTF-8 is
/// [`SseError::InvalidUtf8`] (the gateway must not hand corrupted text on);
/// and [`SseParser::finish`] treats end of input as the end of the last line
/// and of the last event, so an upstream that closes without the final blank
/// line does not lose its last event (WHATWG would discard it).
///
/// Two ways to read, over the same single scan: [`SseParser::next_event`] /
/// [`SseParser::finish`] give events; [`SseParser::next_block`] /
/// [`SseParser::finish_block`] give every block's raw bytes with its event
/// (the raw-span mode, for relaying a stream byte for byte). Use one pair per
/// stream: blocks whose events were taken with `next_event` are gone (and so
/// is the LF of a CR LF split right after a block that `next_event` ended).
///
/// Limits: a line over `max_line` bytes, an event whose data is over
/// `max_event` bytes, or a block over `max_block` raw bytes (its final line
/// ending aside) is an error before it is buffered further. When a line
/// breaks both size limits, the one it crossed first is reported.
#[derive(Debug)]
pub struct SseParser {
    /// Starts at the current block's first byte.
    buf: BytesMut,
    /// Start of the current line in `buf`.
    line: usize,
    /// `buf[line..scanned]` is known to hold no line terminator.
    scanned: usize,
    /// The last line ended with a CR at the very end of `buf`: an LF opening
    /// the next chunk belongs to that CR.
    skip_lf: bool,
    bom_checked: bool,
    eof: bool,
    max_line: usize,
    max_block: usize,
    failed: Option<SseError>,
    pending: Pending,
}

/// The event being built, and the stream state that outlives events.
#[derive(Debug)]
struct Pending {
    /// The latest `event` line's value (checked for UTF-8 when read), as
    /// offsets into the current block.
    event: Option<Range<usize>>,
    /// The first `data` line's value, as offsets into the current block.
    data_line: Option<Range<usize>>,
    /// From the second `data` line on: every value so far, each followed by
    /// `\n` (the last `\n` is dropped on dispatch).
    joined: Vec<u8>,
    last_id: String,
    retry: Option<u64>,
    max_event: usize,
}

/// A block ended: its length in `buf`, its event, and whether a blank line
/// ended it (rather than the end of input).
type Ended = (usize, Option<SseEvent>, bool);

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new()
    }
}

impl SseParser {
    /// A parser with [`DEFAULT_MAX_LINE`], [`DEFAULT_MAX_EVENT`] and
    /// [`DEFAULT_MAX_BLOCK`].
    pub fn new() -> Self {
        SseParser::with_limits(DEFAULT_MAX_LINE, DEFAULT_MAX_EVENT)
    }

    /// A parser refusing lines over `max_line` bytes and events whose data is
    /// over `max_event` bytes (blocks: [`DEFAULT_MAX_BLOCK`]).
    pub fn with_limits(max_line: usize, max_event: usize) -> Self {
        SseParser {
            buf: BytesMut::new(),
            line: 0,
            scanned: 0,
            skip_lf: false,
            bom_checked: false,
            eof: false,
            max_line,
            max_block: DEFAULT_MAX_BLOCK,
            failed: None,
            pending: Pending {
                event: None,
                data_line: None,
                joined: Vec::new(),
                last_id: String::new(),
                retry: None,
                max_event,
            },
        }
    }

    /// The same parser refusing blocks over `max_block` raw bytes.
    #[must_use]
    pub fn with_max_block(mut self, max_block: usize) -> Self {
        self.max_block = max_block;
        self
    }

    /// Buffers raw bytes; nothing is decoded until lines are complete.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete event, or `None` until more bytes are fed.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        self.events()
    }

    /// At end of input: returns the next event, treating the end as the end of
    /// the last line and of the last event. Call until it returns `None`.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        self.eof = true;
        self.events()
    }

    /// Raw-span mode: the next complete block with its event, or `None` until
    /// more bytes are fed. A block ending in CR at the very end of the input
    /// so far waits for the next byte, which may be its LF.
    pub fn next_block(&mut self) -> Result<Option<SseBlock>, SseError> {
        self.blocks()
    }

    /// Raw-span mode at end of input: the blocks still buffered, one per call,
    /// then whatever is left as a last block (an event missing its blank
    /// line, with that event as [`SseParser::finish`] would give it, or a
    /// cut-off fragment), then `None`.
    pub fn finish_block(&mut self) -> Result<Option<SseBlock>, SseError> {
        self.eof = true;
        self.blocks()
    }

    fn events(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            match self.poll(false)? {
                None => return Ok(None),
                Some((len, event, _)) => {
                    self.buf.advance(len);
                    if event.is_some() {
                        return Ok(event);
                    }
                }
            }
        }
    }

    fn blocks(&mut self) -> Result<Option<SseBlock>, SseError> {
        Ok(self.poll(true)?.map(|(len, event, terminated)| SseBlock {
            raw: self.buf.split_to(len).freeze(),
            event,
            terminated,
        }))
    }

    fn poll(&mut self, whole_crlf: bool) -> Result<Option<Ended>, SseError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let result = self.step(whole_crlf);
        match &result {
            Err(err) => self.failed = Some(err.clone()),
            // The caller takes the block out of `buf`: positions restart.
            Ok(Some(_)) => {
                self.line = 0;
                self.scanned = 0;
            }
            Ok(None) => {}
        }
        result
    }

    /// The limit that the current line and block cross first when they
    /// reach `end` bytes into the block, if any (the crossing point, not the
    /// order of the checks, decides, so the error is the same however the
    /// input was chunked).
    #[inline]
    fn over_limit(&self, end: usize) -> Option<SseError> {
        let line = end - self.line > self.max_line;
        let block = end > self.max_block;
        if !line && !block {
            return None;
        }
        let line_first = !block || self.line.saturating_add(self.max_line) <= self.max_block;
        Some(if line && line_first {
            SseError::LineTooLong { max: self.max_line }
        } else {
            SseError::BlockTooLarge {
                max: self.max_block,
            }
        })
    }

    /// Reads lines until a block ends. `whole_crlf`: a CR at the end of the
    /// buffer waits for the next byte rather than ending its line now.
    fn step(&mut self, whole_crlf: bool) -> Result<Option<Ended>, SseError> {
        if !self.bom_checked {
            if !self.eof && self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return Ok(None); // could still become a BOM
            }
            if self.buf.starts_with(BOM) {
                self.line = BOM.len();
                self.scanned = BOM.len();
            }
            self.bom_checked = true;
        }
        loop {
            if self.skip_lf {
                match self.buf.get(self.line) {
                    None if !self.eof => return Ok(None),
                    None => {}
                    // The CR ended the previous block (events only): its LF
                    // belongs to no block, so it is dropped rather than
                    // counted in the next one.
                    Some(&b'\n') if self.line == 0 => self.buf.advance(1),
                    Some(&b'\n') => {
                        self.line += 1;
                        self.scanned = self.line;
                    }
                    Some(_) => {}
                }
                self.skip_lf = false;
            }
            let rest = self.buf.get(self.scanned..).unwrap_or_default();
            let Some(at) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.scanned = self.buf.len();
                if let Some(err) = self.over_limit(self.buf.len()) {
                    return Err(err);
                }
                if !self.eof {
                    return Ok(None);
                }
                // End of input: the end of the last line and of the block.
                if self.line < self.buf.len() {
                    // Not blank, so it cannot dispatch by itself.
                    self.pending.line(&self.buf, self.line..self.buf.len())?;
                    self.line = self.buf.len();
                }
                let event = self.pending.dispatch(&self.buf)?;
                if self.buf.is_empty() && event.is_none() {
                    return Ok(None);
                }
                return Ok(Some((self.buf.len(), event, false)));
            };
            let end = self.scanned + at;
            if let Some(err) = self.over_limit(end) {
                return Err(err);
            }
            let mut next = end + 1;
            if self.buf.get(end) == Some(&b'\r') {
                match self.buf.get(end + 1) {
                    Some(&b'\n') => next += 1,
                    Some(_) => {}
                    None if self.eof => {}
                    None if whole_crlf => {
                        self.scanned = end;
                        return Ok(None);
                    }
                    None => self.skip_lf = true,
                }
            }
            let blank = end == self.line;
            let event = self.pending.line(&self.buf, self.line..end)?;
            self.line = next;
            self.scanned = next;
            if blank {
                return Ok(Some((next, event, true)));
            }
        }
    }
}

impl Pending {
    /// Applies one line of `block` (terminator removed); a blank line may dispatch.
    fn line(&mut self, block: &[u8], line: Range<usize>) -> Result<Option<SseEvent>, SseError> {
        let bytes = block.get(line.clone()).unwrap_or_default();
        if bytes.is_empty() {
            return self.dispatch(block);
        }
        let (field, value) = match memchr::memchr(b':', bytes) {
            Some(0) => return Ok(None), // comment
            Some(colon) => {
                // One leading space of the value is dropped.
                let space = usize::from(bytes.get(colon + 1) == Some(&b' '));
                let value = line.start + colon + 1 + space..line.end;
                (bytes.get(..colon).unwrap_or_default(), value)
            }
            None => (bytes, line.end..line.end),
        };
        let text = block.get(value.clone()).unwrap_or_default();
        match field {
            b"data" => self.data(block, value)?,
            b"event" => {
                utf8(text)?;
                self.event = Some(value);
            }
            b"id" if !text.contains(&0) => {
                self.last_id.clear();
                self.last_id.push_str(utf8(text)?);
            }
            b"retry" if !text.is_empty() && text.iter().all(u8::is_ascii_digit) => {
                // All digits, so the only failure is overflow: ignore that value.
                if let Ok(ms) = utf8(text)?.parse::<u64>() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// Adds one `data` line's value: the first is only noted where it lies;
    /// a second starts the joined copy.
    fn data(&mut self, block: &[u8], value: Range<usize>) -> Result<(), SseError> {
        let so_far = match &self.data_line {
            None => 0,
            Some(first) if self.joined.is_empty() => first.len() + 1,
            Some(_) => self.joined.len(),
        };
        if so_far + value.len() > self.max_event {
            return Err(SseError::EventTooLarge {
                max: self.max_event,
            });
        }
        let Some(first) = &self.data_line else {
            self.data_line = Some(value);
            return Ok(());
        };
        if self.joined.is_empty() {
            let first = block.get(first.clone()).unwrap_or_default();
            self.joined.extend_from_slice(first);
            self.joined.push(b'\n');
        }
        self.joined
            .extend_from_slice(block.get(value).unwrap_or_default());
        self.joined.push(b'\n');
        Ok(())
    }

    /// Ends the current event: returns it when it had data, and resets the
    /// per-event fields either way (`id` and `retry` are stream state and stay).
    fn dispatch(&mut self, block: &[u8]) -> Result<Option<SseEvent>, SseError> {
        let event = self.event.take();
        let Some(first) = self.data_line.take() else {
            return Ok(None);
        };
        let data = if self.joined.is_empty() {
            // Checked after the copy: the copy starts at an aligned address,
            // where the check reads whole words from the first byte.
            String::from_utf8(block.get(first).unwrap_or_default().to_vec())
                .map_err(|_| SseError::InvalidUtf8)
        } else {
            // Copied out at its size, so `self.joined` keeps its capacity for
            // the next such event; the room a rare large event took is given back.
            let joined = self
                .joined
                .get(..self.joined.len().saturating_sub(1)) // the last `\n` dropped
                .unwrap_or_default();
            let data = utf8(joined).map(str::to_owned);
            if self.joined.capacity() > KEPT_DATA_CAPACITY {
                self.joined = Vec::new();
            } else {
                self.joined.clear();
            }
            data
        }?;
        let event = event
            .map(|range| block.get(range).unwrap_or_default())
            .filter(|name| !name.is_empty())
            .map(event_name);
        Ok(Some(SseEvent {
            event,
            data,
            id: (!self.last_id.is_empty()).then(|| self.last_id.clone()),
            retry: self.retry,
        }))
    }
}

/// An `event` line's value, already checked for UTF-8.
fn event_name(name: &[u8]) -> EventName {
    match KNOWN_NAMES.iter().find(|known| known.as_bytes() == name) {
        Some(known) => Cow::Borrowed(known),
        // Checked when its line was read: nothing is replaced.
        None => Cow::Owned(String::from_utf8_lossy(name).into_owned()),
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, SseError> {
    std::str::from_utf8(bytes).map_err(|_| SseError::InvalidUtf8)
}
