//! The messages request: every field of spec 4.1, unknown fields kept.
//!
//! Fields the spec requires (`model`, `messages`, `max_tokens`) default to
//! empty / `None` when absent, so that [`super::validate`] reports them with the
//! spec's words instead of serde's.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::content::MessageContent;
use super::de::{str_or_vec, StrOrVec};

/// `POST /v1/messages` body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MessagesRequest {
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    /// Required by the spec; optional here so the validator can say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Top-level fields this type does not name (e.g. `service_tier`,
    /// `container`, `mcp_servers`), kept in their original order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One conversation turn. `role` stays a string so that a `system` role is a
/// validation error with a hint, not a parse failure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InputMessage {
    pub role: String,
    pub content: MessageContent,
}

/// Top-level `system`: a string, or text blocks (which may carry `cache_control`).
#[derive(Debug, Clone, PartialEq)]
pub enum SystemPrompt {
    Text(String),
    Blocks(Vec<SystemBlock>),
}

impl Serialize for SystemPrompt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SystemPrompt::Text(text) => s.serialize_str(text),
            SystemPrompt::Blocks(blocks) => blocks.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SystemPrompt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match str_or_vec(d, "a string or an array of text blocks")? {
                StrOrVec::Str(text) => SystemPrompt::Text(text),
                StrOrVec::Vec(blocks) => SystemPrompt::Blocks(blocks),
            },
        )
    }
}

/// A system text block: `{"type":"text","text",...}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SystemBlock {
    /// Always `text`; any other type is rejected while parsing.
    #[serde(rename = "type")]
    pub kind: SystemBlockKind,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
}

impl SystemBlock {
    pub fn text(text: impl Into<String>, cache_control: Option<Value>) -> Self {
        SystemBlock {
            kind: SystemBlockKind::Text,
            text: text.into(),
            cache_control,
            citations: None,
        }
    }
}

/// The only block type allowed in `system`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SystemBlockKind {
    #[default]
    #[serde(rename = "text")]
    Text,
}

/// A tool definition: a client tool, or a server tool (`web_search_...`,
/// `bash_...`, ...) kept as its raw object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Tool {
    Custom(CustomTool),
    Server(Map<String, Value>),
}

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        // A tool without `type`, or with `"custom"`, is a client tool.
        let custom = match map.get("type") {
            None | Some(Value::Null) => true,
            Some(Value::String(tag)) => tag == "custom",
            Some(_) => return Err(de::Error::custom("tool `type` must be a string")),
        };
        if custom {
            serde_json::from_value(Value::Object(map))
                .map(Tool::Custom)
                .map_err(de::Error::custom)
        } else {
            Ok(Tool::Server(map))
        }
    }
}

/// `{name, description?, input_schema, cache_control?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CustomTool {
    /// `custom` when the client wrote it; usually absent.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input object; `Null` when absent (a validation error).
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
}

/// `{"type":"auto"|"any"|"tool"|"none","name"?,"disable_parallel_tool_use"?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    #[serde(rename = "type")]
    pub kind: ToolChoiceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The parallel-calls switch lives here, inside `tool_choice`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_parallel_tool_use: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoiceKind {
    Auto,
    Any,
    Tool,
    None,
}

/// `{"type":"enabled","budget_tokens":N}` or `{"type":"disabled"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingParam {
    #[serde(rename = "type")]
    pub kind: ThinkingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingKind {
    Enabled,
    Disabled,
}

/// `metadata`: accepted, not forwarded (spec 4.1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
