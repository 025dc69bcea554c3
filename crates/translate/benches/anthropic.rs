//! Messages-format hot paths.
//!
//! - `anthropic_encode_text/<kind>/<delta bytes>`: `StreamEncoder` over 1,000
//!   text deltas, as text bytes per second. `code` has an escape every ~10
//!   bytes (quotes, newlines, tabs, backslashes) and non-ASCII; `prose` has a
//!   newline per paragraph.
//! - `anthropic_encode_events/<kind>/<delta bytes>`: the same work as events per second.
//! - `anthropic_into_chat_request/20_messages`: a Claude-Code-like 20-message
//!   request (system blocks, tools, tool calls and results, thinking)
//!   converted to `ChatRequest`, clone of the parsed request excluded.

use bytes::BytesMut;
use criterion::{
    black_box, criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput,
};
use serde_json::{json, Value};
use translate::anthropic::{into_chat_request, StreamEncoder};
use translate::{ChatEvent, ResponseMeta, Usage};

const DELTAS: usize = 1_000;

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "msg_01XFDUDYJgAACzvnptvVoYEL".into(),
        model: "claude-sonnet-4-5".into(),
        created: 1_700_000_000,
    }
}

const CODE: &str =
    "fn main() {\n\tprintln!(\"héllo, wörld\");\n}\n// Résumé: the \\n escape → ok ✓\n";
const PROSE: &str = "The gateway converts every provider's stream into canonical events and \
    encodes them for the client as they arrive, so the first token reaches the user as soon \
    as the provider sends it. Blocks never interleave; parallel tool calls are buffered. ✓\n";

/// `len` bytes (at a char boundary) of the kind of text a coding model writes.
fn text_of(len: usize) -> String {
    sample(CODE, len)
}

fn sample(base: &str, len: usize) -> String {
    let mut s = base.repeat(len / base.len() + 1);
    let mut cut = len.min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

fn encode_all(events: &[ChatEvent], out: &mut BytesMut) -> usize {
    out.clear();
    let mut encoder = StreamEncoder::new(
        meta(),
        Usage {
            input_tokens: Some(1_000),
            ..Usage::default()
        },
    );
    encoder.begin(out);
    for event in events {
        encoder.push(event, out);
    }
    encoder.finish(out);
    out.len()
}

fn encoder(c: &mut Criterion) {
    for (kind, base, size) in [
        ("code", CODE, 16usize),
        ("code", CODE, 256),
        ("code", CODE, 4096),
        ("prose", PROSE, 256),
        ("prose", PROSE, 4096),
    ] {
        let id = format!("{kind}/{size}");
        let events: Vec<ChatEvent> = (0..DELTAS)
            .map(|_| ChatEvent::TextDelta(sample(base, size)))
            .collect();
        let text_bytes: usize = events
            .iter()
            .map(|e| match e {
                ChatEvent::TextDelta(t) => t.len(),
                _ => 0,
            })
            .sum();
        let mut out = BytesMut::with_capacity(text_bytes * 2 + DELTAS * 128);

        let mut group = c.benchmark_group("anthropic_encode_text");
        group.throughput(Throughput::Bytes(text_bytes as u64));
        group.bench_with_input(BenchmarkId::from_parameter(&id), &events, |b, events| {
            b.iter(|| black_box(encode_all(events, &mut out)))
        });
        group.finish();

        let mut group = c.benchmark_group("anthropic_encode_events");
        group.throughput(Throughput::Elements(DELTAS as u64));
        group.bench_with_input(BenchmarkId::from_parameter(&id), &events, |b, events| {
            b.iter(|| black_box(encode_all(events, &mut out)))
        });
        group.finish();
    }
}

/// Ten user/assistant exchanges: text, tool calls with JSON inputs, tool
/// results, a thinking block, under cached system blocks and four tools.
fn twenty_messages() -> Value {
    let mut messages = Vec::new();
    for i in 0..10 {
        if i % 2 == 0 {
            messages
                .push(json!({"role": "user", "content": format!("Step {i}: {}", text_of(600))}));
        } else {
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": text_of(1_500)},
                {"type": "text", "text": "Continue."}
            ]}));
        }
        messages.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": text_of(300), "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            {"type": "text", "text": text_of(200)},
            {"type": "tool_use", "id": format!("toolu_{}", i + 1), "name": "edit_file",
             "input": {"path": "src/main.rs", "old": text_of(120), "new": text_of(140), "replace_all": false}}
        ]}));
    }
    let tool = |name: &str| {
        json!({"name": name, "description": text_of(200), "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["path"]
        }})
    };
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 32_000,
        "system": [
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
            {"type": "text", "text": text_of(4_000), "cache_control": {"type": "ephemeral"}}
        ],
        "messages": messages,
        "tools": [tool("read_file"), tool("edit_file"), tool("bash"), tool("grep")],
        "tool_choice": {"type": "auto"},
        "thinking": {"type": "enabled", "budget_tokens": 10_000},
        "metadata": {"user_id": "user_0123_account_4567_session_89ab"},
        "stream": true
    })
}

fn request(c: &mut Criterion) {
    let parsed: wire::anthropic::MessagesRequest =
        serde_json::from_value(twenty_messages()).unwrap_or_default();
    assert_eq!(parsed.messages.len(), 20);
    let mut group = c.benchmark_group("anthropic_into_chat_request");
    group.throughput(Throughput::Elements(1));
    group.bench_function("20_messages", |b| {
        b.iter_batched(
            || parsed.clone(),
            |req| black_box(into_chat_request(req)),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, encoder, request);
criterion_main!(benches);
