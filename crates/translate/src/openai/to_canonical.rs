//! OpenAI request -> [`ChatRequest`].
//!
//! Choices made here:
//! - `system` and `developer` messages become system blocks in order, wherever
//!   they stand; a system message in the middle of the conversation also goes
//!   to `system` (the canonical model has one system prompt, and every
//!   provider we reach takes it only up front). Empty system texts are skipped.
//! - Consecutive `tool` messages become one user message of `ToolResult`
//!   parts; the text and images of a `user` message that directly follows are
//!   appended to it, so user and assistant turns keep alternating.
//! - `max_completion_tokens` wins over `max_tokens`; `include_usage` defaults
//!   to true.
//! - Fields with no canonical home (`response_format`, `seed`, `n`, and every
//!   unknown field) go to `extra` under their OpenAI names.
//! - Empty assistant text next to tool calls is dropped (`content: ""` is how
//!   some SDKs write "no text").
//! - A function without `parameters` gets the empty object schema.

use serde_json::{json, Value};
use wire::openai::{
    self as oa, ChatCompletionRequest, ChatMessage, MessageContent, Role as OaRole,
};

use crate::error::TranslateError;
use crate::model::{
    ChatRequest, ContentPart, ImageSource, Message, Role, SystemBlock, Tool, ToolChoice,
    ToolResultContent,
};

