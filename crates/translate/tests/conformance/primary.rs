//! The `primary` provider: recorded frames (`fixtures/primary/*.frames`, one
//! `<event type> <JSON payload>` per line) are encoded with
//! `wire::eventstream::encode_event` into one byte buffer, decoded back with
//! `wire::eventstream::Decoder` in every cutting of [`crate::chunking::CUTS`],
//! and the messages run through `translate::primary::StreamParser`.

use bytes::BytesMut;
use translate::primary::{ParserOptions, StreamParser};
use translate::ChatEvent;
use wire::eventstream::{encode_event, Message};

use crate::chunking::{self, Cut, CUTS};
use crate::fixtures::{self, Kind, Provider};

/// The `(event type, payload)` frames of a recording, in order.
pub fn recorded_frames(kind: Kind) -> Vec<(String, String)> {
    let raw = fixtures::stream_file(Provider::Primary, kind);
    let text = String::from_utf8(raw).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (event_type, payload) = l.split_once(' ').unwrap();
            // Every payload is valid JSON, as the upstream sends it.
            serde_json::from_str::<serde_json::Value>(payload).unwrap();
            (event_type.to_owned(), payload.to_owned())
        })
        .collect()
}

/// The recording as the upstream's response body.
pub fn body(kind: Kind) -> Vec<u8> {
    let mut out = BytesMut::new();
    for (event_type, payload) in recorded_frames(kind) {
        encode_event(&event_type, payload.as_bytes(), &mut out);
    }
    out.to_vec()
}

fn options(kind: Kind) -> ParserOptions {
    ParserOptions {
        // On when the gateway asked for fake reasoning.
        extract_thinking: kind == Kind::ThinkingTags,
        context_window: Some(200_000),
        claude_tokens: false,
    }
}

/// The body decoded in the pieces of `cut` and parsed into events.
fn events_with(kind: Kind, cut: Cut) -> Vec<ChatEvent> {
    let body = body(kind);
    let frames = chunking::frames(&body, cut);
    let recorded = recorded_frames(kind);
    assert_eq!(
        frames.len(),
        recorded.len(),
        "{kind:?} {cut:?}: frame count"
    );
    let mut parser = StreamParser::new(options(kind));
    let mut out = Vec::new();
    for (frame, (event_type, payload)) in frames.iter().zip(&recorded) {
        let msg = frame.message().unwrap();
        assert_eq!(
            msg,
            Message::Event {
                event_type,
                payload: payload.as_bytes()
            },
            "{kind:?} {cut:?}: a frame did not survive the codec"
        );
        parser.push(&msg, &mut out);
    }
    let summary = parser.finish(&mut out);
    assert!(summary.error.is_none(), "{kind:?}: {:?}", summary.error);
    assert!(summary.truncation.is_none(), "{kind:?}: reported truncated");
    assert!(
        summary.usage_exact,
        "{kind:?}: the recording has exact usage"
    );
    out
}

/// The canonical events of the recording; the same in every cutting.
pub fn events(kind: Kind) -> Vec<ChatEvent> {
    let reference = events_with(kind, Cut::Whole);
    for cut in CUTS {
        assert_eq!(events_with(kind, cut), reference, "{kind:?}: {cut:?}");
    }
    reference
}

#[test]
fn every_recording_is_split_inside_a_character_by_the_utf8_cutting() {
    for kind in [Kind::Text, Kind::Tools, Kind::Thinking, Kind::ThinkingTags] {
        let body = body(kind);
        assert!(chunking::splits_a_character(&body, Cut::InsideUtf8));
        assert!(
            chunking::splits_a_character(&body, Cut::Every(7)),
            "{kind:?}"
        );
    }
}

#[test]
fn tool_calls_stream_as_they_arrive_with_their_upstream_ids() {
    let events = events(Kind::Tools);
    let starts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolCallStart { index, id, name } => {
                Some((*index, id.as_str(), name.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        [
            (0, "tooluse_Qm3xKd9LQ0aZ", "get_weather"),
            (1, "tooluse_Vb81pTzW2rEc", "get_local_time")
        ]
    );
    // The first call's two input fragments are passed on one by one, in order.
    let first: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolCallDelta {
                index: 0,
                arguments,
            } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(first, [r#"{"city": "Zü"#, r#"rich", "unit": "celsius"}"#]);
}

#[test]
fn fake_reasoning_tags_split_across_frames_are_never_shown_as_text() {
    let events = events(Kind::ThinkingTags);
    for e in &events {
        if let ChatEvent::TextDelta(t) | ChatEvent::ThinkingDelta(t) = e {
            assert!(!t.contains('<') && !t.contains('>'), "tag leaked: {t:?}");
        }
    }
}

#[test]
fn reasoning_held_by_the_tag_splitter_comes_before_a_following_tool_call() {
    // Fake reasoning: a frame ends inside what could be the close tag, and
    // the upstream's next frame is a tool call. Everything the upstream sent
    // before the call must reach the client before the call.
    let frames = [
        (
            "assistantResponseEvent",
            r#"{"content":"<thinking>Je dois vérifier la météo.</thin"}"#,
        ),
        (
            "toolUseEvent",
            r#"{"input":"{\"city\": \"Lyon\"}","name":"get_weather","toolUseId":"tooluse_Held01"}"#,
        ),
        (
            "toolUseEvent",
            r#"{"name":"get_weather","stop":true,"toolUseId":"tooluse_Held01"}"#,
        ),
        (
            "meteringEvent",
            r#"{"unit":"credit","unitPlural":"credits","usage":0.01}"#,
        ),
    ];
    let mut body = BytesMut::new();
    for (event_type, payload) in frames {
        encode_event(event_type, payload.as_bytes(), &mut body);
    }
    let mut parser = StreamParser::new(ParserOptions {
        extract_thinking: true,
        context_window: None,
        claude_tokens: false,
    });
    let mut out = Vec::new();
    for frame in chunking::frames(&body, Cut::Whole) {
        parser.push(&frame.message().unwrap(), &mut out);
    }
    parser.finish(&mut out);
    let first_call = out
        .iter()
        .position(|e| matches!(e, ChatEvent::ToolCallStart { .. }))
        .unwrap();
    for (i, e) in out.iter().enumerate() {
        if matches!(e, ChatEvent::ThinkingDelta(_) | ChatEvent::TextDelta(_)) {
            assert!(i < first_call, "{e:?} after the tool call: {out:?}");
        }
    }
    // Nothing is lost either: the held text is flushed, as at the end.
    let thinking: String = out
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "Je dois vérifier la météo.</thin");
}
