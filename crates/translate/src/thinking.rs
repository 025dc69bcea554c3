//! Streaming splitter for reasoning the model writes inline as
//! `<thinking>...</thinking>` (also `<think>`, `<reasoning>`, `<thought>`).
//!
//! Rules, chosen to be exact whatever the chunking:
//! - A block is recognised only at the very start of the answer (leading
//!   whitespace allowed). Any other first character means there is no block,
//!   and later tags pass through as plain text.
//! - Tags may be split across pushes at any point. At the start, text is held
//!   only while it can still become an open tag; inside the block, only the
//!   tail that could still become the close tag (plus trailing whitespace) is
//!   held, so thinking streams with a lag of at most a few bytes.
//! - Whitespace around the reasoning is dropped (`<thinking>\n...\n</thinking>`
//!   yields the reasoning alone), and so is whitespace right after the close
//!   tag, so the answer does not begin with blank lines.
//! - [`ThinkingSplitter::finish`] flushes what is held: a partial open tag ends
//!   as text; an unclosed block ends as thinking (the model ran out while
//!   reasoning; presenting that as the answer would be worse).
//!
//! No empty delta is ever emitted, and each push emits at most one thinking
//! delta followed by at most one text delta. Held-back cut points are always
//! char boundaries: the held tail starts at a `<` or at whitespace.

use std::borrow::Cow;

use crate::model::ChatEvent;

/// Open tags and their close tags, as recognised at the start of an answer.
/// Each close tag holds a single `<`, its first byte (the scan relies on it).
pub const TAGS: [(&str, &str); 4] = [
    ("<thinking>", "</thinking>"),
    ("<think>", "</think>"),
    ("<reasoning>", "</reasoning>"),
    ("<thought>", "</thought>"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Undecided: `buf` holds whitespace and a possible partial open tag.
    Start,
    /// Inside a block ended by `close`; `started` once a non-whitespace
    /// character of reasoning has been seen.
    Thinking { close: &'static str, started: bool },
    /// Plain text; `trim` drops leading whitespace right after a close tag.
    Text { trim: bool },
}

/// Splits a stream of text deltas into `ThinkingDelta` and `TextDelta` events.
#[derive(Debug, Clone)]
pub struct ThinkingSplitter {
    state: State,
    /// Text held back; inside a block only the tail that may begin the close
    /// tag, so it is usually empty and a delta is scanned where it lies.
    buf: String,
    /// An open tag was recognised.
    found: bool,
}

impl Default for ThinkingSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl ThinkingSplitter {
    pub fn new() -> Self {
        Self {
            state: State::Start,
            buf: String::new(),
            found: false,
        }
    }

    /// Whether the answer opened with a thinking block.
    pub fn found_block(&self) -> bool {
        self.found
    }

    /// Feed one text delta; events for what can be decided are appended to
    /// `out`. An owned delta that is emitted whole moves into its event.
    pub fn push<'t>(&mut self, text: impl Into<Cow<'t, str>>, out: &mut Vec<ChatEvent>) {
        let text = text.into();
        match self.state {
            State::Start if self.buf.is_empty() => self.decide_start(text, out),
            State::Start => {
                self.buf.push_str(&text);
                let held = std::mem::take(&mut self.buf);
                self.decide_start(Cow::Owned(held), out);
            }
            State::Thinking { .. } if self.buf.is_empty() => self.think(text, out),
            State::Thinking { .. } => {
                self.buf.push_str(&text);
                self.think_held(out);
            }
            State::Text { .. } => self.emit_text(text, out),
        }
    }

    /// End of stream: flush whatever is held back. Later pushes are plain text.
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        let held = std::mem::take(&mut self.buf);
        match self.state {
            State::Start => emit(out, ChatEvent::TextDelta, Cow::Owned(held)),
            State::Thinking { .. } => emit(out, ChatEvent::ThinkingDelta, held.trim_end().into()),
            State::Text { .. } => {}
        }
        self.state = State::Text { trim: false };
    }

    /// At the start, with `buf` empty: `text` is all that was pushed so far.
    fn decide_start(&mut self, text: Cow<'_, str>, out: &mut Vec<ChatEvent>) {
        let rest = text.trim_start();
        if let Some(&(open, close)) = TAGS.iter().find(|(open, _)| rest.starts_with(open)) {
            let skip = text.len() - rest.len() + open.len();
            self.found = true;
            self.state = State::Thinking {
                close,
                started: false,
            };
            self.think(Cow::Borrowed(&text[skip..]), out);
            return;
        }
        // Still possibly an open tag (an empty `rest`, whitespace only, too).
        if TAGS.iter().any(|(open, _)| open.starts_with(rest)) {
            self.buf = text.into_owned();
            return;
        }
        self.state = State::Text { trim: false };
        emit(out, ChatEvent::TextDelta, text);
    }

    /// Inside a block with nothing held: scan the delta where it lies.
    fn think(&mut self, text: Cow<'_, str>, out: &mut Vec<ChatEvent>) {
        let State::Thinking { close, started } = self.state else {
            return;
        };
        let (started, cut) = scan(&text, close, started);
        self.state = State::Thinking { close, started };
        match cut {
            Cut::Held { think, hold } => {
                self.buf.push_str(&text[hold..]);
                let whole = think.start == 0 && think.end == text.len();
                let think = if whole { text } else { text[think].into() };
                emit(out, ChatEvent::ThinkingDelta, think);
            }
            Cut::Closed { think, after } => {
                emit(out, ChatEvent::ThinkingDelta, text[think].into());
                self.state = State::Text { trim: true };
                self.emit_text(text[after..].into(), out);
            }
        }
    }

    /// Inside a block, scan `buf` (a held tail and what followed it).
    fn think_held(&mut self, out: &mut Vec<ChatEvent>) {
        let State::Thinking { close, started } = self.state else {
            return;
        };
        let (started, cut) = scan(&self.buf, close, started);
        self.state = State::Thinking { close, started };
        match cut {
            Cut::Held { think, hold } => {
                emit(out, ChatEvent::ThinkingDelta, self.buf[think].into());
                self.buf.drain(..hold);
            }
            Cut::Closed { think, after } => {
                emit(out, ChatEvent::ThinkingDelta, self.buf[think].into());
                let held = std::mem::take(&mut self.buf);
                self.state = State::Text { trim: true };
                self.emit_text(held[after..].into(), out);
            }
        }
    }

    fn emit_text(&mut self, text: Cow<'_, str>, out: &mut Vec<ChatEvent>) {
        let State::Text { trim } = self.state else {
            return;
        };
        if trim {
            let rest = text.trim_start();
            if rest.is_empty() {
                return;
            }
            self.state = State::Text { trim: false };
            if rest.len() < text.len() {
                emit(out, ChatEvent::TextDelta, rest.into());
                return;
            }
        }
        emit(out, ChatEvent::TextDelta, text);
    }
}

