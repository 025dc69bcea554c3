//! Request validation as the messages vendor does it where that is cheap, with
//! its `field.path: problem` messages: required `model`, `max_tokens` and
//! `messages`; roles that alternate starting with `user` (a `system` message
//! gets the vendor's hint); non-empty content; known block types with their
//! required fields (a thinking block needs its `signature`); each `tool_result`
//! answering a `tool_use` of the previous message and each `tool_use` answered
//! in the next one; tools with `input_schema`; `tool_choice`; thinking budgets
//! (>= 1024, below `max_tokens`, no custom `temperature`). The top-level
//! `disable_parallel_tool_use` is refused as the vendor refuses it (it belongs
//! inside `tool_choice`); any other unknown field is accepted.

use serde_json::{Map, Value};

use super::error::MessagesError;
use crate::vendor_common::answer::{has_cache_control, RequestInfo, ToolOffer};

/// Which endpoint a body was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Messages,
    /// `/v1/messages/count_tokens`: no `max_tokens`.
    CountTokens,
}

/// What the handler needs from a valid request.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesView<'a> {
    pub model: &'a str,
    pub stream: bool,
    pub info: RequestInfo<'a>,
}

type Check<T> = Result<T, MessagesError>;

fn bad<T>(message: impl Into<String>) -> Check<T> {
    Err(MessagesError::invalid_request(message))
}

const BLOCK_TYPES: &[&str] = &[
    "text",
    "image",
    "document",
    "search_result",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
];

const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Validate a body sent to `endpoint`.
pub fn validate(
    json: Option<&Value>,
    body_len: usize,
    endpoint: Endpoint,
) -> Check<MessagesView<'_>> {
    let Some((value, obj)) = json.and_then(|v| Some((v, v.as_object()?))) else {
        return bad("The request body is not valid JSON.");
    };
    let model = match obj.get("model") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(Value::String(_)) => return bad("model: String should have at least 1 character"),
        Some(_) => return bad("model: Input should be a valid string"),
        None => return bad("model: Field required"),
    };
    let max_tokens = match endpoint {
        Endpoint::Messages => Some(max_tokens(obj)?),
        Endpoint::CountTokens => None,
    };
    if obj.contains_key("disable_parallel_tool_use") {
        return bad("disable_parallel_tool_use: Extra inputs are not permitted");
    }
    let stream = match obj.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return bad("stream: Input should be a valid boolean"),
    };
    system(obj.get("system"))?;
    let messages = match obj.get("messages") {
        Some(Value::Array(m)) if m.is_empty() => {
            return bad("messages: at least one message is required")
        }
        Some(Value::Array(m)) => m,
        Some(_) => return bad("messages: Input should be a valid list"),
        None => return bad("messages: Field required"),
    };
    let turns = messages
        .iter()
        .enumerate()
        .map(|(i, m)| turn(i, m, i + 1 == messages.len()))
        .collect::<Check<Vec<_>>>()?;
    alternation(&turns)?;
    tool_pairing(&turns)?;
    let tools = tools(obj.get("tools"))?;
    tool_choice(obj.get("tool_choice"))?;
    thinking(obj, max_tokens)?;
    let user_text = turns
        .iter()
        .rev()
        .find(|t| t.role == "user")
        .map(|t| t.text.join("\n"))
        .unwrap_or_default();
    Ok(MessagesView {
        model,
        stream,
        info: RequestInfo {
            model,
            user_text,
            tools,
            body_len,
            cache_control: has_cache_control(value),
        },
    })
}

fn max_tokens(obj: &Map<String, Value>) -> Check<u64> {
    match obj.get("max_tokens") {
        None => bad("max_tokens: Field required"),
        Some(v) => match (v.as_u64(), v.as_i64()) {
            (Some(n), _) if n >= 1 => Ok(n),
            (_, Some(_)) | (Some(_), _) => {
                bad("max_tokens: Input should be greater than or equal to 1")
            }
            _ => bad("max_tokens: Input should be a valid integer"),
        },
    }
}

fn system(v: Option<&Value>) -> Check<()> {
    match v {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                if b.get("type").and_then(Value::as_str) != Some("text") {
                    return bad(format!("system.{i}.type: Input should be 'text'"));
                }
                if !b.get("text").is_some_and(Value::is_string) {
                    return bad(format!("system.{i}.text: Field required"));
                }
            }
            Ok(())
        }
        Some(_) => bad("system: Input should be a valid string or a list of text blocks"),
    }
}

