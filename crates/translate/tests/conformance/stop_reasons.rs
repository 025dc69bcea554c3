//! Stop-reason cells: every stop word a provider format can end with, through
//! its parser, to the word each client format gets, streamed and whole. The
//! streams are short answers written here, one per word.

use serde_json::{json, Value};
use translate::primary::{ParserOptions, StreamParser};
use translate::ChatEvent;
use wire::eventstream::encode_event;

use crate::chunking::{self, Cut};
use crate::{anthropic_client, anthropic_provider, matrix, openai_client, openai_provider};

/// Every stop-reason cell, by test name (for the document check).
pub const CELLS: &[&str] = &[
    "stop_reasons_from_anthropic_providers",
    "stop_reasons_from_openai_providers",
    "primary_cut_off_answers_stop_at_max_tokens",
];

/// What each client format says about the end of the answer.
#[derive(Debug, PartialEq, Eq)]
struct Ending {
    openai_stream: String,
    openai_whole: String,
    anthropic_stream: (String, Value),
    anthropic_whole: (String, Value),
}

fn ending(events: &[ChatEvent]) -> Ending {
    matrix::check_contract(events);
    let datas = openai_client::stream_datas(events);
    let finishes: Vec<String> = datas
        .iter()
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| {
            let v: Value = serde_json::from_str(d).unwrap();
            v["choices"][0]["finish_reason"].as_str().map(str::to_owned)
        })
        .collect();
    assert_eq!(finishes.len(), 1, "one finish chunk");
    let whole = openai_client::whole(events);

    let anthropic = anthropic_client::stream_datas(events);
    let delta = anthropic
        .iter()
        .find(|d| d["type"] == "message_delta")
        .unwrap();
    let a_whole = anthropic_client::whole(events);
    Ending {
        openai_stream: finishes[0].clone(),
        openai_whole: whole["choices"][0]["finish_reason"]
            .as_str()
            .unwrap()
            .to_owned(),
        anthropic_stream: (
            delta["delta"]["stop_reason"].as_str().unwrap().to_owned(),
            delta["delta"]["stop_sequence"].clone(),
        ),
        anthropic_whole: (
            a_whole["stop_reason"].as_str().unwrap().to_owned(),
            a_whole["stop_sequence"].clone(),
        ),
    }
}

fn expect(openai: &str, anthropic: &str, sequence: Option<&str>) -> Ending {
    Ending {
        openai_stream: openai.to_owned(),
        openai_whole: openai.to_owned(),
        anthropic_stream: (anthropic.to_owned(), json!(sequence)),
        anthropic_whole: (anthropic.to_owned(), json!(sequence)),
    }
}

fn anthropic_stream(stop_reason: &str, stop_sequence: Option<&str>) -> String {
    let head = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01StopReasonCell","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":19,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Zunächst die Fakten"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

"#;
    let delta = json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
        "usage": {"output_tokens": 6}
    });
    format!(
        "{head}event: message_delta\ndata: {delta}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    )
}

#[test]
fn stop_reasons_from_anthropic_providers() {
    let table = [
        ("end_turn", None, expect("stop", "end_turn", None)),
        ("max_tokens", None, expect("length", "max_tokens", None)),
        (
            "stop_sequence",
            Some("</antwort>"),
            expect("stop", "stop_sequence", Some("</antwort>")),
        ),
        ("pause_turn", None, expect("stop", "pause_turn", None)),
        ("refusal", None, expect("content_filter", "refusal", None)),
        (
            "model_context_window_exceeded",
            None,
            expect("length", "max_tokens", None),
        ),
    ];
    for (word, sequence, want) in table {
        let events = anthropic_provider::events_of(anthropic_stream(word, sequence).as_bytes());
        assert_eq!(ending(&events), want, "{word}");
    }
}

fn openai_stream(delta: Value, finish_reason: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-StopReasonCell",
            "object": "chat.completion.chunk",
            "created": 1735689900,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        })
    };
    let usage = json!({
        "id": "chatcmpl-StopReasonCell",
        "object": "chat.completion.chunk",
        "created": 1735689900,
        "model": "gpt-4o-2024-08-06",
        "choices": [],
        "usage": {"prompt_tokens": 19, "completion_tokens": 6, "total_tokens": 25}
    });
    format!(
        "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: {usage}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(delta, Value::Null),
        chunk(json!({}), json!(finish_reason)),
    )
}

#[test]
fn stop_reasons_from_openai_providers() {
    let text = json!({"content": "D'abord les faits"});
    let table = [
        (text.clone(), "stop", expect("stop", "end_turn", None)),
        (text.clone(), "length", expect("length", "max_tokens", None)),
        (
            text.clone(),
            "content_filter",
            expect("content_filter", "refusal", None),
        ),
        // A refusal arrives as text; the answer is marked as refused.
        (
            json!({"refusal": "Je ne peux pas aider avec cela."}),
            "stop",
            expect("content_filter", "refusal", None),
        ),
    ];
    for (delta, word, want) in table {
        let events = openai_provider::events_of(openai_stream(delta.clone(), word).as_bytes());
        assert_eq!(ending(&events), want, "{word} after {delta}");
    }
}

fn primary_events(frames: &[(&str, &str)]) -> Vec<ChatEvent> {
    let mut body = bytes::BytesMut::new();
    for (event_type, payload) in frames {
        encode_event(event_type, payload.as_bytes(), &mut body);
    }
    let mut parser = StreamParser::new(ParserOptions::default());
    let mut out = Vec::new();
    for frame in chunking::frames(&body, Cut::Every(7)) {
        parser.push(&frame.message().unwrap(), &mut out);
    }
    parser.finish(&mut out);
    out
}

#[test]
fn primary_cut_off_answers_stop_at_max_tokens() {
    // Text, and then the connection ends without any completion signal.
    let text = primary_events(&[(
        "assistantResponseEvent",
        r#"{"content":"Erstens: die Lage. Zweitens"}"#,
    )]);
    assert_eq!(ending(&text), expect("length", "max_tokens", None));

    // A tool call cut inside its arguments, after the completion signals.
    let tool = primary_events(&[
        (
            "toolUseEvent",
            r#"{"name":"write_file","toolUseId":"tooluse_CutOff01"}"#,
        ),
        (
            "toolUseEvent",
            r#"{"input":"{\"path\": \"src/ma","name":"write_file","toolUseId":"tooluse_CutOff01"}"#,
        ),
        (
            "meteringEvent",
            r#"{"unit":"credit","unitPlural":"credits","usage":0.4}"#,
        ),
        ("contextUsageEvent", r#"{"contextUsagePercentage":12.5}"#),
    ]);
    assert_eq!(ending(&tool), expect("length", "max_tokens", None));

    // The same answer complete: end_turn / tool_use.
    let complete = primary_events(&[
        (
            "assistantResponseEvent",
            r#"{"content":"Erstens: die Lage."}"#,
        ),
        (
            "meteringEvent",
            r#"{"unit":"credit","unitPlural":"credits","usage":0.01}"#,
        ),
    ]);
    assert_eq!(ending(&complete), expect("stop", "end_turn", None));
}
