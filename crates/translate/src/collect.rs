//! Folding a [`ChatEvent`] stream into one non-streaming answer.
//!
//! Every non-streaming response is the provider's events collected here, then
//! rendered by the client format (`openai::render_response`,
//! `anthropic::render_response`), so streaming and non-streaming answers can
//! never disagree.

use std::borrow::Cow;

use crate::model::{ChatEvent, ContentPart, StopReason, StreamError, Usage};

/// A complete answer in canonical form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatResponse {
    /// Provider's message id, if it gave one.
    pub id: Option<String>,
    /// Provider's model name, if it gave one.
    pub model: Option<String>,
    /// Content in order: thinking, text and tool uses as they arrived.
    pub content: Vec<ContentPart>,
    pub stop_reason: Option<StopReason>,
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

impl ChatResponse {
    /// All text parts joined (what OpenAI calls `message.content`).
    pub fn text(&self) -> String {
        joined(self.text_parts())
    }

    /// All thinking parts joined (OpenAI `reasoning_content`).
    pub fn thinking(&self) -> String {
        joined(self.thinking_parts())
    }

    /// The text parts in order, for a writer that joins them as it writes.
    pub fn text_parts(&self) -> impl Iterator<Item = &str> + Clone {
        self.content.iter().filter_map(|part| match part {
            ContentPart::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
    }

    /// The thinking parts in order.
    pub fn thinking_parts(&self) -> impl Iterator<Item = &str> + Clone {
        self.content.iter().filter_map(|part| match part {
            ContentPart::Thinking { thinking, .. } => Some(thinking.as_str()),
            _ => None,
        })
    }

    /// Bytes of the answer's text, reasoning and tool calls: what its
    /// rendering mostly consists of (to size the buffer it is written to).
    pub fn content_len(&self) -> usize {
        self.content
            .iter()
            .map(|part| match part {
                ContentPart::Text { text, .. } => text.len(),
                ContentPart::Thinking {
                    thinking,
                    signature,
                } => thinking.len() + signature.as_ref().map_or(0, String::len),
                ContentPart::ToolUse {
                    id,
                    name,
                    arguments,
                } => id.len() + name.len() + arguments.len(),
                ContentPart::RedactedThinking { data } => data.len(),
                ContentPart::Image(_) | ContentPart::ToolResult { .. } => 0,
            })
            .sum()
    }

    /// Whether the answer contains a tool call.
    pub fn has_tool_calls(&self) -> bool {
        self.content
            .iter()
            .any(|p| matches!(p, ContentPart::ToolUse { .. }))
    }
}

/// `parts` joined into a string allocated once.
fn joined<'a>(parts: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut out = String::with_capacity(parts.clone().map(str::len).sum());
    parts.for_each(|piece| out.push_str(piece));
    out
}

/// Room a new text or thinking part of a whole answer starts with
/// ([`Collector::for_answer`]), so that a usual answer's deltas fit without
/// growing (and copying) the part by doubling.
const PART_ROOM: usize = 2048;

/// Builds a [`ChatResponse`] from events, in arrival order.
#[derive(Debug, Default)]
pub struct Collector {
    response: ChatResponse,
    /// Position in `response.content` of each tool call, by its `index`.
    tool_slots: Vec<(u32, usize)>,
    error: Option<StreamError>,
    /// Room a new text or thinking part starts with.
    part_room: usize,
}

impl Collector {
    /// A collector whose parts grow as their deltas come (kept beside a
    /// stream, as truncation recovery does, it holds no more than they).
    pub fn new() -> Self {
        Self::default()
    }

    /// A collector of a whole answer about to be rendered: its text and
    /// reasoning parts start with room for a usual answer ([`PART_ROOM`]).
    pub fn for_answer() -> Self {
        Collector {
            part_room: PART_ROOM,
            ..Self::default()
        }
    }

    /// The first delta of a part, with the room this collector gives.
    fn with_room(&self, first: Cow<'_, str>) -> String {
        let room = self.part_room.max(first.len());
        match first {
            Cow::Owned(mut first) => {
                first.reserve(room - first.len());
                first
            }
            Cow::Borrowed(first) => {
                let mut owned = String::with_capacity(room);
                owned.push_str(first);
                owned
            }
        }
    }

    /// Fold in an event that stays with the caller: a text, reasoning or
    /// tool-argument delta is copied onto its part without the event itself
    /// being cloned (a collector kept beside a stream, as truncation recovery
    /// does, sees every delta the client gets).
    pub fn push_ref(&mut self, event: &ChatEvent) {
        match event {
            ChatEvent::TextDelta(delta) => self.push_text(Cow::Borrowed(delta)),
            ChatEvent::ThinkingDelta(delta) => self.push_thinking(Cow::Borrowed(delta)),
            ChatEvent::ToolCallDelta { index, arguments } => self.push_arguments(*index, arguments),
            other => self.push(other.clone()),
        }
    }

    fn push_text(&mut self, delta: Cow<'_, str>) {
        match self.response.content.last_mut() {
            Some(ContentPart::Text { text, .. }) => text.push_str(&delta),
            _ => self.response.content.push(ContentPart::Text {
                text: self.with_room(delta),
                cache_control: None,
            }),
        }
    }

    fn push_thinking(&mut self, delta: Cow<'_, str>) {
        match self.response.content.last_mut() {
            Some(ContentPart::Thinking {
                thinking,
                signature: None,
            }) => thinking.push_str(&delta),
            _ => self.response.content.push(ContentPart::Thinking {
                thinking: self.with_room(delta),
                signature: None,
            }),
        }
    }

