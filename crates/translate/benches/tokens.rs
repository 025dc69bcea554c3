//! Benchmarks of the token estimator `tokens::count_text` over about 4 KiB
//! each of English prose, code, JSON and CJK text (issue 20), and over a
//! typical short answer of about 400 bytes: throughput in bytes, so criterion
//! reports the cost per byte.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use translate::tokens::count_text;

/// Bytes each sample is repeated up to (at least).
const SAMPLE_BYTES: usize = 4096;

const PROSE: &str = "The gateway accepts chat requests in two formats and routes \
them to an upstream provider, translating formats where needed. Streaming uses \
Server-Sent Events, and reasoning wrapped in thinking tags is extracted and \
exposed separately. When an answer is cut short, the gateway notices it and \
asks again, telling the model where it stopped. Usage is counted per key and \
per user, and a budget that runs out stops the next request, not the current one.\n\n";

const CODE: &str = "impl Limiter {\n    pub async fn admit(&self, owner: &Owner, estimate: u32) -> Result<Admission, Refusal> {\n        let window = self.window(owner.user_id).await?;\n        if window.tokens + u64::from(estimate) > self.limits.tpm {\n            return Err(Refusal::tokens(window.reset_at));\n        }\n        for (i, key) in owner.keys.iter().enumerate() {\n            tracing::debug!(i, key = %key.id, \"checked\");\n        }\n        Ok(Admission { headers: window.headers(), charge: Some(estimate) })\n    }\n}\n\n";

const JSON: &str = r#"{"model":"claude-sonnet-4.5","stream":true,"max_tokens":1024,"temperature":0.7,"messages":[{"role":"system","content":"You are a careful coding assistant."},{"role":"user","content":"List the files in the repo."},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\",\"depth\":2}"}}]},{"role":"tool","tool_call_id":"call_1","content":"[\"Cargo.toml\",\"src/main.rs\",\"src/lib.rs\"]"}],"tools":[{"type":"function","function":{"name":"list_dir","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]}"#;

const CJK: &str = "网关接受两种格式的聊天请求，并将其路由到上游提供者，在需要时转换格式。\
流式传输使用服务器发送事件，包裹在思考标签中的推理内容会被提取并单独呈现。\
当回答被截断时，网关会检测到并重试，同时告诉模型从哪里继续。\
用量按密钥和用户统计，预算用完后会拒绝下一个请求，而不是当前的请求。\n";

/// A short answer as the upstream simulator streams it; repeated to about
/// [`ANSWER_BYTES`], the size of text the hot path counts per response.
const ANSWER: &str = "The upstream simulator streams this answer in small pieces, so \
that every client can check how it joins text deltas, counts usage and ends a turn. ";

/// Bytes the short answer is repeated up to (at least).
const ANSWER_BYTES: usize = 400;

/// `piece` repeated until the text holds at least `bytes`.
fn sample(piece: &str, bytes: usize) -> String {
    piece.repeat(bytes.div_ceil(piece.len()))
}

/// `count_text` kept out of line, so that a profiler (callgrind) can read
/// its cost per call even though fat LTO would inline it into the loop.
#[inline(never)]
fn count(text: &str) -> u32 {
    count_text(text)
}

fn bench_count_text(c: &mut Criterion) {
    let mut group = c.benchmark_group("count_text");
    for (name, piece, bytes) in [
        ("prose", PROSE, SAMPLE_BYTES),
        ("code", CODE, SAMPLE_BYTES),
        ("json", JSON, SAMPLE_BYTES),
        ("cjk", CJK, SAMPLE_BYTES),
        ("answer", ANSWER, ANSWER_BYTES),
    ] {
        let text = sample(piece, bytes);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| count(black_box(&text))));
    }
    group.finish();
}

criterion_group!(benches, bench_count_text);
criterion_main!(benches);
