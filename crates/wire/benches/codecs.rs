//! Throughput of the two stream decoders on realistic input fed in 16 KiB
//! network-sized chunks, with the AWS SDK's event-stream decoder alongside
//! for comparison, and one whole 22-frame `primary` answer decoded with
//! `message()` on every frame; the SSE parser in both of its modes (events,
//! and raw blocks with their events); `json::RawObject`'s parse, rewrite
//! and write of a request body; and the JSON string escaper on the
//! `primary` request's prompt (`bench/bodies/primary.json`).
//!
//! Run: `cargo bench -p wire --bench codecs -- --warm-up-time 1 --measurement-time 3`

#![expect(
    clippy::unwrap_used,
    reason = "a bench over input it generated itself; a failure must stop it loudly"
)]

use std::hint::black_box;

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wire::eventstream::{encode_event, Decoder, Message};
use wire::json::{serialize_str, write_str, RawObject};
use wire::sse::{write_data, SseParser};

const FRAMES: usize = 2000;
const CHUNK: usize = 16 * 1024;

/// A small deterministic generator, so every run measures the same bytes.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }
}

/// Text of `len` bytes drawn from words, with some non-ASCII.
fn text(rng: &mut Lcg, len: usize) -> String {
    const WORDS: [&str; 8] = [
        "the ", "model ", "said ", "héllo ", "world ", "✓ ", "code ", "and ",
    ];
    let mut s = String::new();
    while s.len() < len {
        s.push_str(WORDS[rng.next(WORDS.len())]);
    }
    while s.len() > len {
        s.pop();
    }
    s
}

/// ~2000 `assistantResponseEvent` frames with 20-200 byte JSON payloads.
fn eventstream_input() -> Vec<u8> {
    let mut rng = Lcg(7);
    let mut out = BytesMut::new();
    for _ in 0..FRAMES {
        let len = 8 + rng.next(180);
        let content = text(&mut rng, len);
        let payload = format!(
            r#"{{"content":{}}}"#,
            serde_json::to_string(&content).unwrap()
        );
        encode_event("assistantResponseEvent", payload.as_bytes(), &mut out);
    }
    out.to_vec()
}

/// ~2000 frames of the gateway's real shape: `assistantResponseEvent` with the
/// three string headers and a 30-byte JSON payload (138 bytes a frame).
fn chat_input() -> Vec<u8> {
    let mut rng = Lcg(13);
    let mut out = BytesMut::new();
    for _ in 0..FRAMES {
        let mut content = text(&mut rng, 16);
        while content.len() < 16 {
            content.push(' ');
        }
        let payload = format!(r#"{{"content":"{content}"}}"#);
        assert_eq!(payload.len(), 30);
        encode_event("assistantResponseEvent", payload.as_bytes(), &mut out);
    }
    out.to_vec()
}

/// One realistic `primary` answer: 20 `assistantResponseEvent` frames with
/// short text, then `meteringEvent` and `contextUsageEvent` (22 frames, the
/// shape the gateway's per-request instruction counts are taken on).
fn answer_input() -> Vec<u8> {
    let mut rng = Lcg(17);
    let mut out = BytesMut::new();
    for _ in 0..20 {
        let len = 4 + rng.next(40);
        let content = text(&mut rng, len);
        let payload = format!(
            r#"{{"content":{}}}"#,
            serde_json::to_string(&content).unwrap()
        );
        encode_event("assistantResponseEvent", payload.as_bytes(), &mut out);
    }
    encode_event(
        "meteringEvent",
        br#"{"unit":"credit","unitPlural":"credits","usage":0.0123}"#,
        &mut out,
    );
    encode_event(
        "contextUsageEvent",
        br#"{"contextUsagePercentage":1.25}"#,
        &mut out,
    );
    out.to_vec()
}

/// Decodes `input` in 16 KiB reads and reads every frame's `Message`.
fn decode_messages(input: &[u8]) -> usize {
    let mut decoder = Decoder::new();
    let mut buf = BytesMut::with_capacity(CHUNK);
    let mut n = 0usize;
    for chunk in input.chunks(CHUNK) {
        buf.extend_from_slice(chunk);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            if let Ok(Message::Event { payload, .. }) = frame.message() {
                n += payload.len();
            }
            black_box(&frame);
        }
    }
    assert!(decoder.decode_eof(&mut buf).unwrap().is_none());
    n
}

