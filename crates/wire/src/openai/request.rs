//! The chat-completions request: `ChatCompletionRequest`, its messages, content
//! parts, tools and the small either-or fields (`stop`, `tool_choice`).
//!
//! Absent optional members are left out when serializing (a relay sends only
//! what it means), except a message's `content`, which is written as `null`
//! when absent because that is how OpenAI spells "tool calls only". Empty
//! `tools` and `tool_calls` arrays are dropped on the way out: OpenAI rejects
//! `[]` for both.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /v1/chat/completions` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tools: Vec<ToolDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `minimal`, `low`, `medium`, `high`, ... as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Kept as given (`{"type":"json_schema",...}` and friends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
    /// Every other top-level field, in arrival order, serialized back unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Message roles. `developer` is OpenAI's newer name for `system`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    /// `None` for an absent or `null` content (assistant messages that only
    /// carry `tool_calls`); written back as `null`.
    #[serde(default)]
    pub content: Option<MessageContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Other message fields (`refusal`, `reasoning_content`, `audio`, ...), kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatMessage {
    /// A message with string content and nothing else.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        ChatMessage {
            role,
            content: Some(MessageContent::Text(text.into())),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            extra: Map::new(),
        }
    }
}

/// Message content: a plain string or an array of parts.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

/// One element of an array content.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    /// `{"type":"text","text":...}`; `cache_control` is the prompt-caching
    /// marker some OpenAI-compatible clients add for Claude models.
    Text {
        text: String,
        cache_control: Option<Value>,
    },
    /// `{"type":"image_url","image_url":{"url":...,"detail":...}}`.
    ImageUrl(ImageUrl),
    /// Any other part type (`input_audio`, `file`, `refusal`, ...), kept as given.
    Other(Map<String, Value>),
}

impl ContentPart {
    /// The part's `type`.
    pub fn kind(&self) -> &str {
        match self {
            ContentPart::Text { .. } => "text",
            ContentPart::ImageUrl(_) => "image_url",
            ContentPart::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// The `image_url` member of an image part: an `http(s)` or `data:` URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    pub url: String,
    /// `auto`, `low` or `high`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A tool call made by the assistant, as sent back in the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    /// Always `function` today; defaults to it when a client leaves it out.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

impl ToolCall {
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// The function part of a tool call; `arguments` is JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    #[serde(default)]
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Must be `function` (checked by [`super::validate`], so that the error
    /// names the rule rather than a missing member).
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDef>,
}

/// A function definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` or
/// `{"type":"function","function":{"name":...}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    Function { name: String },
}

/// `stop`: one string or an array of strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    One(String),
    Many(Vec<String>),
}

impl Stop {
    /// The stop sequences as a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Stop::One(s) => vec![s],
            Stop::Many(v) => v,
        }
    }
}

/// `stream_options`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Whether a usage chunk ends the stream; the gateway's default is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_usage: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn function_kind() -> String {
    "function".to_owned()
}

/// Reads `null` as the default value (`[]`, `0`, ...), as lenient readers need.
pub(crate) fn null_as_default<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

// ---- MessageContent: string or array of parts ----

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(text) => s.serialize_str(text),
            MessageContent::Parts(parts) => parts.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = MessageContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(part) = seq.next_element::<ContentPart>()? {
                    parts.push(part);
                }
                Ok(MessageContent::Parts(parts))
            }
        }
        de.deserialize_any(ContentVisitor)
    }
}

// ---- ContentPart: dispatched on `type`, unknown types kept ----

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::Text {
                text,
                cache_control,
            } => {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                if let Some(cc) = cache_control {
                    map.serialize_entry("cache_control", cc)?;
                }
                map.end()
            }
            ContentPart::ImageUrl(image_url) => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("type", "image_url")?;
                map.serialize_entry("image_url", image_url)?;
                map.end()
            }
            ContentPart::Other(fields) => fields.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(de)?;
        let (is_text, is_image) = match fields.get("type") {
            Some(Value::String(kind)) => (kind == "text", kind == "image_url"),
            Some(_) => return Err(de::Error::custom("content part `type` must be a string")),
            None => return Err(de::Error::missing_field("type")),
        };
        if is_text {
            match fields.remove("text") {
                Some(Value::String(text)) => Ok(ContentPart::Text {
                    text,
                    cache_control: fields.remove("cache_control").filter(|v| !v.is_null()),
                }),
                Some(_) => Err(de::Error::custom("text part: `text` must be a string")),
                None => Err(de::Error::missing_field("text")),
            }
        } else if is_image {
            match fields.remove("image_url") {
                // Some clients send the URL itself instead of `{"url": ...}`.
                Some(Value::String(url)) => {
                    Ok(ContentPart::ImageUrl(ImageUrl { url, detail: None }))
                }
                Some(obj @ Value::Object(_)) => serde_json::from_value(obj)
                    .map(ContentPart::ImageUrl)
                    .map_err(|e| de::Error::custom(format_args!("image_url part: {e}"))),
                Some(_) => Err(de::Error::custom(
                    "image_url part: `image_url` must be an object with `url`",
                )),
                None => Err(de::Error::missing_field("image_url")),
            }
        } else {
            Ok(ContentPart::Other(fields))
        }
    }
}

// ---- ToolChoice: string or object ----

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::Auto => s.serialize_str("auto"),
            ToolChoice::None => s.serialize_str("none"),
            ToolChoice::Required => s.serialize_str("required"),
            ToolChoice::Function { name } => {
                #[derive(Serialize)]
                struct Named<'a> {
                    name: &'a str,
                }
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("function", &Named { name })?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Named {
            #[serde(rename = "type")]
            kind: String,
            function: NamedFunction,
        }
        #[derive(Deserialize)]
        struct NamedFunction {
            name: String,
        }
        struct ChoiceVisitor;
        impl<'de> Visitor<'de> for ChoiceVisitor {
            type Value = ToolChoice;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "\"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":...}}",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "auto" => Ok(ToolChoice::Auto),
                    "none" => Ok(ToolChoice::None),
                    "required" => Ok(ToolChoice::Required),
                    other => Err(E::unknown_variant(other, &["auto", "none", "required"])),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let named = Named::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if named.kind != "function" {
                    return Err(de::Error::invalid_value(
                        de::Unexpected::Str(&named.kind),
                        &"type \"function\"",
                    ));
                }
                Ok(ToolChoice::Function {
                    name: named.function.name,
                })
            }
        }
        de.deserialize_any(ChoiceVisitor)
    }
}

// ---- Stop: string or array ----

impl Serialize for Stop {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Stop::One(one) => s.serialize_str(one),
            Stop::Many(many) => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Stop {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct StopVisitor;
        impl<'de> Visitor<'de> for StopVisitor {
            type Value = Stop;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Stop::One(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Stop::One(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut all = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    all.push(s);
                }
                Ok(Stop::Many(all))
            }
        }
        de.deserialize_any(StopVisitor)
    }
}
