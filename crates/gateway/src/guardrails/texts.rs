//! The texts a guardrail checks, and writing a redaction back.
//!
//! Input: what the client sent, in one fixed order: the system prompt's
//! blocks, then each message's text parts and the text of its tool
//! results (every role: an assistant turn in the history is the client's
//! text too). Output: the answer's text parts. Empty texts are skipped
//! (the service refuses an empty block); reasoning, tool-call arguments
//! and images are not checked. Reading and writing walk the same order, so
//! the service's outputs (one per block sent) land where they came from.

use translate::{ChatRequest, ContentPart, ToolResultContent};

/// Every text of `req` to check, in order.
pub fn request_texts(req: &ChatRequest) -> Vec<&str> {
    let mut out: Vec<&str> = req.system.iter().map(|b| b.text.as_str()).collect();
    for message in &req.messages {
        collect_parts(&message.content, &mut out);
    }
    out.retain(|t| !t.is_empty());
    out
}

/// The texts of an answer's content.
pub fn answer_texts(content: &[ContentPart]) -> Vec<&str> {
    let mut out = Vec::new();
    collect_parts(content, &mut out);
    out.retain(|t| !t.is_empty());
    out
}

/// Replace the texts of `req`, in [`request_texts`]'s order, by `texts`.
pub fn replace_request_texts(req: &mut ChatRequest, texts: Vec<String>) {
    let mut texts = texts.into_iter();
    for block in &mut req.system {
        put(&mut block.text, &mut texts);
    }
    for message in &mut req.messages {
        replace_parts(&mut message.content, &mut texts);
    }
}

/// Replace an answer's texts, in [`answer_texts`]'s order.
pub fn replace_answer_texts(content: &mut [ContentPart], texts: Vec<String>) {
    replace_parts(content, &mut texts.into_iter());
}

fn collect_parts<'a>(parts: &'a [ContentPart], out: &mut Vec<&'a str>) {
    for part in parts {
        match part {
            ContentPart::Text { text, .. } => out.push(text),
            ContentPart::ToolResult { content, .. } => {
                for c in content {
                    if let ToolResultContent::Text(text) = c {
                        out.push(text);
                    }
                }
            }
            _ => {}
        }
    }
}

fn replace_parts(parts: &mut [ContentPart], texts: &mut impl Iterator<Item = String>) {
    for part in parts {
        match part {
            ContentPart::Text { text, .. } => put(text, texts),
            ContentPart::ToolResult { content, .. } => {
                for c in content {
                    if let ToolResultContent::Text(text) = c {
                        put(text, texts);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The next replacement for a non-empty text (empty ones were not sent).
fn put(text: &mut String, texts: &mut impl Iterator<Item = String>) {
    if !text.is_empty() {
        if let Some(new) = texts.next() {
            *text = new;
        }
    }
}

/// Characters of `texts` (`request.content_length` of [`request_texts`]).
pub fn content_length(texts: &[&str]) -> usize {
    texts.iter().map(|t| t.chars().count()).sum()
}

#[cfg(test)]
mod tests {
    use translate::{Message, Role, SystemBlock};

    use super::*;

    fn text(t: &str) -> ContentPart {
        ContentPart::Text {
            text: t.into(),
            cache_control: None,
        }
    }

    #[test]
    fn walks_system_messages_and_tool_results_and_writes_back_in_order() {
        let mut req = ChatRequest {
            system: vec![SystemBlock {
                text: "be kind".into(),
                cache_control: None,
            }],
            messages: vec![
                Message {
                    role: Role::User,
                    content: vec![text("hello"), text("")],
                    name: None,
                },
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentPart::Thinking {
                            thinking: "hidden".into(),
                            signature: None,
                        },
                        text("hi"),
                    ],
                    name: None,
                },
                Message {
                    role: Role::User,
                    content: vec![ContentPart::ToolResult {
                        tool_use_id: "t".into(),
                        content: vec![ToolResultContent::Text("42 a@b.c".into())],
                        is_error: false,
                    }],
                    name: None,
                },
            ],
            ..ChatRequest::default()
        };
        assert_eq!(request_texts(&req), ["be kind", "hello", "hi", "42 a@b.c"]);
        assert_eq!(content_length(&request_texts(&req)), 7 + 5 + 2 + 8);
        replace_request_texts(
            &mut req,
            vec!["1".into(), "2".into(), "3".into(), "42 {EMAIL}".into()],
        );
        assert_eq!(request_texts(&req), ["1", "2", "3", "42 {EMAIL}"]);
        assert!(
            matches!(&req.messages[1].content[0], ContentPart::Thinking { thinking, .. } if thinking == "hidden")
        );
    }
}
