//! Token estimates, for usage when a provider reports none.
//!
//! Two counters:
//! - [`count_text`], the one the hot path uses: a single pass over the bytes
//!   that mimics how the `cl100k_base` BPE splits text (words with their
//!   leading space, digit groups of three, punctuation runs, newlines, one or
//!   more tokens per non-ASCII character). It costs a few nanoseconds per byte
//!   and allocates nothing; on English prose, code, JSON and CJK text it lands
//!   within 10 % of the real BPE count, on URL-heavy or accented text within
//!   20 % (the calibration test pins every sample inside 0.85-1.2x).
//! - `count_text_bpe` (test builds only), the real `cl100k_base` BPE
//!   (tiktoken-rs, a dev-dependency, vocabulary embedded in that crate): exact
//!   for OpenAI models but roughly a thousand times slower, so it is kept for
//!   the calibration test and never ships.
//!
//! Claude models use their own tokenizer, which is not public; it yields
//! somewhat more tokens than `cl100k_base`, so [`CLAUDE_CORRECTION`] scales
//! counts for Claude-family models. These are estimates and are reported as
//! such in the docs; exact provider figures always win (see `Usage::merge`).
//!
//! Per-message overheads follow OpenAI's published accounting for chat
//! (about 4 tokens per message, 3 to prime the reply), and images count a flat
//! [`IMAGE_TOKENS`] since their real cost depends on resolution.

use crate::model::{ChatRequest, ContentPart, ImageSource, ToolResultContent};

/// Flat estimate for one image.
pub const IMAGE_TOKENS: u32 = 1_600;
/// Tokens added per message for role and separators.
const PER_MESSAGE: u32 = 4;
/// Tokens that prime the assistant's reply.
const REPLY_PRIMING: u32 = 3;
/// Multiplier applied for Claude-family models (their tokenizer is finer).
pub const CLAUDE_CORRECTION: f64 = 1.15;

/// Estimated `cl100k_base` tokens in `text`, in one pass without allocation.
pub fn count_text(text: &str) -> u32 {
    let bytes = text.as_bytes();
    // Costs are kept in tenths of a token so that fractional habits of the
    // BPE (merged punctuation, CJK characters) can be expressed.
    let mut tenths: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_alphabetic() {
                end += 1;
            }
            tenths += 10 * word_tokens(end - i);
            i = end;
        } else if b.is_ascii_digit() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            tenths += 10 * (end - i).div_ceil(3);
            i = end;
        } else if b.is_ascii_whitespace() {
            let mut end = i;
            let mut newline = false;
            while end < bytes.len() && bytes[end].is_ascii_whitespace() {
                newline |= bytes[end] == b'\n';
                end += 1;
            }
            let run = end - i;
            tenths += if newline {
                // A line break usually merges with the punctuation before it;
                // the indentation after it is a token of its own.
                let indent = bytes[i..end]
                    .iter()
                    .rev()
                    .take_while(|c| **c == b' ' || **c == b'\t')
                    .count();
                5 + if indent > 1 { 10 } else { 0 }
            } else if run == 1 && end < bytes.len() {
                // A single space is glued to the token after it.
                0
            } else {
                10 * run.div_ceil(4)
            };
            i = end;
        } else if b.is_ascii() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_punctuation() {
                end += 1;
            }
            let run = (end - i).max(1);
            // Punctuation runs (`":"`, `"},{"`, `();`) merge into one token
            // per few characters.
            tenths += 10 * run.div_ceil(4);
            i += run;
        } else {
            let width = utf8_width(b);
            tenths += match width {
                // Emoji and other astral characters: about one token.
                4 => 10,
                // CJK: most common characters are one token, rarer ones two or three.
                3 => 8,
                // Accented Latin and friends usually merge with their word.
                _ => 5,
            };
            i += width;
        }
    }
    saturate(tenths.div_ceil(10))
}

/// Tokens of an ASCII word of `len` letters: common words are one token,
/// longer ones split into pieces of about six letters.
fn word_tokens(len: usize) -> usize {
    if len <= 9 {
        1
    } else {
        1 + (len - 9).div_ceil(6)
    }
}

