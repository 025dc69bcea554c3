//! The spec's rules for a chat-completions request (4.1 and the ranges of 8),
//! checked after serde has accepted the JSON shape. The first broken rule is
//! reported, with a JSON path such as `messages[2].content`.
//!
//! Decisions the spec leaves open:
//! - `n` other than 1 is rejected (a clear 400 rather than silently one choice).
//! - `top_p` must lie in 0.0-1.0, as OpenAI requires.
//! - `tool_choice` naming a function must name one of `tools`, and `required`
//!   needs at least one tool (the request could not be honoured otherwise).
//! - system and developer messages take text only.

use super::request::{
    ChatCompletionRequest, ChatMessage, ContentPart, MessageContent, Role, ToolChoice,
};
use crate::validate::ValidationError;

/// Check `req` against the spec's rules.
pub fn validate(req: &ChatCompletionRequest) -> Result<(), ValidationError> {
    if req.model.trim().is_empty() {
        return Err(ValidationError::new("model", "must not be empty"));
    }
    if req.messages.is_empty() {
        return Err(ValidationError::new("messages", "must not be empty"));
    }
    in_range("temperature", req.temperature, 0.0, 2.0)?;
    in_range("top_p", req.top_p, 0.0, 1.0)?;
    in_range("presence_penalty", req.presence_penalty, -2.0, 2.0)?;
    in_range("frequency_penalty", req.frequency_penalty, -2.0, 2.0)?;
    if let Some(n) = req.n {
        if n != 1 {
            return Err(ValidationError::new("n", "only 1 is supported"));
        }
    }
    positive("max_tokens", req.max_tokens)?;
    positive("max_completion_tokens", req.max_completion_tokens)?;
    validate_tools(req)?;
    for (i, msg) in req.messages.iter().enumerate() {
        validate_message(i, msg)?;
    }
    Ok(())
}

fn in_range(field: &str, value: Option<f64>, lo: f64, hi: f64) -> Result<(), ValidationError> {
    match value {
        // `contains` is false for NaN as well.
        Some(v) if !(lo..=hi).contains(&v) => Err(ValidationError::new(
            field,
            format!("must be between {lo:.1} and {hi:.1}"),
        )),
        _ => Ok(()),
    }
}

fn positive(field: &str, value: Option<u32>) -> Result<(), ValidationError> {
    match value {
        Some(0) => Err(ValidationError::new(field, "must be a positive integer")),
        _ => Ok(()),
    }
}

fn validate_tools(req: &ChatCompletionRequest) -> Result<(), ValidationError> {
    for (i, tool) in req.tools.iter().enumerate() {
        if tool.kind != "function" {
            return Err(ValidationError::new(
                format!("tools[{i}].type"),
                "must be \"function\"",
            ));
        }
        let Some(function) = &tool.function else {
            return Err(ValidationError::new(
                format!("tools[{i}].function"),
                "is required",
            ));
        };
        if function.name.is_empty() {
            return Err(ValidationError::new(
                format!("tools[{i}].function.name"),
                "must not be empty",
            ));
        }
    }
    match &req.tool_choice {
        Some(ToolChoice::Function { name }) => {
            let known = req
                .tools
                .iter()
                .filter_map(|t| t.function.as_ref())
                .any(|f| f.name == *name);
            if !known {
                return Err(ValidationError::new(
                    "tool_choice.function.name",
                    "must name one of the tools",
                ));
            }
        }
        Some(ToolChoice::Required) if req.tools.is_empty() => {
            return Err(ValidationError::new(
                "tool_choice",
                "\"required\" needs at least one tool",
            ));
        }
        _ => {}
    }
    Ok(())
}

fn validate_message(i: usize, msg: &ChatMessage) -> Result<(), ValidationError> {
    let at = |rest: &str| format!("messages[{i}].{rest}");
    match (&msg.content, msg.role) {
        (None, Role::Assistant) if msg.tool_calls.is_empty() => {
            return Err(ValidationError::new(
                at("content"),
                "is required (null only when the message has tool_calls)",
            ));
        }
        (None, Role::Assistant) => {}
        (None, _) => return Err(ValidationError::new(at("content"), "is required")),
        (Some(MessageContent::Parts(parts)), role) => {
            for (j, part) in parts.iter().enumerate() {
                validate_part(i, j, role, part)?;
            }
        }
        (Some(MessageContent::Text(_)), _) => {}
    }
    if !msg.tool_calls.is_empty() && msg.role != Role::Assistant {
        return Err(ValidationError::new(
            at("tool_calls"),
            "only assistant messages carry tool_calls",
        ));
    }
    for (j, call) in msg.tool_calls.iter().enumerate() {
        if call.kind != "function" {
            return Err(ValidationError::new(
                at(&format!("tool_calls[{j}].type")),
                "must be \"function\"",
            ));
        }
        if call.id.is_empty() {
            return Err(ValidationError::new(
                at(&format!("tool_calls[{j}].id")),
                "must not be empty",
            ));
        }
        if call.function.name.is_empty() {
            return Err(ValidationError::new(
                at(&format!("tool_calls[{j}].function.name")),
                "must not be empty",
            ));
        }
    }
    if msg.role == Role::Tool && msg.tool_call_id.as_deref().is_none_or(str::is_empty) {
        return Err(ValidationError::new(
            at("tool_call_id"),
            "is required for tool messages",
        ));
    }
    Ok(())
}

fn validate_part(
    i: usize,
    j: usize,
    role: Role,
    part: &ContentPart,
) -> Result<(), ValidationError> {
    match part {
        ContentPart::Text { .. } => Ok(()),
        _ if matches!(role, Role::System | Role::Developer) => Err(ValidationError::new(
            format!("messages[{i}].content[{j}].type"),
            format!("{} messages take only text parts", role.as_str()),
        )),
        ContentPart::ImageUrl(image) if image.url.is_empty() => Err(ValidationError::new(
            format!("messages[{i}].content[{j}].image_url.url"),
            "must not be empty",
        )),
        _ => Ok(()),
    }
}
