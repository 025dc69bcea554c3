//! An Anthropic messages provider: recorded SSE text
//! (`fixtures/anthropic/*.sse`, with the vendor's `event:` lines and pings)
//! read with `wire::sse::SseParser` in every cutting and run through
//! `translate::anthropic::StreamParser`; recorded whole responses
//! (`fixtures/anthropic/*.json`) through `translate::anthropic::response_events`.

use translate::anthropic::{response_events, StreamParser};
use translate::{ChatEvent, Usage};
use wire::anthropic::MessagesResponse;
use wire::sse::SseEvent;

use crate::chunking::{self, Cut, CUTS};
use crate::fixtures::{self, Kind, Provider};

fn parse(sse: &[SseEvent]) -> Vec<ChatEvent> {
    let mut parser = StreamParser::new();
    let mut out = Vec::new();
    for event in sse {
        parser.push(event, &mut out).unwrap();
    }
    parser.finish(&mut out);
    out
}

/// The canonical events of the recorded stream; the same in every cutting.
pub fn events(kind: Kind) -> Vec<ChatEvent> {
    events_of(&fixtures::stream_file(Provider::Anthropic, kind))
}

/// The canonical events of a provider stream body; the same in every cutting.
pub fn events_of(body: &[u8]) -> Vec<ChatEvent> {
    let reference_sse = chunking::sse_events(body, Cut::Whole);
    for e in &reference_sse {
        // The vendor repeats the data's `type` as the SSE event name.
        let data: serde_json::Value = serde_json::from_str(&e.data).unwrap();
        assert_eq!(e.event.as_deref(), data["type"].as_str());
    }
    let reference = parse(&reference_sse);
    // Some proxies end lines with CR LF: the same events.
    let crlf = String::from_utf8(body.to_vec())
        .unwrap()
        .replace('\n', "\r\n");
    assert_eq!(
        chunking::sse_events(crlf.as_bytes(), Cut::Every(7)),
        reference_sse,
        "CR LF"
    );
    for cut in CUTS {
        let sse = chunking::sse_events(body, cut);
        assert_eq!(sse, reference_sse, "SSE events differ in {cut:?}");
        assert_eq!(parse(&sse), reference, "{cut:?}");
    }
    reference
}

/// The canonical events of the recorded whole response.
pub fn json_events(kind: Kind) -> Vec<ChatEvent> {
    let body = fixtures::json_file(Provider::Anthropic, kind);
    let resp: MessagesResponse = serde_json::from_slice(&body).unwrap();
    response_events(&resp)
}

#[test]
fn every_recording_is_split_inside_a_character_by_the_utf8_cutting() {
    for kind in [Kind::Text, Kind::Tools, Kind::Thinking] {
        let body = fixtures::stream_file(Provider::Anthropic, kind);
        assert!(
            chunking::splits_a_character(&body, Cut::InsideUtf8),
            "{kind:?}"
        );
    }
}

#[test]
fn message_start_usage_arrives_before_any_content() {
    let events = events(Kind::Text);
    assert_eq!(
        events[0],
        ChatEvent::Start {
            id: Some("msg_01XFDUDYJgAACzvnptvVoYEL".into()),
            model: Some("claude-sonnet-4-5-20250929".into()),
        }
    );
    assert_eq!(
        events[1],
        ChatEvent::Usage(Usage {
            input_tokens: Some(42),
            output_tokens: None,
            cache_read_tokens: Some(0),
            cache_write_tokens: Some(0),
        })
    );
}

#[test]
fn the_signature_closes_the_thinking_before_the_redacted_block() {
    let events = events(Kind::Thinking);
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ThinkingDelta(_) => Some("thinking"),
            ChatEvent::ThinkingSignature(_) => Some("signature"),
            ChatEvent::RedactedThinking(_) => Some("redacted"),
            ChatEvent::TextDelta(_) => Some("text"),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "thinking",
            "thinking",
            "signature",
            "redacted",
            "text",
            "text"
        ]
    );
}
