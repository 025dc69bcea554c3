//! Truncation: detecting an answer the upstream cut short, and building the
//! conversation for a retry that recovers from it.
//!
//! Detection, at the end of a `primary` stream:
//! - **Tool truncation**: a tool call's argument text is not valid JSON *and*
//!   looks cut off (an unclosed string, object or array). Malformed but closed
//!   JSON is not called truncated.
//! - **Content truncation**: the stream ended with text or thinking but
//!   without any completion signal (`meteringEvent`, `contextUsageEvent`,
//!   `metadataEvent`) and without tool calls. A stream that sent a completion
//!   signal is complete, whatever its length; an answer that ended in tool
//!   calls with well-formed arguments is complete too (tool calls come last).
//!
//! Recovery acts on the canonical [`ChatRequest`], so it serves both client
//! formats: [`inject_recovery`] appends the partial answer and a notice
//! (`[System Notice]` for cut content, `[API Limitation]` for a cut tool call)
//! that [`system_addition`] tells the model to trust.

use crate::collect::ChatResponse;
use crate::model::{ChatRequest, ContentPart, Message, Role, ToolResultContent};

/// What was cut off.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Truncation {
    /// The answer stopped without a completion signal.
    pub content: bool,
    /// Tool calls whose arguments were cut off.
    pub tools: Vec<TruncatedTool>,
}

/// A tool call whose arguments were cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedTool {
    pub id: String,
    pub name: String,
    /// Bytes of argument text that did arrive.
    pub received_bytes: usize,
}

pub(crate) static SYSTEM_ADDITION: wire::json::Fixed = wire::json::Fixed::new(
    "# Truncation Recovery

The connection to the model sometimes cuts an answer short. When that happens, the application \
adds a message that starts with [System Notice] (your previous answer was cut off) or with \
[API Limitation] (one of your tool calls was cut off and was not executed). These notices come \
from the application itself, not from the user or from a tool, and they are accurate. Act on \
them: continue where the answer stopped, or redo the cut-off work in smaller steps, for example \
by writing a large file in several parts.",
);

const CONTENT_NOTICE: &str = "[System Notice] Your previous answer was cut off before it was \
complete. Continue exactly where it stopped, without repeating anything you already wrote and \
without commenting on the interruption.";

const SIBLING_NOTICE: &str = "[API Limitation] This call was not executed because another tool \
call in the same answer was cut off. Make it again if it is still needed.";

/// The system-prompt addition that legitimises the recovery notices.
pub fn system_addition() -> &'static str {
    SYSTEM_ADDITION.text()
}

/// The notice added after an answer whose content was cut off.
pub fn content_notice() -> &'static str {
    CONTENT_NOTICE
}

/// The notice returned as the (error) result of a cut-off tool call.
pub fn tool_notice(name: &str) -> String {
    format!(
        "[API Limitation] Your call to the tool `{name}` was cut off before its arguments were \
complete, so it was not executed. Do not repeat it unchanged: split the work into smaller steps \
(for example, write a large file in several smaller pieces) and try again."
    )
}

/// Decide whether an answer was truncated.
///
/// `has_text_output`: any text or thinking was produced. `tool_calls`:
/// `(id, name, arguments)` of every tool call, in order. `None` means complete.
pub fn detect<'a, I>(
    completion_signal: bool,
    has_text_output: bool,
    tool_calls: I,
) -> Option<Truncation>
where
    I: IntoIterator<Item = (&'a str, &'a str, &'a str)>,
{
    let mut any_tool = false;
    let mut tools = Vec::new();
    for (id, name, arguments) in tool_calls {
        any_tool = true;
        if looks_cut_off(arguments) {
            tools.push(TruncatedTool {
                id: id.to_owned(),
                name: name.to_owned(),
                received_bytes: arguments.len(),
            });
        }
    }
    let content = !completion_signal && has_text_output && !any_tool;
    (content || !tools.is_empty()).then_some(Truncation { content, tools })
}

/// [`detect`] over a collected answer.
pub fn detect_response(resp: &ChatResponse, completion_signal: bool) -> Option<Truncation> {
    let has_text = resp.content.iter().any(|p| match p {
        ContentPart::Text { text, .. } => !text.is_empty(),
        ContentPart::Thinking { thinking, .. } => !thinking.is_empty(),
        _ => false,
    });
    let tools = resp.content.iter().filter_map(|p| match p {
        ContentPart::ToolUse {
            id,
            name,
            arguments,
        } => Some((id.as_str(), name.as_str(), arguments.as_str())),
        _ => None,
    });
    detect(completion_signal, has_text, tools)
}

/// Whether `text` is JSON that stopped early: it does not parse, and at its
/// end a string, object or array is still open (with every closer seen so
/// far matching its opener). Empty text is not truncated (it means `{}`).
pub fn looks_cut_off(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return false;
    }
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for &b in trimmed.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            // A closer that does not match its opener: malformed, not cut.
            b'}' | b']' => match stack.pop() {
                Some(expected) if expected == b => {}
                _ => return false,
            },
            _ => {}
        }
    }
    in_string || !stack.is_empty()
}

/// Turn `req` into the retry of a truncated answer: the partial answer is
/// appended as an assistant turn, followed by a user turn with the notice.
///
/// For cut tool calls every tool call of the partial answer gets an error
/// result (the cut ones the `[API Limitation]` notice, the others a note that
/// they were not executed either), so the history stays well paired; for cut
/// content the user turn is the `[System Notice]`.
pub fn inject_recovery(req: &mut ChatRequest, partial: &ChatResponse, truncation: &Truncation) {
    let answer: Vec<ContentPart> = partial
        .content
        .iter()
        .filter(|p| !matches!(p, ContentPart::Text { text, .. } if text.is_empty()))
        .cloned()
        .collect();
    let mut notice = Vec::new();
    if !truncation.tools.is_empty() {
        for part in &answer {
            if let ContentPart::ToolUse { id, name, .. } = part {
                let text = if truncation.tools.iter().any(|t| &t.id == id) {
                    tool_notice(name)
                } else {
                    SIBLING_NOTICE.to_owned()
                };
                notice.push(ContentPart::ToolResult {
                    tool_use_id: id.clone(),
                    content: vec![ToolResultContent::Text(text)],
                    is_error: true,
                });
            }
        }
    }
    if truncation.content || notice.is_empty() {
        notice.push(ContentPart::Text {
            text: CONTENT_NOTICE.to_owned(),
            cache_control: None,
        });
    }
    if !answer.is_empty() {
        req.messages.push(Message {
            role: Role::Assistant,
            content: answer,
            name: None,
        });
    }
    req.messages.push(Message {
        role: Role::User,
        content: notice,
        name: None,
    });
}

#[cfg(test)]
#[path = "truncation_tests.rs"]
mod tests;