/// What validation keeps of one message.
struct Turn<'a> {
    role: &'a str,
    text: Vec<&'a str>,
    tool_uses: Vec<&'a str>,
    /// `(block index, tool_use_id)` of each tool result.
    tool_results: Vec<(usize, &'a str)>,
}

fn turn(i: usize, m: &Value, last: bool) -> Check<Turn<'_>> {
    let Some(m) = m.as_object() else {
        return bad(format!("messages.{i}: Input should be a valid dictionary"));
    };
    let role = match m.get("role").and_then(Value::as_str) {
        Some(r @ ("user" | "assistant")) => r,
        Some("system") => {
            return bad(
                "messages: Unexpected role \"system\". The Messages API accepts a top-level \
                 `system` parameter, not \"system\" as an input message role.",
            )
        }
        Some(_) => {
            return bad(format!(
                "messages.{i}.role: Input should be 'user' or 'assistant'"
            ))
        }
        None => return bad(format!("messages.{i}.role: Field required")),
    };
    let may_be_empty = last && role == "assistant";
    let empty = || {
        bad(format!(
            "messages.{i}: all messages must have non-empty content except for the optional \
             final assistant message"
        ))
    };
    let mut t = Turn {
        role,
        text: Vec::new(),
        tool_uses: Vec::new(),
        tool_results: Vec::new(),
    };
    match m.get("content") {
        Some(Value::String(s)) => {
            if s.is_empty() && !may_be_empty {
                return empty();
            }
            t.text.push(s);
        }
        Some(Value::Array(blocks)) => {
            if blocks.is_empty() && !may_be_empty {
                return empty();
            }
            for (j, b) in blocks.iter().enumerate() {
                block(i, j, b, &mut t)?;
            }
        }
        Some(_) => {
            return bad(format!(
                "messages.{i}.content: Input should be a valid list"
            ))
        }
        None => return bad(format!("messages.{i}.content: Field required")),
    }
    Ok(t)
}

fn block<'a>(i: usize, j: usize, b: &'a Value, t: &mut Turn<'a>) -> Check<()> {
    let at = format!("messages.{i}.content.{j}");
    let Some(b) = b.as_object() else {
        return bad(format!("{at}: Input should be a valid dictionary"));
    };
    let kind = match b.get("type").and_then(Value::as_str) {
        Some(k) => k,
        None => return bad(format!("{at}.type: Field required")),
    };
    if !BLOCK_TYPES.contains(&kind) {
        return bad(format!(
            "{at}: Input tag '{kind}' found using 'type' does not match any of the expected tags"
        ));
    }
    let string = |field: &str| -> Check<&'a str> {
        match b.get(field) {
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(_) => bad(format!("{at}.{field}: Input should be a valid string")),
            None => bad(format!("{at}.{field}: Field required")),
        }
    };
    match kind {
        "text" => {
            let text = string("text")?;
            if text.is_empty() {
                return bad("messages: text content blocks must be non-empty");
            }
            t.text.push(text);
        }
        "image" => {
            let Some(source) = b.get("source").and_then(Value::as_object) else {
                return bad(format!("{at}.source: Field required"));
            };
            match source.get("type").and_then(Value::as_str) {
                Some("base64") => {
                    let media = source.get("media_type").and_then(Value::as_str);
                    if !media.is_some_and(|m| IMAGE_TYPES.contains(&m)) {
                        return bad(format!(
                            "{at}.source.base64.media_type: Input should be 'image/jpeg', \
                             'image/png', 'image/gif' or 'image/webp'"
                        ));
                    }
                    if !source.get("data").is_some_and(Value::is_string) {
                        return bad(format!("{at}.source.base64.data: Field required"));
                    }
                }
                Some("url") => {
                    if !source.get("url").is_some_and(Value::is_string) {
                        return bad(format!("{at}.source.url.url: Field required"));
                    }
                }
                Some("file") => {}
                _ => {
                    return bad(format!(
                        "{at}.source: Input tag found using 'type' does not match any of the \
                         expected tags: 'base64', 'url', 'file'"
                    ))
                }
            }
        }
        "tool_use" => {
            let id = string("id")?;
            string("name")?;
            match b.get("input") {
                Some(Value::Object(_)) => {}
                Some(_) => return bad(format!("{at}.input: Input should be a valid dictionary")),
                None => return bad(format!("{at}.input: Field required")),
            }
            t.tool_uses.push(id);
        }
        "tool_result" => {
            let id = string("tool_use_id")?;
            t.tool_results.push((j, id));
        }
        "thinking" => {
            string("thinking")?;
            string("signature")?;
        }
        "redacted_thinking" => {
            string("data")?;
        }
        _ => {}
    }
    Ok(())
}