/// ~2000 OpenAI `chat.completion.chunk` events ending with `[DONE]`.
fn sse_input() -> Vec<u8> {
    let mut rng = Lcg(11);
    let mut out = BytesMut::new();
    for i in 0..FRAMES {
        let len = 1 + rng.next(60);
        let content = text(&mut rng, len);
        let chunk = serde_json::json!({
            "id": "chatcmpl-9x8y7z", "object": "chat.completion.chunk", "created": 1_700_000_000 + i,
            "model": "gpt-4o-mini", "system_fingerprint": "fp_0123456789",
            "choices": [{"index": 0, "delta": {"content": content}, "logprobs": null, "finish_reason": null}]
        });
        write_data(&mut out, chunk.to_string().as_bytes());
    }
    out.extend_from_slice(wire::sse::DONE);
    out.to_vec()
}

fn eventstream(c: &mut Criterion) {
    let input = eventstream_input();
    let mut group = c.benchmark_group("eventstream_decode");
    group.throughput(Throughput::Bytes(input.len() as u64));

    group.bench_function("wire", |b| b.iter(|| black_box(decode_messages(&input))));

    group.bench_function("aws_smithy_eventstream", |b| {
        b.iter(|| {
            let mut decoder = MessageFrameDecoder::new();
            let mut buf = BytesMut::with_capacity(CHUNK);
            let mut n = 0usize;
            for chunk in input.chunks(CHUNK) {
                buf.extend_from_slice(chunk);
                while let DecodedFrame::Complete(message) = decoder.decode_frame(&mut buf).unwrap()
                {
                    n += message.payload().len();
                    black_box(&message);
                }
            }
            assert!(buf.is_empty());
            black_box(n)
        })
    });

    group.finish();

    // A group of its own: criterion reports throughput per group.
    let chat = chat_input();
    let mut group = c.benchmark_group("eventstream_decode_chat");
    group.throughput(Throughput::Elements(FRAMES as u64));
    group.bench_function("wire", |b| b.iter(|| black_box(decode_messages(&chat))));
    group.finish();

    // One whole 22-frame answer per iteration, as the gateway reads it.
    let answer = answer_input();
    let mut group = c.benchmark_group("eventstream_decode_answer");
    group.throughput(Throughput::Elements(22));
    group.bench_function("wire", |b| b.iter(|| black_box(decode_messages(&answer))));
    group.finish();

    let payload = br#"{"content":"Let me check the file for you."}"#;
    let mut out = BytesMut::new();
    for _ in 0..FRAMES {
        encode_event("assistantResponseEvent", payload, &mut out);
    }
    let mut group = c.benchmark_group("eventstream_encode");
    group.throughput(Throughput::Bytes(out.len() as u64));
    group.bench_function("wire", |b| {
        b.iter(|| {
            out.clear();
            for _ in 0..FRAMES {
                encode_event("assistantResponseEvent", payload, &mut out);
            }
            black_box(out.len())
        })
    });
    group.finish();
}

