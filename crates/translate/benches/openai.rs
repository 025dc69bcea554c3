//! OpenAI format hot paths: `StreamEncoder` on text deltas (bytes of text per
//! second and events per second, at three delta sizes) and `into_chat_request`
//! on a realistic 20-message request (requests per second).

#![expect(
    clippy::panic,
    reason = "a bench over input it built itself; a failure must stop it loudly"
)]

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::json;
use translate::openai::{into_chat_request, StreamEncoder};
use translate::{ChatEvent, ResponseMeta};

const EVENTS: usize = 1_000;

fn meta() -> ResponseMeta {
    ResponseMeta {
        id: "chatcmpl-0123456789abcdef0123456789ab".into(),
        model: "claude-sonnet-4.5".into(),
        created: 1_700_000_000,
    }
}

/// Prose with the usual sprinkling of quotes, newlines and non-ASCII.
fn delta(len: usize) -> String {
    let base = "The quick brown fox said \"hi\" to the lazy dog; naïve café 🦊.\n";
    let mut s = String::with_capacity(len + base.len());
    while s.len() < len {
        s.push_str(base);
    }
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

fn encoder(c: &mut Criterion) {
    for size in [16usize, 256, 4096] {
        let events: Vec<ChatEvent> = (0..EVENTS)
            .map(|_| ChatEvent::TextDelta(delta(size)))
            .collect();
        let text_bytes: usize = events
            .iter()
            .map(|e| match e {
                ChatEvent::TextDelta(t) => t.len(),
                _ => 0,
            })
            .sum();
        let mut out = BytesMut::with_capacity(text_bytes * 2 + EVENTS * 160);

        let mut bytes_group = c.benchmark_group("openai_encoder_text_bytes");
        bytes_group.throughput(Throughput::Bytes(text_bytes as u64));
        bytes_group.bench_with_input(BenchmarkId::from_parameter(size), &events, |b, events| {
            b.iter(|| {
                out.clear();
                let mut enc = StreamEncoder::new(meta(), true);
                for e in events {
                    enc.push(e, &mut out);
                }
                enc.finish(&mut out);
                black_box(out.len())
            })
        });
        bytes_group.finish();

        let mut events_group = c.benchmark_group("openai_encoder_events");
        events_group.throughput(Throughput::Elements(EVENTS as u64));
        events_group.bench_with_input(BenchmarkId::from_parameter(size), &events, |b, events| {
            b.iter(|| {
                out.clear();
                let mut enc = StreamEncoder::new(meta(), true);
                for e in events {
                    enc.push(e, &mut out);
                }
                enc.finish(&mut out);
                black_box(out.len())
            })
        });
        events_group.finish();
    }
}

/// A 20-message agentic conversation: system, user turns, assistant tool
/// calls, tool results, an image.
fn twenty_messages() -> serde_json::Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding assistant. Answer precisely and cite files."}),
        json!({"role": "user", "content": [
            {"type": "text", "text": "Why does the build fail? Screenshot attached."},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(200))}}
        ]}),
    ];
    for i in 0..6 {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}a"), "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/mod{i}.rs\"}}")}},
            {"id": format!("call_{i}b"), "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"fn main\"}"}}
        ]}));
        messages.push(
            json!({"role": "tool", "tool_call_id": format!("call_{i}a"), "content": delta(1_500)}),
        );
        messages.push(
            json!({"role": "tool", "tool_call_id": format!("call_{i}b"), "content": delta(200)}),
        );
    }
    messages.truncate(19);
    messages.push(json!({"role": "user", "content": "Thanks, now fix it."}));
    json!({
        "model": "claude-sonnet-4.5",
        "messages": messages,
        "stream": true,
        "max_tokens": 4096,
        "temperature": 0.3,
        "tools": [
            {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
            {"type": "function", "function": {"name": "grep", "description": "Search",
                "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}}}
        ],
        "tool_choice": "auto",
        "stream_options": {"include_usage": true},
        "metadata": {"session": "abc"}
    })
}

fn request(c: &mut Criterion) {
    let value = twenty_messages();
    let req: wire::openai::ChatCompletionRequest =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("bench input: {e}"));
    assert_eq!(req.messages.len(), 20);
    let body = serde_json::to_vec(&value).unwrap_or_default();

    let mut group = c.benchmark_group("openai_into_chat_request");
    group.throughput(Throughput::Elements(1));
    group.bench_function("20_messages", |b| {
        b.iter_batched(
            || req.clone(),
            |r| black_box(into_chat_request(r)),
            criterion::BatchSize::SmallInput,
        )
    });
    // Parse + validate + convert, as the handler runs it.
    group.bench_function("20_messages_from_json", |b| {
        b.iter(|| {
            let r: wire::openai::ChatCompletionRequest =
                serde_json::from_slice(black_box(&body)).unwrap_or_else(|e| panic!("{e}"));
            let _ = wire::openai::validate(&r);
            black_box(into_chat_request(r))
        })
    });
    group.finish();
}

criterion_group!(benches, encoder, request);
criterion_main!(benches);