/// Convert a client's chat-completions request into canonical form.
pub fn into_chat_request(req: ChatCompletionRequest) -> Result<ChatRequest, TranslateError> {
    let ChatCompletionRequest {
        model,
        messages,
        stream,
        temperature,
        top_p,
        max_tokens,
        max_completion_tokens,
        stop,
        presence_penalty,
        frequency_penalty,
        tools,
        tool_choice,
        stream_options,
        n,
        user,
        seed,
        parallel_tool_calls,
        reasoning_effort,
        response_format,
        mut extra,
    } = req;

    let mut system = Vec::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    // True while the last message of `out` was built from `tool` messages and
    // may still take more results or the next user message's content.
    let mut open_results = false;
    for (i, msg) in messages.into_iter().enumerate() {
        match msg.role {
            OaRole::System | OaRole::Developer => push_system(i, msg.content, &mut system)?,
            OaRole::User => {
                let parts = user_parts(i, msg.content)?;
                match out.last_mut() {
                    Some(last) if open_results => {
                        last.content.extend(parts);
                        if msg.name.is_some() {
                            last.name = msg.name;
                        }
                    }
                    _ => out.push(Message {
                        role: Role::User,
                        content: parts,
                        name: msg.name,
                    }),
                }
                open_results = false;
            }
            OaRole::Assistant => {
                out.push(assistant_message(i, msg)?);
                open_results = false;
            }
            OaRole::Tool => {
                let result = tool_result(i, msg)?;
                match out.last_mut() {
                    Some(last) if open_results => last.content.push(result),
                    _ => out.push(Message {
                        role: Role::User,
                        content: vec![result],
                        name: None,
                    }),
                }
                open_results = true;
            }
        }
    }

    let tools = tools
        .into_iter()
        .enumerate()
        .map(|(i, def)| match def.function {
            Some(f) => Ok(Tool {
                name: f.name,
                description: f.description,
                input_schema: f
                    .parameters
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                cache_control: None,
            }),
            None => Err(TranslateError::invalid(
                format!("tools[{i}].function"),
                "is required",
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;

    if let Some(v) = response_format {
        extra.insert("response_format".to_owned(), v);
    }
    if let Some(v) = seed {
        extra.insert("seed".to_owned(), Value::from(v));
    }
    if let Some(v) = n {
        extra.insert("n".to_owned(), Value::from(v));
    }

    Ok(ChatRequest {
        model,
        system,
        messages: out,
        tools,
        tool_choice: tool_choice.map(|c| match c {
            oa::ToolChoice::Auto => ToolChoice::Auto,
            oa::ToolChoice::None => ToolChoice::None,
            oa::ToolChoice::Required => ToolChoice::Required,
            oa::ToolChoice::Function { name } => ToolChoice::Tool(name),
        }),
        parallel_tool_calls,
        max_tokens: max_completion_tokens.or(max_tokens),
        temperature,
        top_p,
        top_k: None,
        presence_penalty,
        frequency_penalty,
        stop_sequences: stop.map(oa::Stop::into_vec).unwrap_or_default(),
        stream: stream.unwrap_or(false),
        include_usage: stream_options.and_then(|o| o.include_usage).unwrap_or(true),
        thinking: None,
        reasoning_effort,
        user,
        extra,
    })
}

fn push_system(
    i: usize,
    content: Option<MessageContent>,
    system: &mut Vec<SystemBlock>,
) -> Result<(), TranslateError> {
    let mut push = |text: String, cache_control: Option<Value>| {
        if !text.is_empty() {
            system.push(SystemBlock {
                text,
                cache_control,
            });
        }
    };
    match content {
        None => {}
        Some(MessageContent::Text(text)) => push(text, None),
        Some(MessageContent::Parts(parts)) => {
            for (j, part) in parts.into_iter().enumerate() {
                match part {
                    oa::ContentPart::Text {
                        text,
                        cache_control,
                    } => push(text, cache_control),
                    other => return Err(unsupported(i, j, &other, "system messages")),
                }
            }
        }
    }
    Ok(())
}

fn user_parts(
    i: usize,
    content: Option<MessageContent>,
) -> Result<Vec<ContentPart>, TranslateError> {
    match content {
        None => Ok(Vec::new()),
        Some(MessageContent::Text(text)) => Ok(vec![ContentPart::Text {
            text,
            cache_control: None,
        }]),
        Some(MessageContent::Parts(parts)) => parts
            .into_iter()
            .enumerate()
            .map(|(j, part)| match part {
                oa::ContentPart::Text {
                    text,
                    cache_control,
                } => Ok(ContentPart::Text {
                    text,
                    cache_control,
                }),
                oa::ContentPart::ImageUrl(image) => {
                    image_source(i, j, image.url).map(ContentPart::Image)
                }
                other => Err(unsupported(i, j, &other, "user messages")),
            })
            .collect(),
    }
}

fn assistant_message(i: usize, msg: ChatMessage) -> Result<Message, TranslateError> {
    let has_calls = !msg.tool_calls.is_empty();
    let mut content = Vec::with_capacity(1 + msg.tool_calls.len());
    let mut push_text = |text: String, cache_control: Option<Value>| {
        if !(text.is_empty() && has_calls) {
            content.push(ContentPart::Text {
                text,
                cache_control,
            });
        }
    };
    match msg.content {
        None => {}
        Some(MessageContent::Text(text)) => push_text(text, None),
        Some(MessageContent::Parts(parts)) => {
            for (j, part) in parts.into_iter().enumerate() {
                match part {
                    oa::ContentPart::Text {
                        text,
                        cache_control,
                    } => push_text(text, cache_control),
                    // A refusal the model gave earlier is what the user saw: text.
                    oa::ContentPart::Other(fields) if part_kind(&fields) == "refusal" => {
                        let text = fields
                            .get("refusal")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned();
                        push_text(text, None);
                    }
                    other => return Err(unsupported(i, j, &other, "assistant messages")),
                }
            }
        }
    }
    for call in msg.tool_calls {
        content.push(ContentPart::ToolUse {
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
        });
    }
    Ok(Message {
        role: Role::Assistant,
        content,
        name: msg.name,
    })
}

fn tool_result(i: usize, msg: ChatMessage) -> Result<ContentPart, TranslateError> {
    let tool_use_id = match msg.tool_call_id {
        Some(id) if !id.is_empty() => id,
        _ => {
            return Err(TranslateError::invalid(
                format!("messages[{i}].tool_call_id"),
                "is required for tool messages",
            ))
        }
    };
    let content = match msg.content {
        None => Vec::new(),
        Some(MessageContent::Text(text)) => vec![ToolResultContent::Text(text)],
        Some(MessageContent::Parts(parts)) => parts
            .into_iter()
            .enumerate()
            .map(|(j, part)| match part {
                oa::ContentPart::Text { text, .. } => Ok(ToolResultContent::Text(text)),
                oa::ContentPart::ImageUrl(image) => {
                    image_source(i, j, image.url).map(ToolResultContent::Image)
                }
                other => Err(unsupported(i, j, &other, "tool messages")),
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(ContentPart::ToolResult {
        tool_use_id,
        content,
        is_error: false,
    })
}

/// `data:<media type>[;params];base64,<data>` -> Base64; `http(s)://` -> Url.
fn image_source(i: usize, j: usize, url: String) -> Result<ImageSource, TranslateError> {
    let field = || format!("messages[{i}].content[{j}].image_url.url");
    if let Some(rest) = strip_prefix_ignore_case(&url, "data:") {
        let Some((meta, data)) = rest.split_once(',') else {
            return Err(TranslateError::invalid(field(), "data URL without a comma"));
        };
        let mut params = meta.split(';');
        let media_type = params.next().unwrap_or_default().trim();
        if !params.any(|p| p.trim().eq_ignore_ascii_case("base64")) {
            return Err(TranslateError::invalid(
                field(),
                "image data URLs must be base64-encoded",
            ));
        }
        if media_type.is_empty() {
            return Err(TranslateError::invalid(
                field(),
                "data URL without a media type",
            ));
        }
        return Ok(ImageSource::Base64 {
            media_type: media_type.to_owned(),
            data: data.to_owned(),
        });
    }
    if strip_prefix_ignore_case(&url, "https://").is_some()
        || strip_prefix_ignore_case(&url, "http://").is_some()
    {
        return Ok(ImageSource::Url(url));
    }
    Err(TranslateError::invalid(
        field(),
        "must be an http(s) URL or a base64 data URL",
    ))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        s.get(prefix.len()..)
    } else {
        None
    }
}

fn part_kind(fields: &serde_json::Map<String, Value>) -> &str {
    fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn unsupported(i: usize, j: usize, part: &oa::ContentPart, place: &str) -> TranslateError {
    TranslateError::invalid(
        format!("messages[{i}].content[{j}].type"),
        format!("content part `{}` is not supported in {place}", part.kind()),
    )
}
