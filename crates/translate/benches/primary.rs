//! Benchmarks of the `primary` conversions: building the upstream request for
//! a 20-message conversation, parsing a 2000-event answer stream, and parsing
//! a short answer of small deltas with fake reasoning on.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use translate::primary::{
    build_request, ParserOptions, RequestOptions, StreamParser, StreamSummary,
};
use translate::{ChatRequest, ContentPart, Message, Role, SystemBlock, Tool, ToolResultContent};
use wire::eventstream::Message as Frame;

fn text(t: &str) -> ContentPart {
    ContentPart::Text {
        text: t.to_owned(),
        cache_control: None,
    }
}

/// 20 messages: nine question/answer pairs (every fourth answer calls a tool
/// whose result opens the next turn), then a tool result and a question.
fn conversation() -> ChatRequest {
    let user = |content| Message {
        role: Role::User,
        content,
        name: None,
    };
    let result = |id: usize| ContentPart::ToolResult {
        tool_use_id: format!("tooluse_{id}"),
        content: vec![ToolResultContent::Text("fn main() {}\n".repeat(40))],
        is_error: false,
    };
    let mut messages = Vec::new();
    for i in 0..9 {
        let question = text(&format!(
            "Question {i}: {}",
            "please look at this. ".repeat(20)
        ));
        messages.push(user(if i % 4 == 1 {
            vec![result(i - 1), question]
        } else {
            vec![question]
        }));
        let mut answer = vec![text(&"Here is what I found. ".repeat(30))];
        if i % 4 == 0 {
            answer.push(ContentPart::ToolUse {
                id: format!("tooluse_{i}"),
                name: "read_file".to_owned(),
                arguments: r#"{"path":"src/main.rs","start":1,"end":200}"#.to_owned(),
            });
        }
        messages.push(Message {
            role: Role::Assistant,
            content: answer,
            name: None,
        });
    }
    messages.push(user(vec![result(8)]));
    messages.push(user(vec![text("And now?")]));
    let tools = ["read_file", "write_file", "list_dir"]
        .iter()
        .map(|name| Tool {
            name: (*name).to_owned(),
            description: Some(format!("{name}: does what it says.")),
            input_schema: json!({"type": "object", "additionalProperties": false,
                "properties": {"path": {"type": "string"}, "start": {"type": "integer"}},
                "required": ["path"]}),
            cache_control: None,
        })
        .collect();
    ChatRequest {
        model: "claude-sonnet-4.5".to_owned(),
        system: vec![SystemBlock {
            text: "You are a careful coding assistant. ".repeat(20),
            cache_control: None,
        }],
        messages,
        tools,
        ..ChatRequest::default()
    }
}

fn bench_build_request(c: &mut Criterion) {
    let req = conversation();
    assert_eq!(req.messages.len(), 20);
    let mut opts = RequestOptions::new("5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90", "claude-sonnet-4.5");
    opts.fake_reasoning = Some(4000);
    opts.truncation_recovery = true;
    let mut group = c.benchmark_group("primary_build_request");
    group.throughput(Throughput::Elements(1));
    group.bench_function("20_messages", |b| {
        b.iter(|| build_request(black_box(&req), black_box(&opts)))
    });
    group.finish();
}

