//! Tool definitions for the `primary` upstream: name checks (rejected here
//! with a clear error rather than by an opaque upstream 400), descriptions
//! (empty ones filled, long ones moved into the system prompt), JSON-Schema
//! sanitising, and `tool_choice`, which the upstream has no field for.
//!
//! `tool_choice` mapping: `auto` sends the tools as they are; `none` sends no
//! tools at all (the only way to be sure none is called; tool traffic in the
//! history is then rendered as text); `required` and a named tool send the
//! tools plus a one-line instruction appended to the current message.

use serde_json::{Map, Value};
use wire::primary::{InputSchema, ToolEntry, ToolSpecification};

use crate::error::TranslateError;
use crate::model::{ChatRequest, Tool, ToolChoice};

/// The upstream's limit on tool-name length, in characters.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// What the tools of a request become.
#[derive(Debug, Default)]
pub(super) struct ToolSetup {
    /// Tool definitions for the current message (empty: send none).
    pub specs: Vec<ToolEntry>,
    /// `## Tool: <name>` sections for descriptions moved to the system prompt.
    pub docs: String,
    /// Appended to the current message to express `tool_choice`.
    pub instruction: Option<String>,
}

/// Check the tools and `tool_choice` of `req` and build the definitions.
pub(super) fn setup(
    req: &ChatRequest,
    max_description: usize,
) -> Result<ToolSetup, TranslateError> {
    for (i, tool) in req.tools.iter().enumerate() {
        check_name(i, tool, &req.tools[..i])?;
    }
    let instruction = match &req.tool_choice {
        None | Some(ToolChoice::Auto) => None,
        Some(ToolChoice::None) => return Ok(ToolSetup::default()),
        Some(ToolChoice::Required) => {
            if req.tools.is_empty() {
                return Err(TranslateError::invalid(
                    "tool_choice",
                    "a tool call is required but no tools are defined",
                ));
            }
            Some("Answer this message by calling at least one of the available tools.".to_owned())
        }
        Some(ToolChoice::Tool(name)) => {
            if !req.tools.iter().any(|t| &t.name == name) {
                return Err(TranslateError::invalid(
                    "tool_choice",
                    format!(
                        "names the tool `{}`, which is not defined in tools",
                        shorten(name)
                    ),
                ));
            }
            Some(format!("Answer this message by calling the tool `{name}`."))
        }
    };
    let mut setup = ToolSetup {
        instruction,
        ..ToolSetup::default()
    };
    for (i, tool) in req.tools.iter().enumerate() {
        let description = describe(tool, max_description, &mut setup.docs);
        let mut schema = match &tool.input_schema {
            Value::Null => Value::Object(Map::new()),
            Value::Object(_) => tool.input_schema.clone(),
            _ => {
                return Err(TranslateError::invalid(
                    format!("tools[{i}].input_schema"),
                    "must be a JSON Schema object",
                ))
            }
        };
        if let Value::Object(map) = &mut schema {
            if !map.contains_key("type") {
                map.insert("type".to_owned(), Value::String("object".to_owned()));
            }
        }
        sanitize_schema(&mut schema);
        setup.specs.push(ToolEntry {
            tool_specification: ToolSpecification {
                name: tool.name.clone(),
                description,
                input_schema: InputSchema { json: schema },
            },
        });
    }
    Ok(setup)
}

fn check_name(i: usize, tool: &Tool, earlier: &[Tool]) -> Result<(), TranslateError> {
    let field = || format!("tools[{i}].name");
    let name = tool.name.as_str();
    if name.is_empty() {
        return Err(TranslateError::invalid(
            field(),
            "tool name must not be empty",
        ));
    }
    if name.chars().count() > MAX_TOOL_NAME_LEN {
        return Err(TranslateError::invalid(
            field(),
            format!(
                "tool name `{}` is longer than {MAX_TOOL_NAME_LEN} characters, the upstream's limit",
                shorten(name)
            ),
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(TranslateError::invalid(
            field(),
            format!(
                "tool name `{}` may contain only ASCII letters, digits, `_` and `-`",
                shorten(name)
            ),
        ));
    }
    if earlier.iter().any(|t| t.name == name) {
        return Err(TranslateError::invalid(
            field(),
            format!("tool name `{name}` is defined more than once"),
        ));
    }
    Ok(())
}

/// The description to send; a long one is moved into `docs`.
fn describe(tool: &Tool, max: usize, docs: &mut String) -> String {
    let text = tool.description.as_deref().unwrap_or("").trim();
    if text.is_empty() {
        return format!("Tool: {}", tool.name);
    }
    if text.chars().count() <= max {
        return text.to_owned();
    }
    if !docs.is_empty() {
        docs.push_str("\n\n");
    }
    docs.push_str("## Tool: ");
    docs.push_str(&tool.name);
    docs.push_str("\n\n");
    docs.push_str(text);
    format!(
        "The full description of this tool is in the system prompt, in the section \"## Tool: {}\".",
        tool.name
    )
}

/// Remove what the upstream rejects from a JSON Schema, recursively:
/// `additionalProperties`, `$schema`, an empty `required` and an empty
/// `properties`. Keys are only removed where they are schema keywords: the
/// property names under `properties` (and `$defs`, ...) are left alone, and
/// literal data (`enum`, `const`, `default`, `examples`) is not descended into.
pub fn sanitize_schema(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.shift_remove("additionalProperties");
    map.shift_remove("$schema");
    if matches!(map.get("required"), Some(Value::Array(a)) if a.is_empty()) {
        map.shift_remove("required");
    }
    if matches!(map.get("properties"), Some(Value::Object(p)) if p.is_empty()) {
        map.shift_remove("properties");
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            // Maps from names to schemas.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(sanitize_schema);
                }
            }
            // Data, not schemas.
            "enum" | "const" | "default" | "examples" | "required" => {}
            // Sub-schemas (`items`, `anyOf`, `not`, ...) and lists of them.
            _ => match value {
                Value::Object(_) => sanitize_schema(value),
                Value::Array(items) => items.iter_mut().for_each(sanitize_schema),
                _ => {}
            },
        }
    }
}

/// A name cut to a readable length for error messages.
fn shorten(name: &str) -> String {
    const SHOW: usize = 80;
    match name.char_indices().nth(SHOW) {
        Some((at, _)) => format!("{}...", &name[..at]),
        None => name.to_owned(),
    }
}
