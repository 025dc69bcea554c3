//! [`ChatRequest`] to a messages request, for relaying to an Anthropic-format
//! provider (a client of either format).
//!
//! Anthropic is stricter than the canonical model, so this is where its rules
//! are met: `max_tokens` is always set and exceeds the thinking budget; turns
//! alternate (adjacent same-role messages are merged); `tool_result` blocks
//! open their user turn; empty text blocks and unsigned thinking are left out;
//! the parallel-calls switch goes inside `tool_choice`; sampling parameters
//! that extended thinking forbids are dropped.

use serde_json::{Map, Value};
use wire::anthropic as w;

use super::arguments_object;
use crate::model::{ChatRequest, ContentPart, ImageSource, Role, ToolChoice, ToolResultContent};

/// `max_tokens` when the client gave none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// Anthropic's smallest thinking budget.
const MIN_THINKING_BUDGET: u32 = 1024;
/// Budget for a thinking request that names none.
const DEFAULT_THINKING_BUDGET: u32 = 4096;

/// Thinking budget for an OpenAI `reasoning_effort`:
/// `none` -> no thinking; `minimal` -> 1024 (Anthropic's minimum); `low` ->
/// 2048; `medium` -> 4096; `high` -> 8192; any other word -> 4096 (medium).
pub fn effort_budget(effort: &str) -> Option<u32> {
    match effort {
        "none" => None,
        "minimal" => Some(MIN_THINKING_BUDGET),
        "low" => Some(2048),
        "high" => Some(8192),
        _ => Some(DEFAULT_THINKING_BUDGET),
    }
}

/// Fields of a chat-completions body with no meaning in the messages format.
/// A client's unknown fields travel in `extra` under its own names; these
/// would make Anthropic answer 400 ("Extra inputs are not permitted") when an
/// OpenAI-format client is relayed, so they never go out.
const CHAT_COMPLETIONS_ONLY: &[&str] = &[
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "modalities",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "stop",
    "store",
    "stream_options",
    "top_logprobs",
    "user",
    "verbosity",
    "web_search_options",
];

/// Fields [`w::MessagesRequest`] types; an `extra` entry of the same name
/// would be written twice.
const TYPED: &[&str] = &[
    "max_tokens",
    "messages",
    "metadata",
    "model",
    "stop_sequences",
    "stream",
    "system",
    "temperature",
    "thinking",
    "tool_choice",
    "tools",
    "top_k",
    "top_p",
];

/// Builds the provider request.
///
/// Decisions beyond the canonical fields:
/// - `max_tokens`: the client's (when positive) or [`DEFAULT_MAX_TOKENS`];
///   when the thinking budget is not below it, the budget is added to it so
///   the answer keeps its room.
/// - Thinking: the client's `ThinkingConfig` (budget raised to 1024 at least,
///   4096 when unnamed); else `reasoning_effort` through [`effort_budget`],
///   except when `tool_choice` forces a tool call, which Anthropic refuses
///   together with thinking.
/// - With thinking on, `temperature` and `top_k` are dropped and `top_p` is
///   kept only from 0.95 up (Anthropic's rules).
/// - `tool_choice` is sent only with tools; `parallel_tool_calls: false`
///   becomes `disable_parallel_tool_use: true` inside it (with `auto` when the
///   client named no choice). `none` carries no parallel flag.
/// - Tool-use arguments become the `input` object; invalid JSON becomes `{}`.
/// - `metadata` / `user` is not forwarded (spec 4.1: accepted, not forwarded);
///   penalties and a participant `name` have no equivalent and are dropped.
/// - `extra` is copied back except typed names and chat-completions-only
///   fields; `service_tier` only with a messages-format value.
pub fn from_chat_request(req: &ChatRequest) -> w::MessagesRequest {
    let forced_tool = matches!(
        req.tool_choice,
        Some(ToolChoice::Required) | Some(ToolChoice::Tool(_))
    );
    let budget = match (&req.thinking, &req.reasoning_effort) {
        (Some(config), _) => Some(
            config
                .budget_tokens
                .unwrap_or(DEFAULT_THINKING_BUDGET)
                .max(MIN_THINKING_BUDGET),
        ),
        (None, Some(effort)) if !forced_tool => effort_budget(effort),
        _ => None,
    };
    let mut max_tokens = req
        .max_tokens
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(budget) = budget {
        if budget >= max_tokens {
            max_tokens = max_tokens.saturating_add(budget);
        }
    }
    let thinking_on = budget.is_some();

    w::MessagesRequest {
        model: req.model.clone(),
        messages: messages(req),
        max_tokens: Some(max_tokens),
        system: system(req),
        stream: Some(req.stream),
        temperature: req.temperature.filter(|_| !thinking_on),
        top_p: req.top_p.filter(|&p| !thinking_on || p >= 0.95),
        top_k: req.top_k.filter(|_| !thinking_on),
        stop_sequences: req.stop_sequences.clone(),
        tools: req
            .tools
            .iter()
            .map(|t| {
                w::Tool::Custom(w::CustomTool {
                    kind: None,
                    name: t.name.clone(),
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                    cache_control: t.cache_control.clone(),
                })
            })
            .collect(),
        tool_choice: tool_choice(req),
        thinking: budget.map(|b| w::ThinkingParam {
            kind: w::ThinkingKind::Enabled,
            budget_tokens: Some(b),
        }),
        metadata: None,
        extra: extra(&req.extra),
    }
}

