//! A client's messages request to the canonical [`ChatRequest`].
//!
//! Everything the model can hold is carried over: every block kind, the raw
//! text of tool-use inputs, tool-result content, thinking with its signature,
//! redacted thinking, system blocks with `cache_control`, tool choice and the
//! parallel switch, the thinking budget, `metadata.user_id` and unknown
//! top-level fields (`extra`). What it cannot hold is refused or dropped as
//! documented on [`into_chat_request`].

use serde_json::Value;
use wire::anthropic as w;

use crate::error::TranslateError;
use crate::model::{
    ChatRequest, ContentPart, ImageSource, Message, Role, SystemBlock, ThinkingConfig, Tool,
    ToolChoice, ToolResultContent,
};

/// Converts a parsed (and validated) messages request.
///
/// - A content block of a type the canonical model has no place for
///   (`document`, `search_result`, `server_tool_use`, ...) is refused with the
///   path of its `type`: dropping it would silently change the question.
/// - Server tools (`tools[]` entries whose `type` is not `custom`) are dropped:
///   no provider behind the canonical model can run them, and without them the
///   model simply cannot call that tool.
/// - `thinking: {"type":"disabled"}` is the same as no thinking.
/// - An empty `signature` reads as none.
/// - Block-level `cache_control` on images, tool uses and tool results, and
///   text `citations`, have no canonical home and are not carried.
pub fn into_chat_request(req: w::MessagesRequest) -> Result<ChatRequest, TranslateError> {
    let w::MessagesRequest {
        model,
        messages,
        max_tokens,
        system,
        stream,
        temperature,
        top_p,
        top_k,
        stop_sequences,
        tools,
        tool_choice,
        thinking,
        metadata,
        extra,
    } = req;

    let system = match system {
        None => Vec::new(),
        Some(w::SystemPrompt::Text(text)) if text.is_empty() => Vec::new(),
        Some(w::SystemPrompt::Text(text)) => vec![SystemBlock {
            text,
            cache_control: None,
        }],
        Some(w::SystemPrompt::Blocks(blocks)) => blocks
            .into_iter()
            .map(|b| SystemBlock {
                text: b.text,
                cache_control: b.cache_control,
            })
            .collect(),
    };

    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| convert_message(i, m))
        .collect::<Result<Vec<_>, _>>()?;

    let tools = tools
        .into_iter()
        .filter_map(|tool| match tool {
            w::Tool::Custom(t) => Some(Tool {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema,
                cache_control: t.cache_control,
            }),
            w::Tool::Server(_) => None,
        })
        .collect();

    let (tool_choice, parallel_tool_calls) = match tool_choice {
        None => (None, None),
        Some(choice) => {
            let kind = match choice.kind {
                w::ToolChoiceKind::Auto => ToolChoice::Auto,
                w::ToolChoiceKind::Any => ToolChoice::Required,
                w::ToolChoiceKind::None => ToolChoice::None,
                w::ToolChoiceKind::Tool => match choice.name {
                    Some(name) if !name.is_empty() => ToolChoice::Tool(name),
                    _ => {
                        return Err(TranslateError::invalid(
                            "tool_choice.name",
                            "required when type is `tool`",
                        ))
                    }
                },
            };
            (Some(kind), choice.disable_parallel_tool_use.map(|d| !d))
        }
    };

    let thinking = thinking.and_then(|t| match t.kind {
        w::ThinkingKind::Enabled => Some(ThinkingConfig {
            budget_tokens: t.budget_tokens,
        }),
        w::ThinkingKind::Disabled => None,
    });

    Ok(ChatRequest {
        model,
        system,
        messages,
        tools,
        tool_choice,
        parallel_tool_calls,
        max_tokens,
        temperature,
        top_p,
        top_k,
        presence_penalty: None,
        frequency_penalty: None,
        stop_sequences,
        stream: stream.unwrap_or(false),
        include_usage: true,
        thinking,
        reasoning_effort: None,
        user: metadata.and_then(|m| m.user_id),
        extra,
    })
}

fn convert_message(i: usize, message: w::InputMessage) -> Result<Message, TranslateError> {
    let role = match message.role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => {
            return Err(TranslateError::invalid(
                format!("messages[{i}].role"),
                "must be `user` or `assistant`",
            ))
        }
    };
    let content = match message.content {
        w::MessageContent::Text(text) => vec![ContentPart::Text {
            text,
            cache_control: None,
        }],
        w::MessageContent::Blocks(blocks) => blocks
            .into_iter()
            .enumerate()
            .map(|(j, block)| convert_block(i, j, block))
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(Message {
        role,
        content,
        name: None,
    })
}

fn convert_block(
    i: usize,
    j: usize,
    block: w::ContentBlock,
) -> Result<ContentPart, TranslateError> {
    Ok(match block {
        w::ContentBlock::Text(t) => ContentPart::Text {
            text: t.text,
            cache_control: t.cache_control,
        },
        w::ContentBlock::Image(img) => ContentPart::Image(image_source(img.source)),
        w::ContentBlock::ToolUse(t) => ContentPart::ToolUse {
            arguments: serde_json::to_string(&t.input).map_err(|e| {
                TranslateError::invalid(format!("messages[{i}].content[{j}].input"), e.to_string())
            })?,
            id: t.id,
            name: t.name,
        },
        w::ContentBlock::ToolResult(r) => ContentPart::ToolResult {
            tool_use_id: r.tool_use_id,
            content: match r.content {
                None => Vec::new(),
                Some(w::ToolResultContent::Text(text)) => vec![ToolResultContent::Text(text)],
                Some(w::ToolResultContent::Blocks(blocks)) => {
                    blocks.into_iter().map(result_part).collect()
                }
            },
            is_error: r.is_error.unwrap_or(false),
        },
        w::ContentBlock::Thinking(t) => ContentPart::Thinking {
            thinking: t.thinking,
            signature: t.signature.filter(|s| !s.is_empty()),
        },
        w::ContentBlock::RedactedThinking(r) => ContentPart::RedactedThinking { data: r.data },
        w::ContentBlock::Other(raw) => {
            let kind = raw.get("type").and_then(Value::as_str).unwrap_or("");
            return Err(TranslateError::invalid(
                format!("messages[{i}].content[{j}].type"),
                format!("unsupported content block type `{kind}`"),
            ));
        }
    })
}

/// A block inside a tool result: text and images typed, anything else kept as
/// its JSON (a `document`, a `search_result`, ...).
fn result_part(block: w::ContentBlock) -> ToolResultContent {
    match block {
        w::ContentBlock::Text(t) => ToolResultContent::Text(t.text),
        w::ContentBlock::Image(img) => ToolResultContent::Image(image_source(img.source)),
        w::ContentBlock::Other(raw) => ToolResultContent::Json(Value::Object(raw)),
        other => ToolResultContent::Json(serde_json::to_value(&other).unwrap_or(Value::Null)),
    }
}

fn image_source(source: w::ImageSource) -> ImageSource {
    match source {
        w::ImageSource::Base64 { media_type, data } => ImageSource::Base64 { media_type, data },
        w::ImageSource::Url { url } => ImageSource::Url(url),
    }
}

#[cfg(test)]
#[path = "to_canonical_tests.rs"]
mod tests;
