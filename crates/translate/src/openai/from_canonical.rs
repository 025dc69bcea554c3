//! [`ChatRequest`] -> OpenAI request, for relays to OpenAI-format providers
//! (mostly messages-format clients reaching OpenAI, `custom` or the assistant
//! vendor).
//!
//! Choices made here:
//! - System blocks are joined with a blank line into one leading `system`
//!   message (OpenAI caches prompts by itself; `cache_control` is dropped, as
//!   OpenAI rejects unknown members of content parts).
//! - A user turn's `ToolResult` parts become `tool` messages right after the
//!   assistant message; its other text and images follow in a `user` message.
//!   OpenAI tool messages take text only, so images inside tool results move
//!   to that user message; an error result is marked with an `Error: ` prefix
//!   (OpenAI has no error flag); JSON results are written as JSON text.
//! - Thinking and redacted thinking are dropped (OpenAI cannot take them back);
//!   so are `top_k` (no OpenAI equivalent) and images in assistant turns.
//! - The token limit is sent as `max_completion_tokens`, the name every current
//!   OpenAI model accepts (reasoning models reject `max_tokens`). A provider
//!   that only knows `max_tokens` can move the value over.
//! - `tool_choice` and `parallel_tool_calls` are sent only with tools, and
//!   `stream_options` only with `stream` (OpenAI rejects them otherwise);
//!   a streaming request always asks for usage.
//! - `reasoning_effort` is taken as given, else derived from the thinking
//!   budget by [`effort_for_budget`].

use serde_json::{Map, Value};
use wire::openai::{
    self as oa, ChatCompletionRequest, ChatMessage, FunctionDef, ImageUrl, MessageContent,
    Role as OaRole, Stop, StreamOptions, ToolCall, ToolDef,
};

use crate::model::{
    ChatRequest, ContentPart, ImageSource, Message, Role, ThinkingConfig, ToolChoice,
    ToolResultContent,
};

/// Fields of [`ChatCompletionRequest`] that are typed; `extra` never repeats them.
const TYPED_FIELDS: &[&str] = &[
    "model",
    "messages",
    "stream",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "tools",
    "tool_choice",
    "stream_options",
    "n",
    "user",
    "seed",
    "parallel_tool_calls",
    "reasoning_effort",
    "response_format",
];

/// `reasoning_effort` for a thinking request: no budget -> `medium`; a budget
/// below 4,096 tokens -> `low`; below 16,384 -> `medium`; otherwise `high`.
pub fn effort_for_budget(thinking: ThinkingConfig) -> &'static str {
    match thinking.budget_tokens {
        None => "medium",
        Some(b) if b < 4_096 => "low",
        Some(b) if b < 16_384 => "medium",
        Some(_) => "high",
    }
}

/// Convert a canonical request into the chat-completions request a provider takes.
pub fn from_chat_request(req: &ChatRequest) -> ChatCompletionRequest {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        let joined = req
            .system
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        messages.push(ChatMessage::text(OaRole::System, joined));
    }
    for msg in &req.messages {
        match msg.role {
            Role::Assistant => messages.push(assistant_message(msg)),
            Role::User => push_user(msg, &mut messages),
        }
    }

    let mut extra: Map<String, Value> = req.extra.clone();
    let response_format = extra.shift_remove("response_format");
    let seed = extra.shift_remove("seed").and_then(|v| v.as_i64());
    let n = extra
        .shift_remove("n")
        .and_then(|v| v.as_u64())
        .and_then(|v| u32::try_from(v).ok());
    extra.retain(|k, _| !TYPED_FIELDS.contains(&k.as_str()));

    let tools: Vec<ToolDef> = req
        .tools
        .iter()
        .map(|t| ToolDef {
            kind: "function".to_owned(),
            function: Some(FunctionDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: Some(t.input_schema.clone()),
                strict: None,
            }),
        })
        .collect();
    let with_tools = !tools.is_empty();

    ChatCompletionRequest {
        model: req.model.clone(),
        messages,
        stream: req.stream.then_some(true),
        temperature: req.temperature,
        top_p: req.top_p,
        max_tokens: None,
        max_completion_tokens: req.max_tokens,
        stop: match req.stop_sequences.as_slice() {
            [] => None,
            [one] => Some(Stop::One(one.clone())),
            many => Some(Stop::Many(many.to_vec())),
        },
        presence_penalty: req.presence_penalty,
        frequency_penalty: req.frequency_penalty,
        tools,
        tool_choice: req
            .tool_choice
            .as_ref()
            .filter(|_| with_tools)
            .map(|c| match c {
                ToolChoice::Auto => oa::ToolChoice::Auto,
                ToolChoice::None => oa::ToolChoice::None,
                ToolChoice::Required => oa::ToolChoice::Required,
                ToolChoice::Tool(name) => oa::ToolChoice::Function { name: name.clone() },
            }),
        stream_options: req.stream.then(|| StreamOptions {
            include_usage: Some(true),
            extra: Map::new(),
        }),
        n,
        user: req.user.clone(),
        seed,
        parallel_tool_calls: req.parallel_tool_calls.filter(|_| with_tools),
        reasoning_effort: req
            .reasoning_effort
            .clone()
            .or_else(|| req.thinking.map(|t| effort_for_budget(t).to_owned())),
        response_format,
        extra,
    }
}