fn bench_stream_parser(c: &mut Criterion) {
    let mut payloads = Vec::with_capacity(2002);
    let mut text_bytes = 0u64;
    for i in 0..2000 {
        let piece = match i {
            0 => "<thinking>Let me plan this. ".to_owned(),
            100 => "Done planning.</thinking>\n\n".to_owned(),
            _ => format!("token {i} of the answer, with some ünïcödé → "),
        };
        text_bytes += piece.len() as u64;
        payloads.push((
            "assistantResponseEvent",
            serde_json::to_string(&json!({ "content": piece })).unwrap_or_default(),
        ));
    }
    payloads.push((
        "meteringEvent",
        r#"{"unit":"credit","unitPlural":"credits","usage":0.3}"#.to_owned(),
    ));
    payloads.push((
        "contextUsageEvent",
        r#"{"contextUsagePercentage":12.5}"#.to_owned(),
    ));
    // The same answer ending with exact token usage: no estimate to compute,
    // so this isolates the parsing cost.
    let mut exact = payloads.clone();
    exact.push((
        "metadataEvent",
        r#"{"tokenUsage":{"uncachedInputTokens":9000,"outputTokens":30000,"totalTokens":39000}}"#
            .to_owned(),
    ));
    let opts = ParserOptions {
        extract_thinking: true,
        context_window: Some(200_000),
        claude_tokens: false,
    };
    let run = |payloads: &[(&str, String)]| {
        let (events, summary) = parse_all(opts, payloads);
        (events, summary.completion_signal)
    };
    let mut group = c.benchmark_group("primary_stream_parser");
    group.throughput(Throughput::Elements(2000));
    group.bench_function("2000_text_events_estimated_usage", |b| {
        b.iter(|| run(black_box(&payloads)))
    });
    group.bench_function("2000_text_events_exact_usage", |b| {
        b.iter(|| run(black_box(&exact)))
    });
    group.throughput(Throughput::Bytes(text_bytes));
    group.bench_function("2000_text_events_estimated_usage_bytes", |b| {
        b.iter(|| run(black_box(&payloads)))
    });
    group.bench_function("2000_text_events_exact_usage_bytes", |b| {
        b.iter(|| run(black_box(&exact)))
    });
    group.finish();
}

/// Parse a whole answer of `(event type, payload)` pairs: the number of
/// events and the summary.
fn parse_all(opts: ParserOptions, payloads: &[(&str, String)]) -> (usize, StreamSummary) {
    let mut parser = StreamParser::new(opts);
    let mut out = Vec::with_capacity(payloads.len() + 8);
    for (event_type, payload) in payloads {
        let msg = Frame::Event {
            event_type,
            payload: payload.as_bytes(),
        };
        parser.push(&msg, &mut out);
    }
    let summary = parser.finish(&mut out);
    (out.len(), summary)
}

/// A short answer as most arrive with fake reasoning on: 20 deltas of 20
/// characters, the first half inside `<thinking>`, some with line breaks
/// (escaped in the JSON), then the metering and context-usage events.
fn small_answer() -> Vec<(&'static str, String)> {
    let prose = "Let me check the config first, then the handler.\nThe answer: use a pool; ";
    let mut chars = prose.chars().cycle();
    let mut payloads = Vec::with_capacity(22);
    for i in 0..20 {
        let mut piece: String = chars.by_ref().take(20).collect();
        if i == 0 {
            piece.insert_str(0, "<thinking>");
        }
        if i == 9 {
            piece.push_str("</thinking>\n\n");
        }
        payloads.push((
            "assistantResponseEvent",
            json!({ "content": piece }).to_string(),
        ));
    }
    payloads.push((
        "meteringEvent",
        r#"{"unit":"credit","unitPlural":"credits","usage":0.01}"#.to_owned(),
    ));
    payloads.push((
        "contextUsageEvent",
        r#"{"contextUsagePercentage":0.8}"#.to_owned(),
    ));
    payloads
}

fn bench_small_answer(c: &mut Criterion) {
    let payloads = small_answer();
    let opts = ParserOptions {
        extract_thinking: true,
        context_window: Some(200_000),
        claude_tokens: false,
    };
    let mut group = c.benchmark_group("primary_stream_parser_small_answer");
    group.throughput(Throughput::Elements(20));
    group.bench_function("20_deltas_fake_reasoning", |b| {
        b.iter(|| {
            let (events, summary) = parse_all(opts, black_box(&payloads));
            (events, summary.usage)
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_build_request,
    bench_stream_parser,
    bench_small_answer
);
criterion_main!(benches);
