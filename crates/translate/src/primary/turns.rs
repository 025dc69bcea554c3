//! Canonical messages to the upstream's turns.
//!
//! Steps, in order:
//! 1. Each message becomes a [`Turn`]: text parts joined with `\n`, images
//!    checked and converted, tool calls and results kept structured (or, when
//!    no tools are sent, rendered as `[Tool: name (id)]` / `[Tool Result (id)]`
//!    text so the upstream does not reject the request). Thinking parts are
//!    dropped: earlier turns' reasoning is not sent back, as the messages
//!    format itself does.
//! 2. Adjacent turns of the same role are merged, so roles alternate.
//! 3. In each assistant turn, tool calls with the same id are reduced to the
//!    one with the longest arguments, at the first one's position.
//! 4. A tool result whose id does not match a call in the immediately
//!    preceding assistant turn (or repeats one already answered) is rendered
//!    as text in its turn instead of being dropped.

use serde_json::{Map, Value};
use wire::primary::{
    ImageBlock, ImageFormat, ImageSource as WireImage, ToolResult, ToolResultContentBlock,
    ToolResultStatus,
};

use crate::error::TranslateError;
use crate::model::{ContentPart, ImageSource, Message, Role, ToolResultContent};

/// Placeholder for a tool result with no content.
pub(super) const EMPTY_RESULT: &str = "(empty result)";

/// One upstream turn under construction.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Turn {
    pub role: Role,
    pub text: String,
    pub images: Vec<ImageBlock>,
    pub tool_uses: Vec<PendingToolUse>,
    pub tool_results: Vec<ToolResult>,
}

/// A tool call with its raw argument text (parsed at assembly).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PendingToolUse {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Turn {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            text: text.into(),
            images: Vec::new(),
            tool_uses: Vec::new(),
            tool_results: Vec::new(),
        }
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(text);
    }

    fn absorb(&mut self, other: Turn) {
        self.push_text(&other.text);
        self.images.extend(other.images);
        self.tool_uses.extend(other.tool_uses);
        self.tool_results.extend(other.tool_results);
    }
}

/// Messages to alternating turns (steps 1-4 of the module doc).
pub(super) fn build_turns(
    messages: &[Message],
    tools_sent: bool,
) -> Result<Vec<Turn>, TranslateError> {
    let mut turns: Vec<Turn> = Vec::with_capacity(messages.len());
    for (i, msg) in messages.iter().enumerate() {
        let turn = convert_message(i, msg, tools_sent)?;
        match turns.last_mut() {
            Some(last) if last.role == turn.role => last.absorb(turn),
            _ => turns.push(turn),
        }
    }
    for turn in &mut turns {
        dedupe_tool_uses(&mut turn.tool_uses);
    }
    for k in 0..turns.len() {
        if turns[k].tool_results.is_empty() {
            continue;
        }
        let answered: Vec<String> = match k.checked_sub(1).and_then(|p| turns.get(p)) {
            Some(prev) if prev.role == Role::Assistant => {
                prev.tool_uses.iter().map(|u| u.id.clone()).collect()
            }
            _ => Vec::new(),
        };
        settle_results(&mut turns[k], &answered);
    }
    Ok(turns)
}

fn convert_message(i: usize, msg: &Message, tools_sent: bool) -> Result<Turn, TranslateError> {
    let mut turn = Turn::new(msg.role, String::new());
    for (j, part) in msg.content.iter().enumerate() {
        let field = || format!("messages[{i}].content[{j}]");
        match part {
            ContentPart::Text { text, .. } => turn.push_text(text),
            ContentPart::Image(source) => {
                if msg.role == Role::Assistant {
                    return Err(TranslateError::invalid(
                        field(),
                        "images in assistant messages cannot be sent to the primary upstream",
                    ));
                }
                turn.images
                    .push(image_block(source).map_err(|m| TranslateError::invalid(field(), m))?);
            }
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => {
                if msg.role != Role::Assistant {
                    return Err(TranslateError::invalid(
                        field(),
                        "a tool call can only appear in an assistant message",
                    ));
                }
                if tools_sent {
                    turn.tool_uses.push(PendingToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    });
                } else {
                    turn.push_text(&render_tool_use(id, name, arguments));
                }
            }
            ContentPart::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                if msg.role != Role::User {
                    return Err(TranslateError::invalid(
                        field(),
                        "a tool result can only appear in a user message",
                    ));
                }
                let result = tool_result(tool_use_id, content, *is_error, &mut turn.images)
                    .map_err(|m| TranslateError::invalid(field(), m))?;
                if tools_sent {
                    turn.tool_results.push(result);
                } else {
                    turn.push_text(&render_tool_result(&result));
                }
            }
            ContentPart::Thinking { .. } | ContentPart::RedactedThinking { .. } => {}
        }
    }
    Ok(turn)
}

