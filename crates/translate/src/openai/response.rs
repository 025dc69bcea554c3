//! Whole (non-streaming) answers: [`render_response`] and [`write_response`]
//! write a collected answer for a client (as a typed object, as its JSON
//! bytes), [`response_events`] reads a provider's answer as the
//! same events its stream would have given, and [`error_body`] is the error
//! body of this format.

use wire::openai::{
    ChatCompletionResponse, Choice, CompletionUsage, ErrorBody, PromptTokensDetails,
    ResponseMessage, ToolCall,
};

use wire::json;

use super::{prompt_tokens, usage_from_wire};
use crate::collect::ChatResponse;
use crate::model::{ChatEvent, ContentPart, StopReason, StreamError};
use crate::{stop, ResponseMeta};

/// The `chat.completion` object for a collected answer: one choice whose
/// message has `content` (`null` when the answer is only tool calls),
/// `reasoning_content` when there was thinking, and `tool_calls` when any.
pub fn render_response(resp: &ChatResponse, meta: &ResponseMeta) -> ChatCompletionResponse {
    let tool_calls: Vec<ToolCall> = resp
        .content
        .iter()
        .filter_map(|part| match part {
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => Some(ToolCall::function(
                id.clone(),
                name.clone(),
                arguments.clone(),
            )),
            _ => None,
        })
        .collect();
    let has_tools = !tool_calls.is_empty();
    let text = resp.text();
    let thinking = resp.thinking();
    let content = (!content_is_null(text.is_empty(), has_tools)).then_some(text);
    let prompt = prompt_tokens(&resp.usage);
    let completion = resp.usage.output_tokens.unwrap_or(0);
    ChatCompletionResponse {
        id: meta.id.clone(),
        object: "chat.completion".to_owned(),
        created: meta.created,
        model: meta.model.clone(),
        choices: vec![Choice {
            index: 0,
            message: ResponseMessage {
                role: "assistant".to_owned(),
                content,
                reasoning_content: (!thinking.is_empty()).then_some(thinking),
                reasoning: None,
                tool_calls,
                refusal: None,
            },
            finish_reason: Some(finish_reason(resp, has_tools).to_owned()),
        }],
        usage: Some(CompletionUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt.saturating_add(completion),
            prompt_tokens_details: resp
                .usage
                .cache_read_tokens
                .map(|cached| PromptTokensDetails {
                    cached_tokens: Some(cached),
                }),
            completion_tokens_details: None,
        }),
        system_fingerprint: None,
    }
}

/// [`render_response`] written straight into `out`: the bytes `serde_json`
/// writes for it, without building the typed object first (its strings
/// cloned, the text joined into a new string) or serde's per-field
/// machinery. Every non-streaming chat completion is written here.
pub fn write_response(resp: &ChatResponse, meta: &ResponseMeta, out: &mut Vec<u8>) {
    let has_tools = resp.has_tool_calls();
    out.extend_from_slice(b"{\"id\":");
    json::write_str(out, &meta.id);
    out.extend_from_slice(b",\"object\":\"chat.completion\",\"created\":");
    json::write_uint(out, meta.created);
    out.extend_from_slice(b",\"model\":");
    json::write_str(out, &meta.model);
    out.extend_from_slice(
        b",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":",
    );
    if content_is_null(resp.text_parts().all(str::is_empty), has_tools) {
        out.extend_from_slice(b"null");
    } else {
        json::write_str_parts(out, resp.text_parts());
    }
    if !resp.thinking_parts().all(str::is_empty) {
        out.extend_from_slice(b",\"reasoning_content\":");
        json::write_str_parts(out, resp.thinking_parts());
    }
    if has_tools {
        out.extend_from_slice(b",\"tool_calls\":[");
        let calls = resp.content.iter().filter_map(|part| match part {
            ContentPart::ToolUse {
                id,
                name,
                arguments,
            } => Some((id, name, arguments)),
            _ => None,
        });
        for (n, (id, name, arguments)) in calls.enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"id\":");
            json::write_str(out, id);
            out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
            json::write_str(out, name);
            out.extend_from_slice(b",\"arguments\":");
            json::write_str(out, arguments);
            out.extend_from_slice(b"}}");
        }
        out.push(b']');
    }
    out.extend_from_slice(b"},\"finish_reason\":");
    json::write_str(out, finish_reason(resp, has_tools));
    let prompt = prompt_tokens(&resp.usage);
    let completion = resp.usage.output_tokens.unwrap_or(0);
    out.extend_from_slice(b"}],\"usage\":{\"prompt_tokens\":");
    json::write_uint(out, prompt);
    out.extend_from_slice(b",\"completion_tokens\":");
    json::write_uint(out, completion);
    out.extend_from_slice(b",\"total_tokens\":");
    json::write_uint(out, prompt.saturating_add(completion));
    if let Some(cached) = resp.usage.cache_read_tokens {
        out.extend_from_slice(b",\"prompt_tokens_details\":{\"cached_tokens\":");
        json::write_uint(out, cached);
        out.push(b'}');
    }
    out.extend_from_slice(b"}}");
}