fn assistant_message(msg: &Message) -> ChatMessage {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for part in &msg.content {
        match part {
            ContentPart::Text { text, .. } => texts.push(text.as_str()),
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => tool_calls.push(ToolCall::function(
                id.clone(),
                name.clone(),
                arguments.clone(),
            )),
            ContentPart::Image(_)
            | ContentPart::ToolResult { .. }
            | ContentPart::Thinking { .. }
            | ContentPart::RedactedThinking { .. } => {}
        }
    }
    let content = match texts.as_slice() {
        // OpenAI wants `null` next to tool calls, and a string otherwise.
        [] if !tool_calls.is_empty() => None,
        [] => Some(MessageContent::Text(String::new())),
        [one] => Some(MessageContent::Text((*one).to_owned())),
        many => Some(MessageContent::Parts(
            many.iter().map(|t| text_part(t)).collect(),
        )),
    };
    ChatMessage {
        role: OaRole::Assistant,
        content,
        name: msg.name.clone(),
        tool_calls,
        tool_call_id: None,
        extra: Map::new(),
    }
}

/// Pushes the `tool` messages of a user turn, then the rest of it as a `user` message.
fn push_user(msg: &Message, out: &mut Vec<ChatMessage>) {
    let mut parts = Vec::new();
    let mut had_results = false;
    for part in &msg.content {
        match part {
            ContentPart::Text { text, .. } => parts.push(text_part(text)),
            ContentPart::Image(source) => parts.push(image_part(source)),
            ContentPart::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                had_results = true;
                let mut texts: Vec<String> = Vec::new();
                for item in content {
                    match item {
                        ToolResultContent::Text(t) => texts.push(t.clone()),
                        ToolResultContent::Json(v) => texts.push(v.to_string()),
                        ToolResultContent::Image(source) => parts.push(image_part(source)),
                    }
                }
                if *is_error {
                    match texts.first_mut() {
                        Some(first) => first.insert_str(0, "Error: "),
                        None => texts.push("Error".to_owned()),
                    }
                }
                let content = if texts.len() == 1 {
                    MessageContent::Text(texts.concat())
                } else if texts.is_empty() {
                    MessageContent::Text(String::new())
                } else {
                    MessageContent::Parts(texts.iter().map(|t| text_part(t)).collect())
                };
                out.push(ChatMessage {
                    role: OaRole::Tool,
                    content: Some(content),
                    name: None,
                    tool_calls: Vec::new(),
                    tool_call_id: Some(tool_use_id.clone()),
                    extra: Map::new(),
                });
            }
            ContentPart::ToolUse { .. }
            | ContentPart::Thinking { .. }
            | ContentPart::RedactedThinking { .. } => {}
        }
    }
    if parts.is_empty() && had_results {
        return;
    }
    let content = match parts.as_slice() {
        [oa::ContentPart::Text { text, .. }] => MessageContent::Text(text.clone()),
        [] => MessageContent::Text(String::new()),
        _ => MessageContent::Parts(parts),
    };
    out.push(ChatMessage {
        role: OaRole::User,
        content: Some(content),
        name: msg.name.clone(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        extra: Map::new(),
    });
}

fn text_part(text: &str) -> oa::ContentPart {
    oa::ContentPart::Text {
        text: text.to_owned(),
        cache_control: None,
    }
}

fn image_part(source: &ImageSource) -> oa::ContentPart {
    let url = match source {
        ImageSource::Base64 { media_type, data } => {
            let mut url = String::with_capacity(media_type.len() + data.len() + 13);
            url.push_str("data:");
            url.push_str(media_type);
            url.push_str(";base64,");
            url.push_str(data);
            url
        }
        ImageSource::Url(url) => url.clone(),
    };
    oa::ContentPart::ImageUrl(ImageUrl { url, detail: None })
}