fn system(req: &ChatRequest) -> Option<w::SystemPrompt> {
    let blocks: Vec<_> = req.system.iter().filter(|b| !b.text.is_empty()).collect();
    match blocks.as_slice() {
        [] => None,
        [only] if only.cache_control.is_none() => Some(w::SystemPrompt::Text(only.text.clone())),
        _ => Some(w::SystemPrompt::Blocks(
            blocks
                .iter()
                .map(|b| w::SystemBlock::text(b.text.clone(), b.cache_control.clone()))
                .collect(),
        )),
    }
}

/// Turns in Anthropic's shape: same-role neighbours merged, empty turns
/// dropped, tool results first in each user turn, and a turn that is a single
/// plain text block written as a string.
fn messages(req: &ChatRequest) -> Vec<w::InputMessage> {
    let mut turns: Vec<(Role, Vec<w::ContentBlock>)> = Vec::with_capacity(req.messages.len());
    for message in &req.messages {
        let blocks: Vec<_> = message.content.iter().filter_map(block).collect();
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((role, existing)) if *role == message.role => existing.extend(blocks),
            _ => turns.push((message.role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, blocks)| {
            let blocks = match role {
                Role::User => {
                    let (mut ordered, rest): (Vec<_>, Vec<_>) = blocks
                        .into_iter()
                        .partition(|b| matches!(b, w::ContentBlock::ToolResult(_)));
                    ordered.extend(rest);
                    ordered
                }
                Role::Assistant => blocks,
            };
            w::InputMessage {
                role: match role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                }
                .to_owned(),
                content: content(blocks),
            }
        })
        .collect()
}

fn content(mut blocks: Vec<w::ContentBlock>) -> w::MessageContent {
    if let [w::ContentBlock::Text(w::TextBlock {
        cache_control: None,
        citations: None,
        ..
    })] = blocks.as_slice()
    {
        if let Some(w::ContentBlock::Text(t)) = blocks.pop() {
            return w::MessageContent::Text(t.text);
        }
    }
    w::MessageContent::Blocks(blocks)
}

