//! Request validation as the OpenAI chat-completions API does it where that is
//! cheap, with its messages, `param` and `code`: required `model` and
//! non-empty `messages`; known roles; content present where required and made
//! of known part types; a `tool` message has `tool_call_id` and answers a
//! preceding assistant `tool_calls`, and every call is answered before the
//! next turn; tool-call `arguments` are strings; `stream_options` only with
//! `stream: true`; tools name their function. Unknown fields are accepted.

use serde_json::{Map, Value};

use super::error::OpenAiError;
use crate::vendor_common::answer::{has_cache_control, RequestInfo, ToolOffer};

/// What the handler needs from a valid request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatView<'a> {
    pub model: &'a str,
    pub stream: bool,
    /// `stream_options.include_usage` is true.
    pub include_usage: bool,
    /// Some message has an `image_url` part.
    pub images: bool,
    pub info: RequestInfo<'a>,
}

type Check<T> = Result<T, OpenAiError>;

const ROLES: &str = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'";
const PART_TYPES: &[&str] = &[
    "text",
    "image_url",
    "input_audio",
    "refusal",
    "audio",
    "file",
];

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a decimal",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn missing(param: &str) -> OpenAiError {
    OpenAiError::invalid_request(format!("Missing required parameter: '{param}'."))
        .param(param)
        .code("missing_required_parameter")
}

fn wrong_type(param: &str, expected: &str, got: &Value) -> OpenAiError {
    OpenAiError::invalid_request(format!(
        "Invalid type for '{param}': expected {expected}, but got {} instead.",
        type_name(got)
    ))
    .param(param)
    .code("invalid_type")
}

/// Validate a chat-completions body.
pub fn validate(json: Option<&Value>, body_len: usize) -> Check<ChatView<'_>> {
    let Some((value, obj)) = json.and_then(|v| Some((v, v.as_object()?))) else {
        return Err(OpenAiError::invalid_request(
            "We could not parse the JSON body of your request. (HINT: This likely means you \
             aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, \
             but what was sent was not valid JSON.)",
        ));
    };
    let model = match obj.get("model") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        None | Some(Value::Null) | Some(Value::String(_)) => {
            return Err(OpenAiError::invalid_request(
                "you must provide a model parameter",
            ))
        }
        Some(other) => return Err(wrong_type("model", "a string", other)),
    };
    let stream = match obj.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(wrong_type("stream", "a boolean", other)),
    };
    let include_usage = match obj.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(_) if !stream => {
            return Err(OpenAiError::invalid_request(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            )
            .param("stream_options"))
        }
        Some(Value::Object(o)) => o.get("include_usage") == Some(&Value::Bool(true)),
        Some(other) => return Err(wrong_type("stream_options", "an object", other)),
    };
    let messages =
        match obj.get("messages") {
            None => return Err(missing("messages")),
            Some(Value::Array(m)) if m.is_empty() => return Err(OpenAiError::invalid_request(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but \
                 got an empty array instead.",
            )
            .param("messages")
            .code("empty_array")),
            Some(Value::Array(m)) => m,
            Some(other) => return Err(wrong_type("messages", "an array of objects", other)),
        };
    let mut user_text = None;
    let images = messages.iter().any(has_image);
    for (i, m) in messages.iter().enumerate() {
        let text = message(i, m)?;
        if let Some(t) = text {
            user_text = Some(t);
        }
    }
    tool_pairing(messages)?;
    let tools = tools(obj)?;
    Ok(ChatView {
        model,
        stream,
        include_usage,
        images,
        info: RequestInfo {
            model,
            user_text: user_text.unwrap_or_default(),
            tools,
            body_len,
            cache_control: has_cache_control(value),
        },
    })
}

fn has_image(m: &Value) -> bool {
    m.get("content")
        .and_then(Value::as_array)
        .is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p.get("type").and_then(Value::as_str) == Some("image_url"))
        })
}

/// Check one message; the text of a user message.
fn message(i: usize, m: &Value) -> Check<Option<String>> {
    let at = format!("messages[{i}]");
    let Some(m) = m.as_object() else {
        return Err(wrong_type(&at, "an object", m));
    };
    let role = match m.get("role") {
        Some(Value::String(r)) => r.as_str(),
        Some(other) => return Err(wrong_type(&format!("{at}.role"), "a string", other)),
        None => return Err(missing(&format!("{at}.role"))),
    };
    let content_required = match role {
        "system" | "developer" | "user" | "tool" => true,
        "assistant" | "function" => false,
        other => {
            return Err(OpenAiError::invalid_request(format!(
                "Invalid value: '{other}'. Supported values are: {ROLES}."
            ))
            .param(format!("{at}.role"))
            .code("invalid_value"))
        }
    };
    let mut text = Vec::new();
    match m.get("content") {
        None | Some(Value::Null) if content_required => {
            return Err(missing(&format!("{at}.content")))
        }
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => text.push(s.as_str()),
        Some(Value::Array(parts)) => {
            for (j, part) in parts.iter().enumerate() {
                if let Some(t) = content_part(&format!("{at}.content[{j}]"), part)? {
                    text.push(t);
                }
            }
        }
        Some(other) => {
            return Err(wrong_type(
                &format!("{at}.content"),
                "one of a string or array of objects",
                other,
            ))
        }
    }
    if role == "tool" && !m.get("tool_call_id").is_some_and(Value::is_string) {
        return Err(missing(&format!("{at}.tool_call_id")));
    }
    if role == "assistant" {
        tool_calls(&at, m)?;
    }
    Ok((role == "user").then(|| text.join("\n")))
}

