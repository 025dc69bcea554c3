//! An OpenAI chat-completions provider: recorded SSE text
//! (`fixtures/openai/*.sse`, as the vendors send it) read with
//! `wire::sse::SseParser` in every cutting and run through
//! `translate::openai::StreamParser`; recorded whole responses
//! (`fixtures/openai/*.json`) through `translate::openai::response_events`.

use translate::openai::{response_events, StreamParser};
use translate::ChatEvent;
use wire::openai::ChatCompletionResponse;
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
    let body = fixtures::stream_file(Provider::OpenAi, kind);
    let sse = chunking::sse_events(&body, Cut::Whole);
    assert_eq!(sse.last().unwrap().data, "[DONE]", "{kind:?}");
    events_of(&body)
}

/// The canonical events of a provider stream body; the same in every cutting.
pub fn events_of(body: &[u8]) -> Vec<ChatEvent> {
    let reference_sse = chunking::sse_events(body, Cut::Whole);
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
    let body = fixtures::json_file(Provider::OpenAi, kind);
    let resp: ChatCompletionResponse = serde_json::from_slice(&body).unwrap();
    response_events(&resp)
}

#[test]
fn every_recording_is_split_inside_a_character_by_the_utf8_cutting() {
    for kind in [
        Kind::Text,
        Kind::Tools,
        Kind::ToolsInterleaved,
        Kind::Thinking,
    ] {
        let body = fixtures::stream_file(Provider::OpenAi, kind);
        assert!(
            chunking::splits_a_character(&body, Cut::InsideUtf8),
            "{kind:?}"
        );
    }
}

#[test]
fn the_provider_id_and_model_open_the_events() {
    let events = events(Kind::Text);
    assert_eq!(
        events[0],
        ChatEvent::Start {
            id: Some("chatcmpl-B9xQe7LmN2pK4rT6vW8yZ0aC".into()),
            model: Some("gpt-4o-2024-08-06".into()),
        }
    );
}

#[test]
fn interleaved_fragments_keep_their_calls_apart() {
    let events = events(Kind::ToolsInterleaved);
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolCallDelta { index, arguments } => Some((*index, arguments.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        [
            (0, r#"{"city": "Köln""#),
            (1, r#"{"city": "#),
            (0, r#", "unit": "celsius"}"#),
            (1, r#""Reykjavík"}"#),
        ]
    );
}

#[test]
fn usage_after_the_finish_chunk_comes_before_the_stop() {
    // OpenAI sends usage in its own chunk after finish_reason; the Stop is
    // held back so the messages format can write both together.
    let events = events(Kind::Tools);
    let usage_at = events
        .iter()
        .position(|e| matches!(e, ChatEvent::Usage(_)))
        .unwrap();
    let stop_at = events
        .iter()
        .position(|e| matches!(e, ChatEvent::Stop { .. }))
        .unwrap();
    assert!(usage_at < stop_at);
    assert_eq!(stop_at, events.len() - 1);
}
