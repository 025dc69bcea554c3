//! Error cells: a provider failing after its answer began (an exception
//! frame, an error chunk or event, a dropped connection), through its parser,
//! to each client format. Streamed, the error is the last thing the client
//! reads, and the stream never looks complete (OpenAI: no finish chunk, no
//! `[DONE]`; Anthropic: no `message_delta`, no `message_stop`); whole, the
//! collected answer is the error.

use bytes::BytesMut;
use serde_json::{json, Value};
use translate::primary::{ParserOptions, StreamParser};
use translate::{ChatEvent, Collector, StreamError};
use wire::eventstream::{encode_event, encode_exception};

use crate::chunking::{self, Cut};
use crate::{anthropic_client, anthropic_provider, openai_client, openai_provider};

/// Every error cell, by test name (for the document check).
pub const CELLS: &[&str] = &[
    "primary_exception_after_text",
    "openai_error_chunk_after_text",
    "openai_stream_cut_before_its_finish",
    "anthropic_overloaded_event_after_text",
    "anthropic_stream_cut_before_its_stop_reason",
];

/// Checks both client formats for events that end in `want`, after text.
fn check_error_reaches_clients(events: &[ChatEvent], want: &StreamError) {
    assert_eq!(
        events.last(),
        Some(&ChatEvent::Error(want.clone())),
        "{events:?}"
    );
    assert!(events.iter().any(|e| matches!(e, ChatEvent::TextDelta(_))));

    // OpenAI stream: role and content chunks, then the error, then nothing.
    let datas = openai_client::stream_datas(events);
    let last: Value = serde_json::from_str(datas.last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"error": {"message": want.message, "type": want.kind}})
    );
    for d in &datas[..datas.len() - 1] {
        let chunk: Value = serde_json::from_str(d).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(
            chunk["choices"][0]["finish_reason"],
            Value::Null,
            "no finish chunk"
        );
    }

    // Anthropic stream: the error event ends it.
    let events_out = anthropic_client::stream_datas(events);
    assert_eq!(
        *events_out.last().unwrap(),
        json!({"type": "error", "error": {"type": want.kind, "message": want.message}})
    );
    assert_eq!(events_out[0]["type"], "message_start");
    for e in &events_out {
        assert!(
            e["type"] != "message_delta" && e["type"] != "message_stop",
            "{e}"
        );
    }

    // Whole: the collected answer is the error (status kept for the gateway).
    let mut collector = Collector::new();
    for e in events {
        collector.push(e.clone());
    }
    assert_eq!(collector.finish(), Err(want.clone()));
}

#[test]
fn primary_exception_after_text() {
    let mut body = BytesMut::new();
    encode_event(
        "assistantResponseEvent",
        r#"{"content":"Ich fange an …"}"#.as_bytes(),
        &mut body,
    );
    encode_exception(
        "ThrottlingException",
        br#"{"message":"Too many requests","reason":"DAILY_REQUEST_COUNT"}"#,
        &mut body,
    );
    let mut parser = StreamParser::new(ParserOptions::default());
    let mut events = Vec::new();
    for frame in chunking::frames(&body, Cut::InsideUtf8) {
        parser.push(&frame.message().unwrap(), &mut events);
    }
    parser.finish(&mut events);
    check_error_reaches_clients(
        &events,
        &StreamError {
            status: 429,
            kind: translate::StreamErrorKind::UpstreamApi,
            message: "ThrottlingException: Too many requests (reason: DAILY_REQUEST_COUNT)".into(),
        },
    );
}

const OPENAI_HEAD: &str = r#"data: {"id":"chatcmpl-ErrorCell","object":"chat.completion.chunk","created":1735690000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-ErrorCell","object":"chat.completion.chunk","created":1735690000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Je commence …"},"finish_reason":null}]}

"#;

#[test]
fn openai_error_chunk_after_text() {
    let body = format!(
        "{OPENAI_HEAD}data: {{\"error\":{{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}}}\n\n"
    );
    check_error_reaches_clients(
        &openai_provider::events_of(body.as_bytes()),
        &StreamError {
            status: 500,
            kind: translate::StreamErrorKind::UpstreamApi,
            message: "The server had an error while processing your request.".into(),
        },
    );
}

#[test]
fn openai_stream_cut_before_its_finish() {
    check_error_reaches_clients(
        &openai_provider::events_of(OPENAI_HEAD.as_bytes()),
        &StreamError {
            status: 502,
            kind: translate::StreamErrorKind::UpstreamApi,
            message: "provider stream ended before its finish_reason".into(),
        },
    );
}

const ANTHROPIC_HEAD: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_01ErrorCell","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Ich fange an …"}}

"#;

#[test]
fn anthropic_overloaded_event_after_text() {
    let body = format!(
        "{ANTHROPIC_HEAD}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}}\n\n"
    );
    check_error_reaches_clients(
        &anthropic_provider::events_of(body.as_bytes()),
        &StreamError {
            status: 529,
            kind: translate::StreamErrorKind::Overloaded,
            message: "Overloaded".into(),
        },
    );
}

#[test]
fn anthropic_stream_cut_before_its_stop_reason() {
    check_error_reaches_clients(
        &anthropic_provider::events_of(ANTHROPIC_HEAD.as_bytes()),
        &StreamError {
            status: 502,
            kind: translate::StreamErrorKind::UpstreamApi,
            message: "the provider's stream ended before the message was complete".into(),
        },
    );
}
