//! One `data:` payload of a provider's messages stream, read by a
//! hand-written fast path where it can be and by serde_json where not.
//!
//! [`w::StreamEvent`] and its deltas are internally tagged (`"type"`), which
//! serde reads by first copying the whole object into an intermediate tree:
//! about 6,000 instructions for a 90-byte text delta. Nearly every event of
//! an answer is a `content_block_delta` (text, tool input or thinking) or a
//! `content_block_stop`, so [`scan`] reads those two with a [`Cursor`],
//! members in any order, and gives up on everything else: other event or
//! delta types, a missing or repeated member, a value of an unexpected type,
//! any syntax error. serde_json then reads the payload as before, so its
//! errors and its answer on unusual payloads are unchanged; where the scan
//! answers, it answers what serde_json would (a proptest compares the two).

use std::borrow::Cow;

use wire::anthropic as w;

use crate::json_scan::{Cursor, Seen};

/// The event in `data`.
pub(super) fn read(data: &str) -> Result<w::StreamEvent, serde_json::Error> {
    match scan(data) {
        Some(event) => Ok(event),
        None => serde_json::from_str(data),
    }
}

/// The fast path: `None` for anything but a plain `content_block_delta`
/// or `content_block_stop`.
pub(super) fn scan(data: &str) -> Option<w::StreamEvent> {
    let mut c = Cursor::new(data);
    let mut kind = None;
    let mut index = None;
    let mut delta = None;
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"type" => {
            seen.first(0)?;
            kind = Some(c.string()?);
            Some(())
        }
        b"index" => {
            seen.first(1)?;
            index = Some(c.u32()?);
            Some(())
        }
        b"delta" => {
            seen.first(2)?;
            delta = Some(block_delta(c)?);
            Some(())
        }
        _ => c.skip_value(),
    })?;
    if !c.at_end() {
        return None;
    }
    let index = index?;
    match kind.as_deref()? {
        "content_block_delta" => Some(w::StreamEvent::ContentBlockDelta {
            index,
            delta: delta?,
        }),
        "content_block_stop" => Some(w::StreamEvent::ContentBlockStop { index }),
        _ => None,
    }
}

/// A text, tool-input or thinking delta.
fn block_delta(c: &mut Cursor<'_>) -> Option<w::BlockDelta> {
    let mut kind: Option<Cow<'_, str>> = None;
    // The one string member each of the three types has.
    let mut text = None;
    let mut partial_json = None;
    let mut thinking = None;
    let mut seen = Seen::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            b"type" => {
                seen.first(0)?;
                kind = Some(c.string()?);
                return Some(());
            }
            b"text" => (1, &mut text),
            b"partial_json" => (2, &mut partial_json),
            b"thinking" => (3, &mut thinking),
            _ => return c.skip_value(),
        };
        seen.first(bit)?;
        *slot = Some(c.string()?.into_owned());
        Some(())
    })?;
    match kind.as_deref()? {
        "text_delta" => Some(w::BlockDelta::TextDelta { text: text? }),
        "input_json_delta" => Some(w::BlockDelta::InputJsonDelta {
            partial_json: partial_json?,
        }),
        "thinking_delta" => Some(w::BlockDelta::ThinkingDelta {
            thinking: thinking?,
        }),
        _ => None,
    }
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
