//! The whole streaming hot path of a `primary` answer without I/O: event-stream
//! bytes (fed in 16 KiB reads) -> `wire::eventstream::Decoder` ->
//! `translate::primary::StreamParser` -> the OpenAI or Anthropic `StreamEncoder`
//! -> SSE bytes. Throughput is reported over the upstream bytes and per event.

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use translate::primary::{ParserOptions, StreamParser};
use translate::{ChatEvent, ClientFormat, ResponseMeta, Usage};
use wire::eventstream::{encode_event, Decoder};

const EVENTS: usize = 2000;
const READ: usize = 16 * 1024;

/// A text-heavy answer: 2000 deltas of 20-200 bytes of prose and code, then
/// the metering and context-usage events that close a real stream.
fn upstream_bytes() -> Vec<u8> {
    let words = "The gateway decodes frames, checks both CRCs, and re-encodes deltas; ";
    let code = "fn main() { println!(\"{}\", x); }\n";
    let mut out = BytesMut::new();
    for i in 0..EVENTS {
        let len = 20 + (i * 37) % 180;
        let source = if i % 3 == 0 { code } else { words };
        let text: String = source.chars().cycle().take(len).collect();
        let payload = serde_json::json!({ "content": text }).to_string();
        encode_event("assistantResponseEvent", payload.as_bytes(), &mut out);
    }
    encode_event(
        "meteringEvent",
        br#"{"unit":"credit","unitPlural":"credits","usage":0.2}"#,
        &mut out,
    );
    encode_event(
        "contextUsageEvent",
        br#"{"contextUsagePercentage":1.5}"#,
        &mut out,
    );
    out.to_vec()
}

enum Encoder {
    OpenAi(translate::openai::StreamEncoder),
    Anthropic(translate::anthropic::StreamEncoder),
}

impl Encoder {
    fn new(format: ClientFormat) -> Self {
        let meta = ResponseMeta {
            id: "chatcmpl-0123456789abcdef01234567".to_owned(),
            model: "claude-sonnet-4.5".to_owned(),
            created: 1_760_000_000,
        };
        match format {
            ClientFormat::OpenAi => {
                Encoder::OpenAi(translate::openai::StreamEncoder::new(meta, true))
            }
            ClientFormat::Anthropic => Encoder::Anthropic(
                translate::anthropic::StreamEncoder::new(meta, Usage::default()),
            ),
        }
    }
    fn push(&mut self, ev: &ChatEvent, out: &mut BytesMut) {
        match self {
            Encoder::OpenAi(e) => e.push(ev, out),
            Encoder::Anthropic(e) => e.push(ev, out),
        }
    }
    fn finish(&mut self, out: &mut BytesMut) {
        match self {
            Encoder::OpenAi(e) => e.finish(out),
            Encoder::Anthropic(e) => e.finish(out),
        }
    }
}

/// Run one whole answer through the path; returns the client bytes written.
fn relay(input: &[u8], format: ClientFormat) -> usize {
    let mut decoder = Decoder::new();
    let mut parser = StreamParser::new(ParserOptions {
        extract_thinking: false,
        context_window: Some(200_000),
    });
    let mut encoder = Encoder::new(format);
    let mut buf = BytesMut::with_capacity(READ * 2);
    let mut events = Vec::with_capacity(64);
    let mut out = BytesMut::with_capacity(READ * 4);
    let mut written = 0;
    for chunk in input.chunks(READ) {
        buf.extend_from_slice(chunk);
        while let Ok(Some(frame)) = decoder.decode(&mut buf) {
            if let Ok(msg) = frame.message() {
                parser.push(&msg, &mut events);
            }
        }
        for ev in events.drain(..) {
            encoder.push(&ev, &mut out);
        }
        // What a server would hand to the socket per read.
        written += out.len();
        out.clear();
    }
    parser.finish(&mut events);
    for ev in events.drain(..) {
        encoder.push(&ev, &mut out);
    }
    encoder.finish(&mut out);
    written + out.len()
}

fn bench(c: &mut Criterion) {
    let input = upstream_bytes();
    let mut group = c.benchmark_group("primary_stream_to_client_sse");
    group.throughput(Throughput::Bytes(input.len() as u64));
    for (name, format) in [
        ("openai", ClientFormat::OpenAi),
        ("anthropic", ClientFormat::Anthropic),
    ] {
        group.bench_function(format!("{name}_bytes"), |b| {
            b.iter(|| black_box(relay(&input, format)))
        });
    }
    group.throughput(Throughput::Elements(EVENTS as u64 + 2));
    for (name, format) in [
        ("openai", ClientFormat::OpenAi),
        ("anthropic", ClientFormat::Anthropic),
    ] {
        group.bench_function(format!("{name}_events"), |b| {
            b.iter(|| black_box(relay(&input, format)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