fn utf8_width(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Estimated prompt tokens of a whole request: system, messages, tools.
pub fn estimate_request(req: &ChatRequest) -> u32 {
    let mut total: u32 = REPLY_PRIMING;
    for block in &req.system {
        total = total.saturating_add(PER_MESSAGE + count_text(&block.text));
    }
    for msg in &req.messages {
        total = total.saturating_add(PER_MESSAGE);
        if let Some(name) = &msg.name {
            total = total.saturating_add(count_text(name));
        }
        for part in &msg.content {
            total = total.saturating_add(count_part(part));
        }
    }
    for tool in &req.tools {
        let schema = tool.input_schema.to_string();
        total = total
            .saturating_add(PER_MESSAGE)
            .saturating_add(count_text(&tool.name))
            .saturating_add(tool.description.as_deref().map_or(0, count_text))
            .saturating_add(count_text(&schema));
    }
    if is_claude(&req.model) {
        scale(total, CLAUDE_CORRECTION)
    } else {
        total
    }
}

/// Estimated completion tokens for generated text of a model.
pub fn estimate_output(model: &str, text: &str) -> u32 {
    let n = count_text(text);
    if is_claude(model) {
        scale(n, CLAUDE_CORRECTION)
    } else {
        n
    }
}

fn count_part(part: &ContentPart) -> u32 {
    match part {
        ContentPart::Text { text, .. } => count_text(text),
        ContentPart::Image(_) => IMAGE_TOKENS,
        ContentPart::ToolUse {
            id,
            name,
            arguments,
        } => count_text(id) + count_text(name) + count_text(arguments),
        ContentPart::ToolResult {
            tool_use_id,
            content,
            ..
        } => content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text(t) => count_text(t),
                ToolResultContent::Image(ImageSource::Base64 { .. } | ImageSource::Url(_)) => {
                    IMAGE_TOKENS
                }
                ToolResultContent::Json(v) => count_text(&v.to_string()),
            })
            .fold(count_text(tool_use_id), u32::saturating_add),
        ContentPart::Thinking { thinking, .. } => count_text(thinking),
        // Opaque encrypted reasoning: about four bytes per token of base64.
        ContentPart::RedactedThinking { data } => saturate(data.len() / 4),
    }
}

fn is_claude(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    m.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("claude"))
}

fn scale(n: u32, factor: f64) -> u32 {
    let scaled = (f64::from(n) * factor).ceil();
    if scaled >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        scaled as u32
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use tiktoken_rs::CoreBPE;

    use super::*;
    use crate::model::{Message, Role, SystemBlock};

    /// Exact `cl100k_base` token count of `text` (slow; see the module doc).
    fn count_text_bpe(text: &str) -> u32 {
        static BPE: OnceLock<CoreBPE> = OnceLock::new();
        let bpe = BPE.get_or_init(|| tiktoken_rs::cl100k_base().unwrap());
        saturate(bpe.encode_ordinary(text).len())
    }

    const SAMPLES: &[(&str, &str)] = &[
        ("prose", "The gateway accepts chat requests in two formats and routes them to an upstream provider, translating formats where needed. Streaming uses Server-Sent Events, and reasoning wrapped in thinking tags is extracted and exposed separately. Truncated responses are detected and recovered by retry, with recovery instructions injected into the conversation. Optional content guardrails validate input and output through a cloud service plus a rule-expression engine."),
        ("code", "fn main() {\n    let listener = TcpListener::bind(\"127.0.0.1:8000\").await?;\n    for (i, item) in items.iter().enumerate() {\n        if item.len() > 42 {\n            println!(\"{i}: {item:?}\");\n        }\n    }\n    Ok(())\n}\n"),
        ("json", r#"{"model":"claude-sonnet-4.5","messages":[{"role":"user","content":"List the files in the repo."},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]}],"max_tokens":1024,"temperature":0.7}"#),
        ("cjk", "网关接受两种格式的聊天请求，并将其路由到上游提供者，在需要时转换格式。流式传输使用服务器发送事件。"),
        ("mixed", "Résumé: naïve café owners in Zürich earn 4,250.75 CHF/month 🙂 — see https://example.com/a/b?c=d&e=f for details."),
    ];

    #[test]
    fn counts_known_strings() {
        assert_eq!(count_text(""), 0);
        assert_eq!(count_text_bpe("hello world"), 2);
        assert_eq!(count_text("hello world"), 2);
    }

    #[test]
    fn estimate_stays_close_to_the_real_bpe() {
        let mut bad = Vec::new();
        for (name, text) in SAMPLES {
            let fast = f64::from(count_text(text));
            let exact = f64::from(count_text_bpe(text));
            let ratio = fast / exact;
            eprintln!("{name}: fast {fast} exact {exact} ratio {ratio:.3}");
            bad.extend((!(0.85..=1.2).contains(&ratio)).then_some(*name));
        }
        assert!(bad.is_empty(), "out of band: {bad:?}");
    }

    #[test]
    fn request_estimate_grows_with_content_and_scales_for_claude() {
        let mut req = ChatRequest {
            model: "gpt-4o".into(),
            system: vec![SystemBlock {
                text: "You are terse.".into(),
                cache_control: None,
            }],
            messages: vec![Message {
                role: Role::User,
                content: vec![ContentPart::Text {
                    text: "hello world".into(),
                    cache_control: None,
                }],
                name: None,
            }],
            ..ChatRequest::default()
        };
        let gpt = estimate_request(&req);
        assert_eq!(
            gpt,
            3 + 4 + count_text("You are terse.") + 4 + count_text("hello world")
        );
        req.model = "claude-sonnet-4.5".into();
        assert!(estimate_request(&req) > gpt);
        req.messages[0]
            .content
            .push(ContentPart::Image(ImageSource::Url("http://x".into())));
        assert!(estimate_request(&req) > IMAGE_TOKENS);
    }

    #[test]
    fn claude_detection_ignores_provider_prefix() {
        assert!(is_claude("messages_vendor/claude-opus-4.5"));
        assert!(is_claude("Claude-3"));
        assert!(!is_claude("gpt-4o"));
        assert!(!is_claude("cl"));
    }
}
