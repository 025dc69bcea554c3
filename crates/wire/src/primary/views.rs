//! Borrowed views of the per-token payloads, for the stream parser.
//!
//! Text deltas, tool-call fragments and native reasoning arrive once per
//! token, so they are read without owned copies: a string borrows from the
//! payload and is decoded into an owned one (`Cow::Owned`) only when it holds
//! escapes. Reading is as lenient as with the owned types in `events` (unknown
//! fields ignored, missing ones default): [`EventView::into_owned`] gives what
//! the owned types read on their own, errors included (a property test holds
//! them to it). [`Event::parse`] goes through here; the owned types stay for
//! writing.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserializer, IntoDeserializer, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::events::{
    event_type, AssistantResponseEvent, ContextUsageEvent, Event, InvalidStateEvent,
    MessageMetadataEvent, MetadataEvent, MeteringEvent, ReasoningContentEvent, ToolUseEvent,
};
use super::text_delta;

/// A text delta, borrowed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
// Error messages name the owned type, as they did before the views.
#[serde(expecting = "struct AssistantResponseEvent", rename_all = "camelCase")]
pub struct AssistantResponseView<'a> {
    #[serde(default, borrow)]
    pub content: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub model_id: Option<Cow<'a, str>>,
}

/// One tool-call fragment, borrowed (see [`ToolUseEvent`]).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
// Error messages name the owned type, as they did before the views.
#[serde(expecting = "struct ToolUseEvent", rename_all = "camelCase")]
pub struct ToolUseView<'a> {
    #[serde(default, borrow)]
    pub tool_use_id: Cow<'a, str>,
    #[serde(default, borrow)]
    pub name: Cow<'a, str>,
    /// `None` when absent or `null`.
    #[serde(default, borrow)]
    pub input: Option<ToolInput<'a>>,
    #[serde(default)]
    pub stop: Option<bool>,
}

/// The `input` of a tool fragment: usually a piece of the arguments' JSON
/// text, sometimes the arguments as a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInput<'a> {
    Text(Cow<'a, str>),
    /// Any other JSON value, read as [`Value`] reads it.
    Json(Value),
}

/// Native reasoning, borrowed (see [`ReasoningContentEvent`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
// Error messages name the owned type, as they did before the views.
#[serde(expecting = "struct ReasoningContentEvent", rename_all = "camelCase")]
pub struct ReasoningContentView<'a> {
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub text: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub signature: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    pub redacted_content: Option<Cow<'a, str>>,
}

/// A decoded event borrowing from its payload. The rare events (one or two
/// per answer) keep their owned types.
#[derive(Debug, Clone, PartialEq)]
pub enum EventView<'a> {
    AssistantResponse(AssistantResponseView<'a>),
    ToolUse(ToolUseView<'a>),
    ReasoningContent(ReasoningContentView<'a>),
    Metering(MeteringEvent),
    ContextUsage(ContextUsageEvent),
    Metadata(MetadataEvent),
    MessageMetadata(MessageMetadataEvent),
    InvalidState(InvalidStateEvent),
    /// Any other event type; its payload is not parsed.
    Other,
}

impl<'a> EventView<'a> {
    /// Parse the payload of an event whose `:event-type` is `name`.
    pub fn parse(name: &str, payload: &'a [u8]) -> Result<Self, serde_json::Error> {
        use self::event_type as t;
        Ok(match name {
            t::ASSISTANT_RESPONSE => {
                EventView::AssistantResponse(AssistantResponseView::parse(payload)?)
            }
            t::TOOL_USE => EventView::ToolUse(from_payload(payload)?),
            t::REASONING_CONTENT => EventView::ReasoningContent(from_payload(payload)?),
            t::METERING => EventView::Metering(from_payload(payload)?),
            t::CONTEXT_USAGE => EventView::ContextUsage(from_payload(payload)?),
            t::METADATA => EventView::Metadata(from_payload(payload)?),
            t::MESSAGE_METADATA => EventView::MessageMetadata(from_payload(payload)?),
            t::INVALID_STATE => EventView::InvalidState(from_payload(payload)?),
            _ => EventView::Other,
        })
    }

    /// The owned event.
    pub fn into_owned(self) -> Event {
        match self {
            EventView::AssistantResponse(e) => Event::AssistantResponse(AssistantResponseEvent {
                content: e.content.into_owned(),
                model_id: e.model_id.map(Cow::into_owned),
            }),
            EventView::ToolUse(e) => Event::ToolUse(ToolUseEvent {
                tool_use_id: e.tool_use_id.into_owned(),
                name: e.name.into_owned(),
                input: e.input.map(|i| match i {
                    ToolInput::Text(s) => Value::String(s.into_owned()),
                    ToolInput::Json(v) => v,
                }),
                stop: e.stop,
            }),
            EventView::ReasoningContent(e) => Event::ReasoningContent(ReasoningContentEvent {
                text: e.text.map(Cow::into_owned),
                signature: e.signature.map(Cow::into_owned),
                redacted_content: e.redacted_content.map(Cow::into_owned),
            }),
            EventView::Metering(e) => Event::Metering(e),
            EventView::ContextUsage(e) => Event::ContextUsage(e),
            EventView::Metadata(e) => Event::Metadata(e),
            EventView::MessageMetadata(e) => Event::MessageMetadata(e),
            EventView::InvalidState(e) => Event::InvalidState(e),
            EventView::Other => Event::Other,
        }
    }
}

impl<'a> AssistantResponseView<'a> {
    /// Read a text delta. The shape the upstream sends, `{"content":"..."}`,
    /// is read without the JSON reader when its string needs no more than
    /// the one-letter escapes (see `text_delta`); anything else goes to the reader.
    pub fn parse(payload: &'a [u8]) -> Result<Self, serde_json::Error> {
        match text_delta::content(payload) {
            Some(content) => Ok(Self {
                content,
                model_id: None,
            }),
            None => from_payload(payload),
        }
    }
}

/// Read a payload. Valid UTF-8 (every real one) is checked once here, so the
/// reader need not check each string again; anything else goes to the byte
/// reader, which reports exactly as before.
fn from_payload<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> Result<T, serde_json::Error> {
    match std::str::from_utf8(payload) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(payload),
    }
}

/// An optional string that borrows when it can (`Option<Cow>` does not on its
/// own: serde borrows only a `Cow` that is the field's whole type).
fn opt_str<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'a, str>>, D::Error> {
    Ok(Option::<CowStr<'a>>::deserialize(d)?.map(|s| s.0))
}

struct CowStr<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for CowStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowStrVisitor).map(CowStr)
    }
}

struct CowStrVisitor;

impl<'de> Visitor<'de> for CowStrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ToolInput<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ToolInputVisitor)
    }
}

/// Strings become [`ToolInput::Text`]; every other value is handed to
/// [`Value`]'s own reader, so it comes out exactly as `Option<Value>` read it.
struct ToolInputVisitor;

impl<'de> Visitor<'de> for ToolInputVisitor {
    type Value = ToolInput<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ToolInput::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ToolInput::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(ToolInput::Text(Cow::Owned(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        json(v.into_deserializer())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        json(v.into_deserializer())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        json(v.into_deserializer())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        json(v.into_deserializer())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ToolInput::Json(Value::Null))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        json(SeqAccessDeserializer::new(seq))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        json(MapAccessDeserializer::new(map))
    }
}

fn json<'de, 'a, D: Deserializer<'de>>(d: D) -> Result<ToolInput<'a>, D::Error> {
    Value::deserialize(d).map(ToolInput::Json)
}

#[cfg(test)]
#[path = "views_tests.rs"]
mod tests;
