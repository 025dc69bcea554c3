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

use crate::model::ChatEvent;

/// Open tags and their close tags, as recognised at the start of an answer.
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

    /// Feed one text delta; events for what can be decided are appended to `out`.
    pub fn push(&mut self, text: &str, out: &mut Vec<ChatEvent>) {
        match self.state {
            State::Start => {
                self.buf.push_str(text);
                self.decide_start(out);
            }
            State::Thinking { .. } => {
                self.buf.push_str(text);
                self.scan_thinking(out);
            }
            State::Text { .. } => self.emit_text(text, out),
        }
    }

    /// End of stream: flush whatever is held back. Later pushes are plain text.
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        let held = std::mem::take(&mut self.buf);
        match self.state {
            State::Start => emit(out, ChatEvent::TextDelta, &held),
            State::Thinking { .. } => emit(out, ChatEvent::ThinkingDelta, held.trim_end()),
            State::Text { .. } => {}
        }
        self.state = State::Text { trim: false };
    }

    fn decide_start(&mut self, out: &mut Vec<ChatEvent>) {
        let rest = self.buf.trim_start();
        if rest.is_empty() {
            return;
        }
        for (open, close) in TAGS {
            if let Some(after) = rest.strip_prefix(open) {
                let after = after.to_owned();
                self.found = true;
                self.state = State::Thinking {
                    close,
                    started: false,
                };
                self.buf = after;
                self.scan_thinking(out);
                return;
            }
        }
        if TAGS.iter().any(|(open, _)| open.starts_with(rest)) {
            return; // still possibly an open tag
        }
        let text = std::mem::take(&mut self.buf);
        self.state = State::Text { trim: false };
        emit(out, ChatEvent::TextDelta, &text);
    }

    fn scan_thinking(&mut self, out: &mut Vec<ChatEvent>) {
        let State::Thinking { close, started } = self.state else {
            return;
        };
        if !started {
            let ws = self.buf.len() - self.buf.trim_start().len();
            self.buf.drain(..ws);
            if self.buf.is_empty() {
                return;
            }
            self.state = State::Thinking {
                close,
                started: true,
            };
        }
        if let Some(at) = self.buf.find(close) {
            emit(out, ChatEvent::ThinkingDelta, self.buf[..at].trim_end());
            let after = self.buf[at + close.len()..].to_owned();
            self.buf.clear();
            self.state = State::Text { trim: true };
            self.emit_text(&after, out);
            return;
        }
        let keep_from = hold_point(&self.buf, close);
        if keep_from > 0 {
            emit(out, ChatEvent::ThinkingDelta, &self.buf[..keep_from]);
            self.buf.drain(..keep_from);
        }
    }

    fn emit_text(&mut self, text: &str, out: &mut Vec<ChatEvent>) {
        let State::Text { trim } = self.state else {
            return;
        };
        if trim {
            let rest = text.trim_start();
            if rest.is_empty() {
                return;
            }
            self.state = State::Text { trim: false };
            emit(out, ChatEvent::TextDelta, rest);
        } else {
            emit(out, ChatEvent::TextDelta, text);
        }
    }
}

/// Where the held-back tail of `buf` begins: the longest suffix that is a
/// proper prefix of `close`, extended back over whitespace just before it
/// (trailing whitespace of a block is dropped when the close tag follows).
fn hold_point(buf: &str, close: &str) -> usize {
    let bytes = buf.as_bytes();
    let close = close.as_bytes();
    let longest = (close.len() - 1).min(bytes.len());
    let mut end = bytes.len();
    for k in (1..=longest).rev() {
        if bytes.ends_with(&close[..k]) {
            // close[0] is `<` (ASCII), so `end` is a char boundary.
            end = bytes.len() - k;
            break;
        }
    }
    buf.get(..end).map_or(0, |head| head.trim_end().len())
}

fn emit(out: &mut Vec<ChatEvent>, make: fn(String) -> ChatEvent, text: &str) {
    if !text.is_empty() {
        out.push(make(text.to_owned()));
    }
}

#[cfg(test)]
#[path = "thinking_tests.rs"]
mod tests;
