//! Token estimates, for usage when a provider reports none.
//!
//! Counts use the `cl100k_base` BPE (tiktoken-rs, vocabulary embedded in the
//! crate, loaded once on first use). Claude models use their own tokenizer,
//! which is not public; on English prose and code `cl100k_base` counts come
//! within roughly 10-15 % of Claude's (Claude's tokenizer yields somewhat
//! more tokens), so [`CLAUDE_CORRECTION`] scales counts for Claude-family
//! models. These are estimates and are reported as such in the docs; exact
//! provider figures always win (see `Usage::merge`).
//!
//! Per-message overheads follow OpenAI's published accounting for chat
//! (about 4 tokens per message, 3 to prime the reply), and images count a flat
//! [`IMAGE_TOKENS`] since their real cost depends on resolution.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::model::{ChatRequest, ContentPart, ImageSource, ToolResultContent};

/// Flat estimate for one image.
pub const IMAGE_TOKENS: u32 = 1_600;
/// Tokens added per message for role and separators.
const PER_MESSAGE: u32 = 4;
/// Tokens that prime the assistant's reply.
const REPLY_PRIMING: u32 = 3;
/// Multiplier applied for Claude-family models (their tokenizer is finer).
pub const CLAUDE_CORRECTION: f64 = 1.15;

fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().ok()).as_ref()
}

/// Estimated tokens in `text` (`cl100k_base`). Falls back to one token per
/// four bytes if the vocabulary cannot be loaded.
pub fn count_text(text: &str) -> u32 {
    if text.is_empty() {
        return 0;
    }
    match bpe() {
        Some(bpe) => saturate(bpe.encode_ordinary(text).len()),
        None => saturate(text.len().div_ceil(4)),
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
    use super::*;
    use crate::model::{Message, Role, SystemBlock};

    #[test]
    fn counts_known_strings() {
        assert_eq!(count_text(""), 0);
        // "hello world" is two tokens in cl100k_base.
        assert_eq!(count_text("hello world"), 2);
        assert!(count_text("The quick brown fox jumps over the lazy dog.") >= 9);
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
        assert_eq!(gpt, 3 + 4 + count_text("You are terse.") + 4 + 2);
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