fn alternation(turns: &[Turn<'_>]) -> Check<()> {
    if turns.first().is_some_and(|t| t.role != "user") {
        return bad("messages: first message must use the \"user\" role");
    }
    for pair in turns.windows(2) {
        if pair[0].role == pair[1].role {
            return bad(format!(
                "messages: roles must alternate between \"user\" and \"assistant\", but found \
                 multiple \"{}\" roles in a row",
                pair[1].role
            ));
        }
    }
    Ok(())
}

fn tool_pairing(turns: &[Turn<'_>]) -> Check<()> {
    for (i, t) in turns.iter().enumerate() {
        let previous: &[&str] = match i.checked_sub(1).and_then(|p| turns.get(p)) {
            Some(p) => &p.tool_uses,
            None => &[],
        };
        if let Some((j, id)) = t.tool_results.iter().find(|(_, id)| !previous.contains(id)) {
            return bad(format!(
                "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` \
                 blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` \
                 block in the previous message."
            ));
        }
        let Some(next) = turns.get(i + 1) else {
            continue;
        };
        let missing: Vec<&str> = t
            .tool_uses
            .iter()
            .filter(|id| !next.tool_results.iter().any(|(_, r)| r == *id))
            .copied()
            .collect();
        if !missing.is_empty() {
            return bad(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks \
                 immediately after: {}. Each `tool_use` block must have a corresponding \
                 `tool_result` block in the next message.",
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

fn tools(v: Option<&Value>) -> Check<Vec<ToolOffer<'_>>> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return bad("tools: Input should be a valid list"),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, tool) in items.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return bad(format!("tools.{i}.name: Field required"));
        };
        let custom = matches!(
            tool.get("type").and_then(Value::as_str),
            None | Some("custom")
        );
        let schema = tool.get("input_schema");
        if custom && !schema.is_some_and(Value::is_object) {
            return bad(format!("tools.{i}.custom.input_schema: Field required"));
        }
        out.push(ToolOffer { name, schema });
    }
    Ok(out)
}

fn tool_choice(v: Option<&Value>) -> Check<()> {
    let Some(choice) = v.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    match choice.get("type").and_then(Value::as_str) {
        Some("auto" | "any" | "none") => Ok(()),
        Some("tool") => match choice.get("name") {
            Some(Value::String(_)) => Ok(()),
            _ => bad("tool_choice.tool.name: Field required"),
        },
        _ => bad(
            "tool_choice: Input tag found using 'type' does not match any of the expected \
                  tags: 'auto', 'any', 'tool', 'none'",
        ),
    }
}

fn thinking(obj: &Map<String, Value>, max_tokens: Option<u64>) -> Check<()> {
    let Some(thinking) = obj.get("thinking").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => Ok(()),
        Some("enabled") => {
            let budget = thinking.get("budget_tokens");
            let Some(budget) = budget.and_then(Value::as_u64) else {
                return match budget {
                    None => bad("thinking.enabled.budget_tokens: Field required"),
                    Some(_) => bad(
                        "thinking.enabled.budget_tokens: Input should be greater than or equal \
                         to 1024",
                    ),
                };
            };
            if budget < 1024 {
                return bad(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                );
            }
            if max_tokens.is_some_and(|max| budget >= max) {
                return bad("`max_tokens` must be greater than `thinking.budget_tokens`.");
            }
            let temperature = obj.get("temperature").and_then(Value::as_f64);
            if temperature.is_some_and(|t| t != 1.0) {
                return bad("`temperature` may only be set to 1 when thinking is enabled.");
            }
            Ok(())
        }
        _ => bad(
            "thinking: Input tag found using 'type' does not match any of the expected \
                  tags: 'disabled', 'enabled'",
        ),
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
