//! Validation of a `generateAssistantResponse` body, following the rules the
//! protocol reference states (upstream-protocols.md 1.3 and 1.5): a top-level
//! `systemPrompt` is `REQUEST_BODY_INVALID`; a bad shape, broken alternation,
//! unpaired tool results, tool traffic without tools, bad tool specs or schemas
//! and bad images are "Improperly formed request."; a large body is "Input is
//! too long."; an unknown `modelId` is `INVALID_MODEL_ID`.
//!
//! On success it returns a [`RequestView`]: what the answer needs to know.

use serde_json::{Map, Value};

use super::error::ApiError;
use super::models::ModelCatalog;
use super::state::ApiSettings;

/// Longest tool name the service accepts.
pub const MAX_TOOL_NAME: usize = 64;
/// Longest tool description the service accepts (characters).
pub const MAX_TOOL_DESCRIPTION: usize = 10_000;

const TRIGGER_TYPES: [&str; 3] = ["MANUAL", "DIAGNOSTIC", "INLINE_CHAT"];
const IMAGE_FORMATS: [&str; 4] = ["png", "jpeg", "gif", "webp"];
const DEFAULT_MODEL: &str = "auto";

/// A tool offered by the current message.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolView<'a> {
    pub name: &'a str,
    pub schema: &'a Value,
}

/// What an answer needs from a valid request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestView<'a> {
    pub model_id: &'a str,
    /// The current user message content.
    pub content: &'a str,
    pub tools: Vec<ToolView<'a>>,
    /// Size of the body in bytes (for usage figures).
    pub body_len: usize,
}

type Check<T> = Result<T, ApiError>;

fn bad<T>() -> Check<T> {
    Err(ApiError::improperly_formed())
}

fn obj(v: &Value) -> Check<&Map<String, Value>> {
    v.as_object().ok_or_else(ApiError::improperly_formed)
}

fn non_empty_str(v: Option<&Value>) -> Check<&str> {
    match v.and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => bad(),
    }
}

fn opt_str(v: Option<&Value>) -> Check<Option<&str>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => bad(),
    }
}

fn opt_array(v: Option<&Value>) -> Check<&[Value]> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => bad(),
    }
}

/// Validate a body; `json` is `None` when the body was not JSON.
pub(crate) fn validate<'a>(
    json: Option<&'a Value>,
    body_len: usize,
    api: &ApiSettings,
) -> Check<RequestView<'a>> {
    if body_len > api.max_input_bytes {
        return Err(ApiError::for_status(
            axum::http::StatusCode::BAD_REQUEST,
            Some("CONTENT_LENGTH_EXCEEDS_THRESHOLD"),
        ));
    }
    let top = obj(json.ok_or_else(ApiError::improperly_formed)?)?;
    if top.contains_key("systemPrompt") {
        return Err(ApiError::body_invalid());
    }
    let profile_arn = opt_str(top.get("profileArn"))?;
    opt_str(top.get("agentMode"))?;
    if api.require_profile_arn && profile_arn.is_none_or(str::is_empty) {
        return Err(ApiError {
            message: "profileArn is required".to_owned(),
            ..ApiError::improperly_formed()
        });
    }
    let state = obj(top
        .get("conversationState")
        .ok_or_else(ApiError::improperly_formed)?)?;
    let trigger = non_empty_str(state.get("chatTriggerType"))?;
    if !TRIGGER_TYPES.contains(&trigger) {
        return bad();
    }
    opt_str(state.get("conversationId"))?;
    let current = obj(state
        .get("currentMessage")
        .ok_or_else(ApiError::improperly_formed)?)?;
    let current = obj(current
        .get("userInputMessage")
        .ok_or_else(ApiError::improperly_formed)?)?;
    let history = opt_array(state.get("history"))?;

    let mut previous_tool_uses: Option<Vec<&str>> = None;
    let mut tool_traffic = false;
    for (i, entry) in history.iter().enumerate() {
        let entry = obj(entry)?;
        if entry.len() != 1 {
            return bad();
        }
        let expect_user = i % 2 == 0;
        match (
            expect_user,
            entry.get("userInputMessage"),
            entry.get("assistantResponseMessage"),
        ) {
            (true, Some(user), None) => {
                let results = check_user(obj(user)?, &api.models, previous_tool_uses.take())?;
                tool_traffic |= results;
            }
            (false, None, Some(assistant)) => {
                let uses = check_assistant(obj(assistant)?)?;
                tool_traffic |= !uses.is_empty();
                previous_tool_uses = Some(uses);
            }
            _ => return bad(),
        }
    }
    // History must end with an assistant entry: the current message is the user turn.
    if history.len() % 2 != 0 {
        return bad();
    }
    tool_traffic |= check_user(current, &api.models, previous_tool_uses)?;
    let tools = check_tools(current)?;
    if tool_traffic && tools.is_empty() {
        return bad();
    }
    Ok(RequestView {
        model_id: opt_str(current.get("modelId"))?.unwrap_or(DEFAULT_MODEL),
        content: non_empty_str(current.get("content"))?,
        tools,
        body_len,
    })
}

