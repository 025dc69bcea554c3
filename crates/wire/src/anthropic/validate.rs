//! The rules of spec 4.1 for `POST /v1/messages`, checked on a parsed request.
//!
//! Returns the first broken rule with the JSON path of the field, e.g.
//! `messages[1].content[0].type`. Shape errors (wrong JSON types) are serde's
//! job; this module checks values and the combinations serde cannot see.

use std::collections::HashSet;

use super::content::{ContentBlock, MessageContent};
use super::request::{MessagesRequest, ThinkingKind, Tool, ToolChoiceKind};
use crate::validate::ValidationError;

/// Anthropic's smallest thinking budget.
const MIN_THINKING_BUDGET: u32 = 1024;

/// Checks `req` against the spec's rules; the first violation wins.
pub fn validate(req: &MessagesRequest) -> Result<(), ValidationError> {
    if req.model.trim().is_empty() {
        return Err(ValidationError::new(
            "model",
            "required (a non-empty string)",
        ));
    }
    if req.messages.is_empty() {
        return Err(ValidationError::new("messages", "must not be empty"));
    }
    for (i, message) in req.messages.iter().enumerate() {
        validate_message(i, &message.role, &message.content)?;
    }
    let max_tokens = match req.max_tokens {
        None => return Err(ValidationError::new("max_tokens", "required")),
        Some(0) => return Err(ValidationError::new("max_tokens", "must be positive")),
        Some(n) => n,
    };
    if let Some(t) = req.temperature {
        if !(0.0..=1.0).contains(&t) {
            return Err(ValidationError::new(
                "temperature",
                "must be between 0.0 and 1.0",
            ));
        }
    }
    if let Some(p) = req.top_p {
        if !(0.0..=1.0).contains(&p) {
            return Err(ValidationError::new("top_p", "must be between 0.0 and 1.0"));
        }
    }
    validate_tools(req)?;
    if let Some(thinking) = &req.thinking {
        if thinking.kind == ThinkingKind::Enabled {
            let field = "thinking.budget_tokens";
            match thinking.budget_tokens {
                None => {
                    return Err(ValidationError::new(
                        field,
                        "required when thinking is enabled",
                    ))
                }
                Some(b) if b < MIN_THINKING_BUDGET => {
                    return Err(ValidationError::new(field, "must be at least 1024"))
                }
                Some(b) if b >= max_tokens => {
                    return Err(ValidationError::new(
                        field,
                        format!("must be less than max_tokens ({max_tokens})"),
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

fn validate_message(i: usize, role: &str, content: &MessageContent) -> Result<(), ValidationError> {
    let assistant = match role {
        "user" => false,
        "assistant" => true,
        "system" => return Err(ValidationError::new(
            format!("messages[{i}].role"),
            "`system` is not a message role; put the system prompt in the top-level `system` field",
        )),
        _ => {
            return Err(ValidationError::new(
                format!("messages[{i}].role"),
                "must be `user` or `assistant`",
            ))
        }
    };
    let MessageContent::Blocks(blocks) = content else {
        return Ok(());
    };
    for (j, block) in blocks.iter().enumerate() {
        let at = |field: &str| format!("messages[{i}].content[{j}].{field}");
        match block {
            ContentBlock::ToolUse(tool_use) => {
                if !assistant {
                    return Err(ValidationError::new(
                        at("type"),
                        "`tool_use` blocks are only allowed in assistant messages",
                    ));
                }
                if tool_use.id.is_empty() {
                    return Err(ValidationError::new(at("id"), "must not be empty"));
                }
                if tool_use.name.is_empty() {
                    return Err(ValidationError::new(at("name"), "must not be empty"));
                }
                if !tool_use.input.is_object() {
                    return Err(ValidationError::new(at("input"), "must be an object"));
                }
            }
            ContentBlock::ToolResult(result) => {
                if assistant {
                    return Err(ValidationError::new(
                        at("type"),
                        "`tool_result` blocks are only allowed in user messages",
                    ));
                }
                if result.tool_use_id.is_empty() {
                    return Err(ValidationError::new(at("tool_use_id"), "must not be empty"));
                }
            }
            ContentBlock::Thinking(_) | ContentBlock::RedactedThinking(_) if !assistant => {
                return Err(ValidationError::new(
                    at("type"),
                    format!(
                        "`{}` blocks are only allowed in assistant messages",
                        block.type_name()
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn validate_tools(req: &MessagesRequest) -> Result<(), ValidationError> {
    let mut names = HashSet::with_capacity(req.tools.len());
    for (i, tool) in req.tools.iter().enumerate() {
        let name = match tool {
            Tool::Custom(custom) => {
                if custom.name.is_empty() {
                    return Err(ValidationError::new(
                        format!("tools[{i}].name"),
                        "must not be empty",
                    ));
                }
                if !custom.input_schema.is_object() {
                    return Err(ValidationError::new(
                        format!("tools[{i}].input_schema"),
                        "required (a JSON Schema object)",
                    ));
                }
                custom.name.as_str()
            }
            Tool::Server(raw) => match raw.get("name").and_then(|n| n.as_str()) {
                Some(name) => name,
                None => continue,
            },
        };
        if !names.insert(name) {
            return Err(ValidationError::new(
                format!("tools[{i}].name"),
                format!("duplicate tool name `{name}`"),
            ));
        }
    }
    if let Some(choice) = &req.tool_choice {
        if choice.kind == ToolChoiceKind::Tool && choice.name.as_deref().is_none_or(str::is_empty) {
            return Err(ValidationError::new(
                "tool_choice.name",
                "required when type is `tool`",
            ));
        }
    }
    Ok(())
}