fn sse(c: &mut Criterion) {
    let input = sse_input();
    let mut group = c.benchmark_group("sse_parse");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("wire", |b| {
        b.iter(|| {
            let mut parser = SseParser::new();
            let mut n = 0usize;
            for chunk in input.chunks(CHUNK) {
                parser.feed(chunk);
                while let Some(event) = parser.next_event().unwrap() {
                    n += event.data.len();
                    black_box(&event);
                }
            }
            assert!(parser.finish().unwrap().is_none());
            black_box(n)
        })
    });
    // The native relay's reading: every block's raw bytes and its event, in
    // the same one scan; then, for comparison, the two scans it replaces (a
    // block splitter, then the parser over each block).
    group.bench_function("wire_raw_spans", |b| {
        b.iter(|| {
            let mut parser = SseParser::new();
            let mut n = 0usize;
            for chunk in input.chunks(CHUNK) {
                parser.feed(chunk);
                while let Some(block) = parser.next_block().unwrap() {
                    n += block.raw.len() + block.event.map_or(0, |e| e.data.len());
                }
            }
            assert!(parser.finish_block().unwrap().is_none());
            black_box(n)
        })
    });
    group.bench_function("two_scans_before", |b| {
        b.iter(|| {
            let mut splitter = TwoScans::default();
            let mut parser = SseParser::new();
            let mut n = 0usize;
            for chunk in input.chunks(CHUNK) {
                splitter.buf.extend_from_slice(chunk);
                while let Some(block) = splitter.next_block() {
                    parser.feed(&block);
                    let event = parser.next_event().unwrap();
                    n += block.len() + event.map_or(0, |e| e.data.len());
                }
            }
            black_box(n)
        })
    });
    group.finish();
}

/// The gateway's former block splitter (`pipeline/sse_blocks.rs` before the
/// raw-span mode), kept here only to measure what one scan saves.
#[derive(Default)]
struct TwoScans {
    buf: BytesMut,
    pos: usize,
    line_start: usize,
}

impl TwoScans {
    fn next_block(&mut self) -> Option<bytes::Bytes> {
        while let Some(at) = self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.iter().position(|&b| b == b'\n' || b == b'\r'))
        {
            let end = self.pos + at;
            let term = match self.buf.get(end) {
                Some(b'\r') => match self.buf.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => return None,
                },
                _ => 1,
            };
            let empty_line = end == self.line_start;
            self.pos = end + term;
            self.line_start = self.pos;
            if empty_line {
                let block = self.buf.split_to(self.pos).freeze();
                self.pos = 0;
                self.line_start = 0;
                return Some(block);
            }
        }
        self.pos = self.buf.len();
        None
    }
}

/// A chat-completions body of 20 messages (~6 KiB) with vendor extras.
fn request_body() -> Vec<u8> {
    let mut rng = Lcg(5);
    let messages: Vec<serde_json::Value> = (0..20)
        .map(|i| {
            let len = 100 + rng.next(400);
            serde_json::json!({
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "content": text(&mut rng, len),
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "model": "custom/llama3.1-70b",
        "messages": messages,
        "temperature": 0.7,
        "max_tokens": 1024,
        "stream": true,
        "x_vendor": {"priority": "high", "tags": ["a", "b"]},
    }))
    .unwrap()
}

fn raw_object(c: &mut Criterion) {
    let body = request_body();
    let mut group = c.benchmark_group("raw_object_rewrite");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("parse_set_model_usage_write", |b| {
        b.iter(|| {
            let mut obj = RawObject::parse(black_box(&body)).unwrap();
            obj.set("model", &"llama3.1-70b").unwrap();
            obj.force_include_usage().unwrap();
            black_box(obj.to_bytes())
        })
    });
    group.finish();
}

/// The prompt the gateway sends `primary` for a one-message chat (its
/// fake-reasoning preamble: 1.5 KB, 16 bytes to escape).
fn prompt() -> String {
    let body = include_str!("../../../bench/bodies/primary.json");
    let value: serde_json::Value = serde_json::from_str(body).unwrap();
    value["conversationState"]["currentMessage"]["userInputMessage"]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn json_escape(c: &mut Criterion) {
    #[derive(serde::Serialize)]
    struct Field<'a> {
        #[serde(serialize_with = "serialize_str")]
        text: &'a str,
    }
    let prompt = prompt();
    let mut group = c.benchmark_group("json_escape");
    group.throughput(Throughput::Bytes(prompt.len() as u64));
    let mut out = Vec::with_capacity(4 * prompt.len());
    group.bench_function("write_str", |b| {
        b.iter(|| {
            out.clear();
            write_str(&mut out, black_box(&prompt));
            black_box(out.len())
        })
    });
    group.bench_function("serialize_str", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(
                &mut out,
                &Field {
                    text: black_box(&prompt),
                },
            )
            .unwrap();
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, eventstream, sse, raw_object, json_escape);
criterion_main!(benches);