/// Check a user message; `previous` holds the tool-use ids of the assistant entry
/// right before it. Returns whether it carries tool results.
fn check_user(
    msg: &Map<String, Value>,
    models: &ModelCatalog,
    previous: Option<Vec<&str>>,
) -> Check<bool> {
    non_empty_str(msg.get("content"))?;
    if let Some(model) = opt_str(msg.get("modelId"))? {
        if !models.contains(model) {
            return Err(ApiError::for_status(
                axum::http::StatusCode::BAD_REQUEST,
                Some("INVALID_MODEL_ID"),
            ));
        }
    }
    opt_str(msg.get("origin"))?;
    for image in opt_array(msg.get("images"))? {
        check_image(obj(image)?)?;
    }
    let Some(ctx) = msg.get("userInputMessageContext") else {
        return Ok(false);
    };
    let ctx = obj(ctx)?;
    let results = opt_array(ctx.get("toolResults"))?;
    if results.is_empty() {
        return Ok(false);
    }
    let previous = previous.unwrap_or_default();
    for result in results {
        let result = obj(result)?;
        let id = non_empty_str(result.get("toolUseId"))?;
        if !previous.contains(&id) {
            return bad();
        }
        match result.get("status").and_then(Value::as_str) {
            None | Some("success") | Some("error") => {}
            Some(_) => return bad(),
        }
        let content = opt_array(result.get("content"))?;
        if content.is_empty() {
            return bad();
        }
        for block in content {
            let block = obj(block)?;
            let ok = block.len() == 1
                && (block.get("text").is_some_and(Value::is_string) || block.contains_key("json"));
            if !ok {
                return bad();
            }
        }
    }
    Ok(true)
}

/// Check an assistant entry; returns its tool-use ids.
fn check_assistant(msg: &Map<String, Value>) -> Check<Vec<&str>> {
    non_empty_str(msg.get("content"))?;
    let mut ids = Vec::new();
    for tool_use in opt_array(msg.get("toolUses"))? {
        let tool_use = obj(tool_use)?;
        ids.push(non_empty_str(tool_use.get("toolUseId"))?);
        non_empty_str(tool_use.get("name"))?;
        if !tool_use.get("input").is_some_and(Value::is_object) {
            return bad();
        }
    }
    Ok(ids)
}

fn check_image(image: &Map<String, Value>) -> Check<()> {
    let format = non_empty_str(image.get("format"))?;
    if !IMAGE_FORMATS.contains(&format) {
        return bad();
    }
    let source = obj(image
        .get("source")
        .ok_or_else(ApiError::improperly_formed)?)?;
    if !is_base64(non_empty_str(source.get("bytes"))?) {
        return bad();
    }
    Ok(())
}

/// Standard base64 with optional `=` padding (raw, no data-URL prefix).
fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    s.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Check the current message's tools; returns them in order.
fn check_tools(current: &Map<String, Value>) -> Check<Vec<ToolView<'_>>> {
    let Some(ctx) = current.get("userInputMessageContext") else {
        return Ok(Vec::new());
    };
    let mut tools: Vec<ToolView<'_>> = Vec::new();
    for tool in opt_array(obj(ctx)?.get("tools"))? {
        let spec = obj(obj(tool)?
            .get("toolSpecification")
            .ok_or_else(ApiError::improperly_formed)?)?;
        let name = non_empty_str(spec.get("name"))?;
        let name_ok = name.len() <= MAX_TOOL_NAME
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok || tools.iter().any(|t| t.name == name) {
            return bad();
        }
        let description = non_empty_str(spec.get("description"))?;
        if description.chars().count() > MAX_TOOL_DESCRIPTION {
            return bad();
        }
        let schema = obj(spec
            .get("inputSchema")
            .ok_or_else(ApiError::improperly_formed)?)?
        .get("json")
        .filter(|s| s.is_object())
        .ok_or_else(ApiError::improperly_formed)?;
        if !schema_ok(schema) {
            return bad();
        }
        tools.push(ToolView { name, schema });
    }
    Ok(tools)
}

/// No `additionalProperties` and no empty `required` anywhere in a schema.
fn schema_ok(v: &Value) -> bool {
    match v {
        Value::Object(map) => {
            if map.contains_key("additionalProperties") {
                return false;
            }
            if map
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                return false;
            }
            map.values().all(schema_ok)
        }
        Value::Array(items) => items.iter().all(schema_ok),
        _ => true,
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