/// `message.content` is `null` when the answer is only tool calls.
fn content_is_null(text_is_empty: bool, has_tools: bool) -> bool {
    text_is_empty && has_tools
}

/// The choice's `finish_reason`: `tool_calls` for an answer that ended its
/// turn (or gave no reason) with tool calls.
fn finish_reason(resp: &ChatResponse, has_tools: bool) -> &'static str {
    stop::to_openai(&stop::final_stop_reason(
        resp.stop_reason.as_ref(),
        has_tools,
    ))
}

/// The events of a provider's non-streaming answer, in stream order:
/// `Start`, thinking, text, each tool call (start, arguments, end), usage,
/// `Stop`. Only the first choice is read.
pub fn response_events(resp: &ChatCompletionResponse) -> Vec<ChatEvent> {
    let mut events = vec![ChatEvent::Start {
        id: non_empty(&resp.id),
        model: non_empty(&resp.model),
    }];
    let choice = resp
        .choices
        .iter()
        .find(|c| c.index == 0)
        .or(resp.choices.first());
    let mut reason = StopReason::EndTurn;
    let mut calls = 0u32;
    if let Some(choice) = choice {
        let msg = &choice.message;
        if let Some(thinking) = msg.reasoning_content.as_ref().or(msg.reasoning.as_ref()) {
            if !thinking.is_empty() {
                events.push(ChatEvent::ThinkingDelta(thinking.clone()));
            }
        }
        if let Some(text) = msg.content.as_ref().filter(|t| !t.is_empty()) {
            events.push(ChatEvent::TextDelta(text.clone()));
        }
        let refusal = msg.refusal.as_ref().filter(|t| !t.is_empty());
        if let Some(text) = refusal {
            events.push(ChatEvent::TextDelta(text.clone()));
        }
        for call in &msg.tool_calls {
            let index = calls;
            calls += 1;
            events.push(ChatEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.function.name.clone(),
            });
            if !call.function.arguments.is_empty() {
                events.push(ChatEvent::ToolCallDelta {
                    index,
                    arguments: call.function.arguments.clone(),
                });
            }
            events.push(ChatEvent::ToolCallEnd { index });
        }
        reason = finish_to_stop(
            choice.finish_reason.as_deref(),
            calls > 0,
            refusal.is_some(),
        );
    }
    if let Some(usage) = &resp.usage {
        events.push(ChatEvent::Usage(usage_from_wire(usage)));
    }
    events.push(ChatEvent::Stop {
        reason,
        stop_sequence: None,
    });
    events
}

/// The JSON error body of this format for an error (spec 7).
pub fn error_body(err: &StreamError) -> ErrorBody {
    ErrorBody::new(err.kind.as_str(), err.message.clone())
}

/// Canonical stop reason for a provider's `finish_reason`: a plain `stop`
/// after tool calls is `ToolUse` (some servers say `stop` there), after a
/// refusal it is `Refusal`; no reason at all reads the same way.
pub(super) fn finish_to_stop(
    finish_reason: Option<&str>,
    had_tools: bool,
    refused: bool,
) -> StopReason {
    let reason = finish_reason
        .filter(|r| !r.is_empty())
        .map(stop::from_openai)
        .unwrap_or(StopReason::EndTurn);
    match reason {
        StopReason::EndTurn if had_tools => StopReason::ToolUse,
        StopReason::EndTurn if refused => StopReason::Refusal,
        other => other,
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