/// An image for the upstream; URL images and formats other than png, jpeg,
/// gif and webp are refused (the upstream cannot fetch URLs).
fn image_block(source: &ImageSource) -> Result<ImageBlock, String> {
    match source {
        ImageSource::Url(_) => Err(
            "image URLs are not supported by the primary upstream; send the image as base64 data"
                .to_owned(),
        ),
        ImageSource::Base64 { media_type, data } => {
            let format = ImageFormat::from_media_type(media_type).ok_or_else(|| {
                format!(
                    "image type `{media_type}` is not supported by the primary upstream (png, jpeg, gif, webp)"
                )
            })?;
            if data.is_empty() {
                return Err("image data is empty".to_owned());
            }
            Ok(ImageBlock {
                format,
                source: WireImage {
                    bytes: data.clone(),
                },
            })
        }
    }
}

/// A tool result for the upstream. Images move to the turn (results carry
/// only text and JSON), leaving a note in their place.
fn tool_result(
    id: &str,
    content: &[ToolResultContent],
    is_error: bool,
    images: &mut Vec<ImageBlock>,
) -> Result<ToolResult, String> {
    let mut blocks = Vec::with_capacity(content.len().max(1));
    for item in content {
        match item {
            ToolResultContent::Text(text) if text.is_empty() => {}
            ToolResultContent::Text(text) => {
                blocks.push(ToolResultContentBlock::Text(text.clone()))
            }
            ToolResultContent::Json(value) => {
                blocks.push(ToolResultContentBlock::Json(value.clone()))
            }
            ToolResultContent::Image(source) => {
                images.push(image_block(source)?);
                blocks.push(ToolResultContentBlock::Text(
                    "(image attached to this message)".to_owned(),
                ));
            }
        }
    }
    if blocks.is_empty() {
        blocks.push(ToolResultContentBlock::Text(EMPTY_RESULT.to_owned()));
    }
    Ok(ToolResult {
        tool_use_id: id.to_owned(),
        status: if is_error {
            ToolResultStatus::Error
        } else {
            ToolResultStatus::Success
        },
        content: blocks,
    })
}

fn render_tool_use(id: &str, name: &str, arguments: &str) -> String {
    let args = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    format!("[Tool: {name} ({id})]\n{args}")
}

fn render_tool_result(result: &ToolResult) -> String {
    let mut out = format!("[Tool Result ({})", result.tool_use_id);
    if result.status == ToolResultStatus::Error {
        out.push_str(", error");
    }
    out.push(']');
    for block in &result.content {
        out.push('\n');
        match block {
            ToolResultContentBlock::Text(text) => out.push_str(text),
            ToolResultContentBlock::Json(value) => out.push_str(&value.to_string()),
        }
    }
    out
}

/// Keep one call per id: the one with the longest arguments, placed where
/// the id first appeared (deterministic, unlike a hash map).
fn dedupe_tool_uses(uses: &mut Vec<PendingToolUse>) {
    let mut kept: Vec<PendingToolUse> = Vec::with_capacity(uses.len());
    for u in uses.drain(..) {
        match kept.iter_mut().find(|k| k.id == u.id) {
            Some(k) if u.arguments.trim().len() > k.arguments.trim().len() => *k = u,
            Some(_) => {}
            None => kept.push(u),
        }
    }
    *uses = kept;
}

/// Keep results that answer a call of the preceding turn (first answer per
/// id); render the others as text.
fn settle_results(turn: &mut Turn, answered: &[String]) {
    let mut seen: Vec<String> = Vec::new();
    let mut orphans = Vec::new();
    let results = std::mem::take(&mut turn.tool_results);
    for r in results {
        if answered.contains(&r.tool_use_id) && !seen.contains(&r.tool_use_id) {
            seen.push(r.tool_use_id.clone());
            turn.tool_results.push(r);
        } else {
            orphans.push(render_tool_result(&r));
        }
    }
    for text in orphans {
        turn.push_text(&text);
    }
}

/// Arguments text to the JSON object the upstream wants. Empty, invalid or
/// non-object arguments (e.g. a call cut off mid-stream) become `{}`.
pub(super) fn parse_arguments(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}