    fn push_arguments(&mut self, index: u32, arguments: &str) {
        if let Some(ContentPart::ToolUse {
            arguments: args, ..
        }) = self.tool_slot(index)
        {
            args.push_str(arguments);
        }
    }

    /// Fold one event in.
    pub fn push(&mut self, event: ChatEvent) {
        match event {
            ChatEvent::Start { id, model } => {
                if id.is_some() {
                    self.response.id = id;
                }
                if model.is_some() {
                    self.response.model = model;
                }
            }
            ChatEvent::TextDelta(delta) => self.push_text(Cow::Owned(delta)),
            ChatEvent::ThinkingDelta(delta) => self.push_thinking(Cow::Owned(delta)),
            ChatEvent::ThinkingSignature(sig) => match self.response.content.last_mut() {
                Some(ContentPart::Thinking { signature, .. }) if signature.is_none() => {
                    *signature = Some(sig)
                }
                _ => self.response.content.push(ContentPart::Thinking {
                    thinking: String::new(),
                    signature: Some(sig),
                }),
            },
            ChatEvent::RedactedThinking(data) => self
                .response
                .content
                .push(ContentPart::RedactedThinking { data }),
            ChatEvent::ToolCallStart { index, id, name } => {
                self.tool_slots.push((index, self.response.content.len()));
                self.response.content.push(ContentPart::ToolUse {
                    id,
                    name,
                    arguments: String::new(),
                });
            }
            ChatEvent::ToolCallDelta { index, arguments } => self.push_arguments(index, &arguments),
            ChatEvent::ToolCallEnd { .. } => {}
            ChatEvent::Usage(usage) => self.response.usage.merge(&usage),
            ChatEvent::Stop {
                reason,
                stop_sequence,
            } => {
                self.response.stop_reason = Some(reason);
                self.response.stop_sequence = stop_sequence;
            }
            ChatEvent::Error(err) => self.error = Some(err),
        }
    }

    fn tool_slot(&mut self, index: u32) -> Option<&mut ContentPart> {
        let pos = self
            .tool_slots
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, pos)| *pos)?;
        self.response.content.get_mut(pos)
    }

    /// The collected answer, or the error that ended the stream.
    ///
    /// A stream that ended without a `Stop` gets `ToolUse` when it carried tool
    /// calls and `EndTurn` otherwise.
    pub fn finish(mut self) -> Result<ChatResponse, StreamError> {
        if let Some(err) = self.error {
            return Err(err);
        }
        if self.response.stop_reason.is_none() {
            self.response.stop_reason = Some(if self.response.has_tool_calls() {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            });
        }
        Ok(self.response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed_events() -> Vec<ChatEvent> {
        vec![
            ChatEvent::Start {
                id: Some("m1".into()),
                model: None,
            },
            ChatEvent::ThinkingDelta("think ".into()),
            ChatEvent::ThinkingDelta("more".into()),
            ChatEvent::ThinkingSignature("sig".into()),
            ChatEvent::TextDelta("Hel".into()),
            ChatEvent::TextDelta("lo".into()),
            ChatEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "f".into(),
            },
            ChatEvent::ToolCallStart {
                index: 1,
                id: "b".into(),
                name: "g".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"y\":".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments: "{}".into(),
            },
            ChatEvent::ToolCallDelta {
                index: 1,
                arguments: "2}".into(),
            },
            ChatEvent::Usage(Usage {
                input_tokens: Some(10),
                ..Usage::default()
            }),
            ChatEvent::Usage(Usage {
                output_tokens: Some(5),
                ..Usage::default()
            }),
        ]
    }

    #[test]
    fn folds_thinking_text_and_parallel_tools_in_order() {
        let mut c = Collector::new();
        for e in mixed_events() {
            c.push(e);
        }
        let r = c.finish().unwrap();
        assert_eq!(r.id.as_deref(), Some("m1"));
        assert_eq!(r.thinking(), "think more");
        assert_eq!(r.text(), "Hello");
        assert_eq!(
            r.content_len(),
            "think more".len() + "sig".len() + "Hello".len() + "af{}".len() + "bg{\"y\":2}".len()
        );
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(r.usage.input_tokens, Some(10));
        assert_eq!(r.usage.output_tokens, Some(5));
        assert_eq!(
            r.content[3],
            ContentPart::ToolUse {
                id: "b".into(),
                name: "g".into(),
                arguments: "{\"y\":2}".into()
            }
        );
        assert!(
            matches!(&r.content[0], ContentPart::Thinking { signature: Some(s), .. } if s == "sig")
        );
    }

    #[test]
    fn events_pushed_by_reference_fold_as_owned_ones() {
        let mut owned = Collector::for_answer();
        let mut borrowed = Collector::new();
        for e in mixed_events() {
            borrowed.push_ref(&e);
            owned.push(e);
        }
        assert_eq!(borrowed.finish().unwrap(), owned.finish().unwrap());
    }

    #[test]
    fn an_error_event_wins() {
        let mut c = Collector::new();
        c.push(ChatEvent::TextDelta("x".into()));
        c.push(ChatEvent::Error(StreamError {
            status: 500,
            kind: crate::StreamErrorKind::UpstreamApi,
            message: "boom".into(),
        }));
        assert_eq!(c.finish().unwrap_err().message, "boom");
    }
}