/// What one scan inside a block decided, as byte ranges of the scanned text.
enum Cut {
    /// `think` is reasoning; the text from `hold` on is held back.
    Held {
        think: std::ops::Range<usize>,
        hold: usize,
    },
    /// `think` is reasoning, then the close tag; text resumes at `after`.
    Closed {
        think: std::ops::Range<usize>,
        after: usize,
    },
}

/// Scan `s` inside a block ended by `close`. Leading whitespace is dropped
/// until the reasoning has `started`; returns the new `started` and the cut.
fn scan(s: &str, close: &str, started: bool) -> (bool, Cut) {
    let from = if started {
        0
    } else {
        s.len() - s.trim_start().len()
    };
    if from == s.len() {
        let cut = Cut::Held {
            think: from..from,
            hold: from,
        };
        return (started, cut);
    }
    let body = &s[from..];
    let held = |keep: usize| Cut::Held {
        think: from..from + keep,
        hold: from + keep,
    };
    let cut = match memchr::memchr(b'<', body.as_bytes()) {
        // Without a `<` nothing can begin the close tag: only trailing
        // whitespace is held (what `hold_point` finds, without the search).
        None => held(body.trim_end().len()),
        Some(lt) => match find_close(body, lt, close) {
            Some(at) => Cut::Closed {
                think: from..from + body[..at].trim_end().len(),
                after: from + at + close.len(),
            },
            None => held(hold_point(body, close)),
        },
    };
    (true, cut)
}

/// First occurrence of `close` in `s`, whose first `<` is at `lt`.
fn find_close(s: &str, lt: usize, close: &str) -> Option<usize> {
    let (bytes, close) = (s.as_bytes(), close.as_bytes());
    let mut at = lt;
    loop {
        if bytes[at..].starts_with(close) {
            return Some(at);
        }
        at += 1 + memchr::memchr(b'<', bytes.get(at + 1..)?)?;
    }
}

/// Where the held-back tail of `buf` begins: the longest suffix that is a
/// proper prefix of `close`, extended back over whitespace just before it
/// (trailing whitespace of a block is dropped when the close tag follows).
/// `close` has its only `<` in front, so the one candidate suffix starts at
/// the last `<` among the final `close.len() - 1` bytes.
fn hold_point(buf: &str, close: &str) -> usize {
    let bytes = buf.as_bytes();
    let close = close.as_bytes();
    let window = bytes.len().saturating_sub(close.len() - 1);
    let end = match memchr::memrchr(b'<', &bytes[window..]) {
        // `<` is ASCII, so `at` is a char boundary.
        Some(i) if close.starts_with(&bytes[window + i..]) => window + i,
        _ => bytes.len(),
    };
    buf.get(..end).map_or(0, |head| head.trim_end().len())
}

/// Push a delta unless it is empty; an owned one moves into the event.
fn emit(out: &mut Vec<ChatEvent>, make: fn(String) -> ChatEvent, text: Cow<'_, str>) {
    if !text.is_empty() {
        out.push(make(text.into_owned()));
    }
}

#[cfg(test)]
#[path = "thinking_tests.rs"]
mod tests;
