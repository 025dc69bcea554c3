//! One `data:` payload of a provider's messages stream, read by a
//! hand-written fast path where it can be and by serde_json where not.
//!
//! [`w::StreamEvent`] and its deltas are internally tagged (`"type"`), which
//! serde reads by first copying the whole object into an intermediate tree:
//! about 6,000 instructions for a 90-byte text delta. [`scan`] reads the
//! events of a plain answer with a [`Cursor`], members in any order:
//! `content_block_delta` (text, tool input or thinking),
//! `content_block_start` (a text, thinking or tool-call block as providers
//! open them), `content_block_stop`, `message_start`, `message_delta`,
//! `message_stop` and `ping`. It gives up on everything else (`error`,
//! other block and delta types, unknown events), on a missing or repeated
//! member, on a value of an unexpected type and on any syntax error.
//! serde_json then reads the payload as before, so its errors and its
//! answer on unusual payloads are unchanged; where the scan answers, it
//! answers what serde_json would (a proptest and the `provider_payloads`
//! fuzz target compare the two).

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

/// The members of an event whose reading depends on its type: read at
/// once when the type came first (providers write it first), else kept as
/// text and read once the type is known.
enum Member<'a, T> {
    Absent,
    Read(T),
    Later(&'a str),
}

impl<'a, T> Member<'a, T> {
    fn take(
        c: &mut Cursor<'a>,
        kind: Option<&str>,
        read: impl FnOnce(&mut Cursor<'a>, &str) -> Option<T>,
    ) -> Option<Self> {
        Some(match kind {
            Some(kind) => Member::Read(read(c, kind)?),
            None => Member::Later(c.value_text()?),
        })
    }

    /// The member's value for an event of type `kind`.
    fn value(
        self,
        kind: &str,
        read: impl FnOnce(&mut Cursor<'a>, &str) -> Option<T>,
    ) -> Option<Option<T>> {
        match self {
            Member::Absent => Some(None),
            Member::Read(value) => Some(Some(value)),
            Member::Later(text) => {
                let mut c = Cursor::new(text);
                let value = read(&mut c, kind)?;
                c.at_end().then_some(Some(value))
            }
        }
    }
}

/// What a kind-dependent member is read as.
enum Body {
    Block(w::BlockDelta),
    Message(w::MessageDeltaBody),
    /// The member does not belong to this type of event: skipped.
    Ignored,
}

/// The fast path: `None` for anything but a plain event of the types above.
pub(super) fn scan(data: &str) -> Option<w::StreamEvent> {
    let mut c = Cursor::new(data);
    let mut kind: Option<Cow<'_, str>> = None;
    let mut index = None;
    let mut delta = Member::Absent;
    let mut message = Member::Absent;
    let mut usage = Member::Absent;
    let mut block = Member::Absent;
    let mut seen = Seen::default();
    // `usage` is an error when `null` in `message_delta`: no `Option` read.
    let read_message = only_in("message_start", stream_message);
    let read_usage = only_in("message_delta", stream_usage);
    let read_block = only_in("content_block_start", content_block);
    c.object(|c, key| {
        match key {
            b"type" => {
                seen.first(0)?;
                kind = Some(c.string()?);
            }
            b"index" => {
                seen.first(1)?;
                index = Some(c.u32()?);
            }
            b"delta" => {
                seen.first(2)?;
                delta = Member::take(c, kind.as_deref(), read_delta)?;
            }
            b"message" => {
                seen.first(3)?;
                message = Member::take(c, kind.as_deref(), read_message)?;
            }
            b"usage" => {
                seen.first(4)?;
                usage = Member::take(c, kind.as_deref(), read_usage)?;
            }
            b"content_block" => {
                seen.first(5)?;
                block = Member::take(c, kind.as_deref(), read_block)?;
            }
            _ => c.skip_value()?,
        }
        Some(())
    })?;
    if !c.at_end() {
        return None;
    }
    let kind = kind?;
    let kind = kind.as_ref();
    let delta = delta.value(kind, read_delta)?;
    let message = message.value(kind, read_message)?;
    let usage = usage.value(kind, read_usage)?;
    let block = block.value(kind, read_block)?;
    match kind {
        "content_block_delta" => match delta? {
            Body::Block(delta) => Some(w::StreamEvent::ContentBlockDelta {
                index: index?,
                delta,
            }),
            _ => None,
        },
        "content_block_start" => Some(w::StreamEvent::ContentBlockStart {
            index: index?,
            content_block: block.flatten()?,
        }),
        "content_block_stop" => Some(w::StreamEvent::ContentBlockStop { index: index? }),
        "message_delta" => match delta? {
            Body::Message(delta) => Some(w::StreamEvent::MessageDelta {
                delta,
                usage: usage.flatten().unwrap_or_default(),
            }),
            _ => None,
        },
        "message_start" => Some(w::StreamEvent::MessageStart {
            message: message.flatten()?,
        }),
        "message_stop" => Some(w::StreamEvent::MessageStop),
        "ping" => Some(w::StreamEvent::Ping),
        _ => None,
    }
}

/// `delta`: a block's delta or the message's, by the event's type.
fn read_delta(c: &mut Cursor<'_>, kind: &str) -> Option<Body> {
    match kind {
        "content_block_delta" => block_delta(c).map(Body::Block),
        "message_delta" => message_delta(c).map(Body::Message),
        _ => c.skip_value().map(|()| Body::Ignored),
    }
}

/// A member that only events of type `owner` have: read with `read`
/// there, skipped (`None`) in any other.
fn only_in<'a, T>(
    owner: &'static str,
    read: impl Fn(&mut Cursor<'a>) -> Option<T> + Copy,
) -> impl Fn(&mut Cursor<'a>, &str) -> Option<Option<T>> + Copy {
    move |c, kind| {
        if kind == owner {
            read(c).map(Some)
        } else {
            c.skip_value().map(|()| None)
        }
    }
}

/// The block a `content_block_start` opens, as providers send it: a text
/// or thinking block (usually empty), or a tool call with `input: {}`.
/// [`w::ContentBlock`]'s own reader goes through a map of values, so
/// repeated members are not an error there: here they give up, as do
/// `cache_control`, `citations` and a tool call's non-empty `input`.
fn content_block(c: &mut Cursor<'_>) -> Option<w::ContentBlock> {
    let mut kind: Option<Cow<'_, str>> = None;
    let (mut text, mut thinking, mut signature) = (None, None, None);
    let (mut id, mut name, mut input) = (None, None, None);
    let mut seen = Seen::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            b"type" => {
                seen.first(0)?;
                kind = Some(c.string()?);
                return Some(());
            }
            b"signature" => {
                seen.first(1)?;
                signature = c.opt_string()?;
                return Some(());
            }
            b"input" => {
                seen.first(2)?;
                input = Some(if c.null() {
                    serde_json::Value::Null
                } else {
                    // `{}` only: any member gives up.
                    c.object(|_, _| None)?;
                    serde_json::Value::Object(serde_json::Map::new())
                });
                return Some(());
            }
            b"cache_control" | b"citations" => return None,
            b"text" => (3, &mut text),
            b"thinking" => (4, &mut thinking),
            b"id" => (5, &mut id),
            b"name" => (6, &mut name),
            _ => return c.skip_value(),
        };
        seen.first(bit)?;
        *slot = Some(c.string()?.into_owned());
        Some(())
    })?;
    match kind.as_deref()? {
        "text" => Some(w::ContentBlock::Text(w::TextBlock {
            text: text?,
            cache_control: None,
            citations: None,
        })),
        "thinking" => Some(w::ContentBlock::Thinking(w::ThinkingBlock {
            thinking: thinking.unwrap_or_default(),
            signature,
        })),
        "tool_use" => Some(w::ContentBlock::ToolUse(w::ToolUseBlock {
            id: id?,
            name: name?,
            input: input.unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new())),
            cache_control: None,
        })),
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

