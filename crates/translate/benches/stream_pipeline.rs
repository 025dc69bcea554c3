//! The whole streaming hot path of a `primary` answer without I/O: event-stream
//! bytes (fed in 16 KiB reads) -> `wire::eventstream::Decoder` ->
//! `translate::primary::StreamParser` -> the OpenAI or Anthropic `StreamEncoder`
//! -> SSE bytes. Throughput is reported over the upstream bytes and per event.
//!
//! Also the native relay's path, where the client speaks the provider's
//! format: SSE bytes (16 KiB reads) -> `wire::sse::SseParser` raw blocks with
//! their events (one scan) -> `translate::watch::Watch` (usage, errors,
//! ending) -> the same bytes out, for a chat-completions and a messages
//! stream.
//!
//! And the cross-format relay's first half: a provider's chat-completions
//! stream, shaped as OpenAI sends it (`system_fingerprint`, `logprobs`,
//! `refusal`), read into canonical events by `translate::openai::StreamParser`
//! (text deltas, and a tool call in argument fragments); and the same for a
//! provider's messages stream (`translate::anthropic::StreamParser`).

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use translate::primary::{ParserOptions, StreamParser};
use translate::watch::{Ending, Watch};
use translate::{ChatEvent, ClientFormat, ResponseMeta, Usage};
use wire::eventstream::{encode_event, Decoder};
use wire::sse::{write_data, write_event, SseParser};

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
        claude_tokens: false,
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

