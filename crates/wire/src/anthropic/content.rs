//! Message content: a plain string or an array of typed blocks.
//!
//! [`ContentBlock`] is read by hand: the `type` tag picks the block, a known
//! block that is malformed is an error naming the block, and an unknown block
//! (`document`, `search_result`, `server_tool_use`, ...) is kept whole as
//! [`ContentBlock::Other`] so that newer protocol features never fail a parse.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::de::{str_or_vec, StrOrVec};

/// A message's `content`: a string, or blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Blocks(Vec::new())
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(text) => s.serialize_str(text),
            MessageContent::Blocks(blocks) => blocks.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match str_or_vec(d, "a string or an array of content blocks")? {
                StrOrVec::Str(text) => MessageContent::Text(text),
                StrOrVec::Vec(blocks) => MessageContent::Blocks(blocks),
            },
        )
    }
}

/// One content block. Serialized with its `type` tag; `Other` is written back
/// exactly as it was read (its map still holds its own `type`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text(TextBlock),
    Image(ImageBlock),
    ToolUse(ToolUseBlock),
    ToolResult(ToolResultBlock),
    Thinking(ThinkingBlock),
    RedactedThinking(RedactedThinkingBlock),
    /// Any other block, kept as the raw JSON object.
    #[serde(untagged)]
    Other(Map<String, Value>),
}

impl ContentBlock {
    /// The block's `type` tag as it appears on the wire.
    pub fn type_name(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Thinking(_) => "thinking",
            ContentBlock::RedactedThinking(_) => "redacted_thinking",
            ContentBlock::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// The known block kinds, read from the tag before the map is consumed.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Image,
    ToolUse,
    ToolResult,
    Thinking,
    RedactedThinking,
    Other,
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        let kind = match map.get("type") {
            Some(Value::String(tag)) => match tag.as_str() {
                "text" => Kind::Text,
                "image" => Kind::Image,
                "tool_use" => Kind::ToolUse,
                "tool_result" => Kind::ToolResult,
                "thinking" => Kind::Thinking,
                "redacted_thinking" => Kind::RedactedThinking,
                _ => Kind::Other,
            },
            Some(_) => return Err(de::Error::custom("content block `type` must be a string")),
            None => return Err(de::Error::missing_field("type")),
        };
        fn read<T: serde::de::DeserializeOwned, E: de::Error>(
            map: Map<String, Value>,
            name: &str,
        ) -> Result<T, E> {
            serde_json::from_value(Value::Object(map))
                .map_err(|e| E::custom(format_args!("invalid `{name}` block: {e}")))
        }
        Ok(match kind {
            Kind::Text => ContentBlock::Text(read(map, "text")?),
            Kind::Image => ContentBlock::Image(read(map, "image")?),
            Kind::ToolUse => ContentBlock::ToolUse(read(map, "tool_use")?),
            Kind::ToolResult => ContentBlock::ToolResult(read(map, "tool_result")?),
            Kind::Thinking => ContentBlock::Thinking(read(map, "thinking")?),
            Kind::RedactedThinking => {
                ContentBlock::RedactedThinking(read(map, "redacted_thinking")?)
            }
            Kind::Other => ContentBlock::Other(map),
        })
    }
}

/// `{"type":"text","text":...}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextBlock {
    #[serde(serialize_with = "crate::json::serialize_str")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    /// Citations as given (request) or produced (response); kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
}

/// `{"type":"image","source":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageBlock {
    pub source: ImageSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
}

/// Where an image comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// `{"type":"tool_use","id","name","input"}`: a tool call by the assistant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    pub id: String,
    pub name: String,
    /// The arguments object.
    #[serde(default = "empty_object")]
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// `{"type":"tool_result","tool_use_id","content"?,"is_error"?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResultBlock {
    pub tool_use_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ToolResultContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
}

/// A tool result's `content`: a string, or blocks (`text`, `image`, others kept).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResultContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Serialize for ToolResultContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolResultContent::Text(text) => s.serialize_str(text),
            ToolResultContent::Blocks(blocks) => blocks.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ToolResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match str_or_vec(d, "a string or an array of content blocks")? {
                StrOrVec::Str(text) => ToolResultContent::Text(text),
                StrOrVec::Vec(blocks) => ToolResultContent::Blocks(blocks),
            },
        )
    }
}

/// `{"type":"thinking","thinking","signature"}`: reasoning with its signature.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThinkingBlock {
    #[serde(default, serialize_with = "crate::json::serialize_str")]
    pub thinking: String,
    /// Required by Anthropic on input; `None` when a client sends thinking that
    /// another provider produced without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// `{"type":"redacted_thinking","data"}`: encrypted reasoning, passed back as is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RedactedThinkingBlock {
    pub data: String,
}