/// The `delta` of `message_delta`: the stop reason and sequence.
fn message_delta(c: &mut Cursor<'_>) -> Option<w::MessageDeltaBody> {
    let mut body = w::MessageDeltaBody::default();
    let mut seen = Seen::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            b"stop_reason" => (0, &mut body.stop_reason),
            b"stop_sequence" => (1, &mut body.stop_sequence),
            _ => return c.skip_value(),
        };
        seen.first(bit)?;
        *slot = c.opt_string()?;
        Some(())
    })?;
    Some(body)
}

/// The `message` of `message_start`: its id, model and usage.
fn stream_message(c: &mut Cursor<'_>) -> Option<w::StreamMessage> {
    let mut message = w::StreamMessage::default();
    let mut seen = Seen::default();
    c.object(|c, key| {
        match key {
            b"id" => {
                seen.first(0)?;
                message.id = c.opt_string()?;
            }
            b"model" => {
                seen.first(1)?;
                message.model = c.opt_string()?;
            }
            b"usage" => {
                seen.first(2)?;
                if !c.null() {
                    message.usage = Some(stream_usage(c)?);
                }
            }
            _ => c.skip_value()?,
        }
        Some(())
    })?;
    Some(message)
}

/// A usage object: four optional counts.
fn stream_usage(c: &mut Cursor<'_>) -> Option<w::StreamUsage> {
    let mut usage = w::StreamUsage::default();
    let mut seen = Seen::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            b"input_tokens" => (0, &mut usage.input_tokens),
            b"cache_creation_input_tokens" => (1, &mut usage.cache_creation_input_tokens),
            b"cache_read_input_tokens" => (2, &mut usage.cache_read_input_tokens),
            b"output_tokens" => (3, &mut usage.output_tokens),
            _ => return c.skip_value(),
        };
        seen.first(bit)?;
        *slot = if c.null() { None } else { Some(c.u32()?) };
        Some(())
    })?;
    Some(usage)
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