/// A provider's native stream of `EVENTS` text deltas in `format`, with its
/// usage and proper end.
fn native_stream(format: ClientFormat) -> Vec<u8> {
    let words = "The gateway relays native streams byte for byte; ";
    let mut out = BytesMut::new();
    let text = |i: usize| -> String {
        words
            .chars()
            .cycle()
            .skip(i % 7)
            .take(8 + (i * 37) % 60)
            .collect()
    };
    match format {
        ClientFormat::OpenAi => {
            let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
                serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_760_000_000,
                    "model": "gpt-4o", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                .to_string()
            };
            write_data(
                &mut out,
                chunk(
                    serde_json::json!({"role": "assistant", "content": ""}),
                    serde_json::Value::Null,
                )
                .as_bytes(),
            );
            for i in 0..EVENTS {
                write_data(
                    &mut out,
                    chunk(
                        serde_json::json!({"content": text(i)}),
                        serde_json::Value::Null,
                    )
                    .as_bytes(),
                );
            }
            write_data(
                &mut out,
                chunk(serde_json::json!({}), serde_json::json!("stop")).as_bytes(),
            );
            write_data(&mut out, br#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":2000,"total_tokens":2900}}"#);
            out.extend_from_slice(wire::sse::DONE);
        }
        ClientFormat::Anthropic => {
            write_event(&mut out, "message_start", br#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":900,"output_tokens":1}}}"#);
            write_event(&mut out, "content_block_start", br#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#);
            for i in 0..EVENTS {
                let delta = serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text(i)}});
                write_event(
                    &mut out,
                    "content_block_delta",
                    delta.to_string().as_bytes(),
                );
            }
            write_event(
                &mut out,
                "content_block_stop",
                br#"{"type":"content_block_stop","index":0}"#,
            );
            write_event(&mut out, "message_delta", br#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2000}}"#);
            write_event(&mut out, "message_stop", br#"{"type":"message_stop"}"#);
        }
    }
    out.to_vec()
}

/// What the native relay does per read: raw blocks and events in one scan,
/// the watch on the side, the kept blocks forwarded.
fn native_relay(input: &[u8], format: ClientFormat) -> usize {
    let mut parser = SseParser::new();
    let mut watch = Watch::new(format, true);
    let mut forwarded = 0usize;
    for read in input.chunks(READ) {
        parser.feed(read);
        while let Ok(Some(block)) = parser.next_block() {
            let seen = block
                .event
                .as_ref()
                .map(|e| watch.observe(e))
                .unwrap_or_default();
            if !seen.drop {
                forwarded += black_box(block.raw).len();
            }
        }
    }
    assert!(matches!(parser.finish_block(), Ok(None)));
    assert_eq!(watch.ending(), Ending::Complete);
    assert_eq!(watch.usage().output_tokens, Some(2000));
    forwarded
}

fn bench_native(c: &mut Criterion) {
    let mut group = c.benchmark_group("native_relay_watch");
    for (name, format) in [
        ("openai", ClientFormat::OpenAi),
        ("anthropic", ClientFormat::Anthropic),
    ] {
        let input = native_stream(format);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(format!("{name}_bytes"), |b| {
            b.iter(|| black_box(native_relay(&input, format)))
        });
    }
    group.finish();
}

/// The `i`th text delta of the cross-format benches' streams (20 bytes).
fn delta_text(i: usize) -> String {
    "Let me look that up for you. "
        .chars()
        .cycle()
        .skip(i % 5)
        .take(20)
        .collect()
}

/// A provider's chat-completions stream as OpenAI writes it: `texts` text
/// deltas, then (with `tool`) one tool call in 3 argument fragments, the
/// finish, the usage chunk and `[DONE]`.
fn provider_stream(texts: usize, tool: bool) -> Vec<u8> {
    let mut out = BytesMut::new();
    let head = r#"{"id":"chatcmpl-7Ruy1FAEsjiAvaz0XDQITH6Xpa2g3","object":"chat.completion.chunk","created":1795846047,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_23987855ad","choices":[{"index":0,"delta":"#;
    let chunk = |delta: &str, finish: &str| {
        format!(r#"{head}{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#)
    };
    let mut push = |data: String| write_data(&mut out, data.as_bytes());
    push(chunk(
        r#"{"role":"assistant","content":"","refusal":null}"#,
        "null",
    ));
    for i in 0..texts {
        let text = delta_text(i);
        push(chunk(
            &serde_json::json!({ "content": text }).to_string(),
            "null",
        ));
    }
    if tool {
        push(chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_DJAHk64Q6vOI7kG34UOFLFCB","type":"function","function":{"name":"get_weather","arguments":""}}]}"#,
            "null",
        ));
        for part in [r#"{\"quer"#, r#"y\":\"si"#, r#"m-0\"}"#] {
            push(chunk(
                &format!(r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"{part}"}}}}]}}"#),
                "null",
            ));
        }
    }
    push(chunk(
        "{}",
        if tool { r#""tool_calls""# } else { r#""stop""# },
    ));
    push(r#"{"id":"chatcmpl-7Ruy1FAEsjiAvaz0XDQITH6Xpa2g3","object":"chat.completion.chunk","created":1795846047,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_23987855ad","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":60,"total_tokens":960,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#.to_owned());
    out.extend_from_slice(wire::sse::DONE);
    out.to_vec()
}

/// A messages stream as Anthropic writes it: `message_start`, a text
/// block of `texts` deltas, then (with `tool`) a tool block in 3 argument
/// fragments, the `message_delta` and `message_stop`.
fn provider_messages_stream(texts: usize, tool: bool) -> Vec<u8> {
    let mut out = BytesMut::new();
    let mut push = |name: &str, data: &str| write_event(&mut out, name, data.as_bytes());
    push(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
    );
    push(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    for i in 0..texts {
        let text = delta_text(i);
        let delta = serde_json::json!({
            "type": "content_block_delta",
            "index": 0,
            "delta": { "type": "text_delta", "text": text },
        });
        push("content_block_delta", &delta.to_string());
    }
    push(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    if tool {
        push(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}"#,
        );
        for part in [r#"{\"quer"#, r#"y\":\"si"#, r#"m-0\"}"#] {
            push(
                "content_block_delta",
                &format!(
                    r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{part}"}}}}"#
                ),
            );
        }
        push(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        );
    }
    push(
        "message_delta",
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{}","stop_sequence":null}},"usage":{{"output_tokens":60}}}}"#,
            if tool { "tool_use" } else { "end_turn" }
        ),
    );
    push("message_stop", r#"{"type":"message_stop"}"#);
    out.to_vec()
}

/// A provider-format stream parser, as the bench drives it.
trait ProviderParser {
    fn push(&mut self, event: &wire::sse::SseEvent, out: &mut Vec<ChatEvent>) -> bool;
    fn finish(&mut self, out: &mut Vec<ChatEvent>);
}

impl ProviderParser for translate::openai::StreamParser {
    fn push(&mut self, event: &wire::sse::SseEvent, out: &mut Vec<ChatEvent>) -> bool {
        translate::openai::StreamParser::push(self, event, out).is_ok()
    }
    fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        translate::openai::StreamParser::finish(self, out);
    }
}

impl ProviderParser for translate::anthropic::StreamParser {
    fn push(&mut self, event: &wire::sse::SseEvent, out: &mut Vec<ChatEvent>) -> bool {
        translate::anthropic::StreamParser::push(self, event, out).is_ok()
    }
    fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        translate::anthropic::StreamParser::finish(self, out);
    }
}

/// Reads a provider stream into canonical events; returns how many.
fn cross_parse(input: &[u8], mut parser: impl ProviderParser) -> usize {
    let mut sse = SseParser::new();
    let mut events = Vec::new();
    sse.feed(input);
    while let Ok(Some(event)) = sse.next_event() {
        assert!(
            parser.push(&event, &mut events),
            "the bench's own stream did not parse"
        );
    }
    parser.finish(&mut events);
    assert!(matches!(events.last(), Some(ChatEvent::Stop { .. })));
    black_box(&events);
    events.len()
}

fn bench_cross(c: &mut Criterion) {
    let mut group = c.benchmark_group("cross_format_parse");
    for (name, texts, tool) in [("openai_20_text", 20, false), ("openai_tool_call", 2, true)] {
        let input = provider_stream(texts, tool);
        group.throughput(Throughput::Elements(1));
        group.bench_function(name, |b| {
            b.iter(|| black_box(cross_parse(&input, translate::openai::StreamParser::new())))
        });
    }
    for (name, texts, tool) in [
        ("messages_20_text", 20, false),
        ("messages_tool_call", 2, true),
    ] {
        let input = provider_messages_stream(texts, tool);
        group.throughput(Throughput::Elements(1));
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(cross_parse(
                    &input,
                    translate::anthropic::StreamParser::new(),
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_native, bench_cross);
criterion_main!(benches);
