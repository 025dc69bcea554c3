//! A chat request's messages as the GenAI semantic conventions write them
//! in a span (`gen_ai.system_instructions`, `gen_ai.input.messages`): only
//! when an admin turned `otel_capture_content` on. Built from the request
//! after guardrails, so a masked input is exported masked.

use serde_json::{json, Value};
use translate::{ChatRequest, ContentPart, Role, ToolResultContent};

use crate::telemetry::traces::ServerSpan;

/// Put `request`'s messages on `span` when it captures contents.
pub(super) fn note_input(span: &ServerSpan, request: &ChatRequest) {
    if !span.captures() {
        return;
    }
    let system = (!request.system.is_empty()).then(|| {
        let parts: Vec<Value> = request
            .system
            .iter()
            .map(|b| json!({"type": "text", "content": b.text}))
            .collect();
        Value::Array(parts).to_string()
    });
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let parts: Vec<Value> = m.content.iter().filter_map(part).collect();
            json!({"role": role, "parts": parts})
        })
        .collect();
    span.input(system, Some(Value::Array(messages).to_string()));
}

fn part(part: &ContentPart) -> Option<Value> {
    Some(match part {
        ContentPart::Text { text, .. } => json!({"type": "text", "content": text}),
        ContentPart::ToolUse {
            id,
            name,
            arguments,
        } => json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments}),
        ContentPart::ToolResult {
            tool_use_id,
            content,
            ..
        } => {
            let text: String = content
                .iter()
                .filter_map(|c| match c {
                    ToolResultContent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            json!({"type": "tool_call_response", "id": tool_use_id, "response": text})
        }
        ContentPart::Thinking { thinking, .. } => json!({"type": "reasoning", "content": thinking}),
        // Images and encrypted reasoning are not exported.
        ContentPart::Image(_) | ContentPart::RedactedThinking { .. } => return None,
    })
}