fn content_part<'a>(at: &str, part: &'a Value) -> Check<Option<&'a str>> {
    let Some(p) = part.as_object() else {
        return Err(wrong_type(at, "an object", part));
    };
    let kind = match p.get("type") {
        Some(Value::String(k)) => k.as_str(),
        _ => return Err(missing(&format!("{at}.type"))),
    };
    if !PART_TYPES.contains(&kind) {
        return Err(OpenAiError::invalid_request(format!(
            "Invalid value: '{kind}'. Supported values are: 'text', 'image_url', \
             'input_audio', 'refusal', 'audio', and 'file'."
        ))
        .param(format!("{at}.type"))
        .code("invalid_value"));
    }
    match kind {
        "text" => match p.get("text") {
            Some(Value::String(t)) => Ok(Some(t.as_str())),
            Some(other) => Err(wrong_type(&format!("{at}.text"), "a string", other)),
            None => Err(missing(&format!("{at}.text"))),
        },
        "image_url" => match p.get("image_url").and_then(|u| u.get("url")) {
            Some(Value::String(_)) => Ok(None),
            _ => Err(missing(&format!("{at}.image_url.url"))),
        },
        _ => Ok(None),
    }
}

fn tool_calls(at: &str, m: &Map<String, Value>) -> Check<()> {
    let calls = match m.get("tool_calls") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(calls)) => calls,
        Some(other) => {
            return Err(wrong_type(
                &format!("{at}.tool_calls"),
                "an array of objects",
                other,
            ))
        }
    };
    for (k, call) in calls.iter().enumerate() {
        let here = format!("{at}.tool_calls[{k}]");
        if !call.get("id").is_some_and(Value::is_string) {
            return Err(missing(&format!("{here}.id")));
        }
        let Some(function) = call.get("function") else {
            return Err(missing(&format!("{here}.function")));
        };
        if !function.get("name").is_some_and(Value::is_string) {
            return Err(missing(&format!("{here}.function.name")));
        }
        match function.get("arguments") {
            Some(Value::String(_)) => {}
            Some(other) => {
                return Err(wrong_type(
                    &format!("{here}.function.arguments"),
                    "a string",
                    other,
                ))
            }
            None => return Err(missing(&format!("{here}.function.arguments"))),
        }
    }
    Ok(())
}

/// `tool` messages answer the calls of the assistant message before them, and
/// every call is answered before the next other message.
fn tool_pairing(messages: &[Value]) -> Check<()> {
    fn role(m: &Value) -> &str {
        m.get("role").and_then(Value::as_str).unwrap_or("")
    }
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, m) in messages.iter().enumerate() {
        if role(m) == "tool" {
            let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
            match open.as_mut() {
                Some((_, ids)) if ids.contains(&id) => ids.retain(|c| *c != id),
                _ => {
                    return Err(OpenAiError::invalid_request(
                        "Invalid parameter: messages with role 'tool' must be a response to a \
                         preceeding message with 'tool_calls'.",
                    )
                    .param(format!("messages.[{i}].role")))
                }
            }
            continue;
        }
        unanswered(open.take())?;
        if role(m) == "assistant" {
            let ids: Vec<&str> = m
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|calls| {
                    calls
                        .iter()
                        .filter_map(|c| c.get("id").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            if !ids.is_empty() {
                open = Some((i, ids));
            }
        }
    }
    unanswered(open)
}

fn unanswered(open: Option<(usize, Vec<&str>)>) -> Check<()> {
    match open {
        Some((i, ids)) if !ids.is_empty() => Err(OpenAiError::invalid_request(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages \
             responding to each 'tool_call_id'. The following tool_call_ids did not have \
             response messages: {}",
            ids.join(", ")
        ))
        .param(format!("messages.[{i}].role"))),
        _ => Ok(()),
    }
}

fn tools(obj: &Map<String, Value>) -> Check<Vec<ToolOffer<'_>>> {
    let items = match obj.get("tools") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(wrong_type("tools", "an array of objects", other)),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, tool) in items.iter().enumerate() {
        let Some(function) = tool.get("function") else {
            return Err(missing(&format!("tools[{i}].function")));
        };
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            return Err(missing(&format!("tools[{i}].function.name")));
        };
        out.push(ToolOffer {
            name,
            schema: function.get("parameters"),
        });
    }
    Ok(out)
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