fn block(part: &ContentPart) -> Option<w::ContentBlock> {
    Some(match part {
        ContentPart::Text {
            text,
            cache_control,
        } => {
            if text.is_empty() {
                return None;
            }
            w::ContentBlock::Text(w::TextBlock {
                text: text.clone(),
                cache_control: cache_control.clone(),
                citations: None,
            })
        }
        ContentPart::Image(source) => w::ContentBlock::Image(w::ImageBlock {
            source: image_source(source),
            cache_control: None,
        }),
        ContentPart::ToolUse {
            id,
            name,
            arguments,
        } => w::ContentBlock::ToolUse(w::ToolUseBlock {
            id: id.clone(),
            name: name.clone(),
            input: arguments_object(arguments),
            cache_control: None,
        }),
        ContentPart::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => w::ContentBlock::ToolResult(w::ToolResultBlock {
            tool_use_id: tool_use_id.clone(),
            content: result_content(content),
            is_error: is_error.then_some(true),
            cache_control: None,
        }),
        // Anthropic rejects thinking without a valid signature (e.g. thinking
        // another provider produced); it is context only, so it is left out.
        ContentPart::Thinking {
            thinking,
            signature: Some(signature),
        } if !signature.is_empty() => w::ContentBlock::Thinking(w::ThinkingBlock {
            thinking: thinking.clone(),
            signature: Some(signature.clone()),
        }),
        ContentPart::Thinking { .. } => return None,
        ContentPart::RedactedThinking { data } => {
            w::ContentBlock::RedactedThinking(w::RedactedThinkingBlock { data: data.clone() })
        }
    })
}

/// A single text stays a string; otherwise blocks (empty texts left out). A
/// kept JSON value goes back as the block it was, or as its text when it is
/// not a block.
fn result_content(content: &[ToolResultContent]) -> Option<w::ToolResultContent> {
    if let [ToolResultContent::Text(text)] = content {
        return Some(w::ToolResultContent::Text(text.clone()));
    }
    let blocks: Vec<_> = content
        .iter()
        .filter_map(|part| match part {
            ToolResultContent::Text(text) if text.is_empty() => None,
            ToolResultContent::Text(text) => Some(text_block(text.clone())),
            ToolResultContent::Image(source) => Some(w::ContentBlock::Image(w::ImageBlock {
                source: image_source(source),
                cache_control: None,
            })),
            ToolResultContent::Json(value) => Some(
                serde_json::from_value::<w::ContentBlock>(value.clone())
                    .unwrap_or_else(|_| text_block(value.to_string())),
            ),
        })
        .collect();
    (!blocks.is_empty()).then_some(w::ToolResultContent::Blocks(blocks))
}

fn text_block(text: String) -> w::ContentBlock {
    w::ContentBlock::Text(w::TextBlock {
        text,
        cache_control: None,
        citations: None,
    })
}

fn image_source(source: &ImageSource) -> w::ImageSource {
    match source {
        ImageSource::Base64 { media_type, data } => w::ImageSource::Base64 {
            media_type: media_type.clone(),
            data: data.clone(),
        },
        ImageSource::Url(url) => w::ImageSource::Url { url: url.clone() },
    }
}

fn tool_choice(req: &ChatRequest) -> Option<w::ToolChoice> {
    if req.tools.is_empty() {
        return None;
    }
    let disable = req.parallel_tool_calls.map(|parallel| !parallel);
    let (kind, name) = match &req.tool_choice {
        Some(ToolChoice::Auto) => (w::ToolChoiceKind::Auto, None),
        Some(ToolChoice::Required) => (w::ToolChoiceKind::Any, None),
        Some(ToolChoice::Tool(name)) => (w::ToolChoiceKind::Tool, Some(name.clone())),
        Some(ToolChoice::None) => {
            return Some(w::ToolChoice {
                kind: w::ToolChoiceKind::None,
                name: None,
                disable_parallel_tool_use: None,
            })
        }
        None if disable == Some(true) => (w::ToolChoiceKind::Auto, None),
        None => return None,
    };
    Some(w::ToolChoice {
        kind,
        name,
        disable_parallel_tool_use: disable,
    })
}

fn extra(extra: &Map<String, Value>) -> Map<String, Value> {
    extra
        .iter()
        .filter(|(key, value)| {
            let key = key.as_str();
            if TYPED.contains(&key) || CHAT_COMPLETIONS_ONLY.contains(&key) {
                return false;
            }
            // Both formats have `service_tier`, with different values.
            key != "service_tier" || matches!(value.as_str(), Some("auto" | "standard_only"))
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
#[path = "from_canonical_tests.rs"]
mod tests;
