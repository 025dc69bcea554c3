//! The events of an answer, before framing: which events a scenario produces
//! for a request, and each event's JSON payload.
//!
//! Payload keys are written in alphabetical order, as captured frames of the
//! real service show them (e.g. `unit`, `unitPlural`, `usage`), and Kiro repeats
//! `name` and `toolUseId` on every tool fragment.

use serde::Serialize;

use super::scenario::{Scenario, ScenarioKind};
use super::validate::RequestView;
use crate::content::{self, Flavor};
use crate::ids;

/// One event of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum SimEvent {
    Text(String),
    /// A tool fragment: the opening one has no input, the closing one `stop`.
    Tool {
        id: String,
        name: String,
        input: Option<String>,
        stop: bool,
    },
    ReasoningText(String),
    ReasoningSignature(String),
    Metering {
        usage: f64,
    },
    ContextUsage {
        percentage: f64,
    },
    Metadata {
        input_tokens: u64,
        output_tokens: u64,
    },
}

#[derive(Serialize)]
struct ContentPayload<'a> {
    content: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolPayload<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a str>,
    name: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stop: bool,
    tool_use_id: &'a str,
}

#[derive(Serialize)]
struct ReasoningPayload<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MeteringPayload {
    unit: &'static str,
    unit_plural: &'static str,
    usage: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContextUsagePayload {
    context_usage_percentage: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenUsagePayload {
    output_tokens: u64,
    total_tokens: u64,
    uncached_input_tokens: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataPayload {
    token_usage: TokenUsagePayload,
}

impl SimEvent {
    /// The `:event-type` header.
    pub fn event_type(&self) -> &'static str {
        match self {
            SimEvent::Text(_) => "assistantResponseEvent",
            SimEvent::Tool { .. } => "toolUseEvent",
            SimEvent::ReasoningText(_) | SimEvent::ReasoningSignature(_) => "reasoningContentEvent",
            SimEvent::Metering { .. } => "meteringEvent",
            SimEvent::ContextUsage { .. } => "contextUsageEvent",
            SimEvent::Metadata { .. } => "metadataEvent",
        }
    }

    /// The JSON payload.
    pub fn payload(&self) -> Vec<u8> {
        let json = match self {
            SimEvent::Text(content) => serde_json::to_vec(&ContentPayload { content }),
            SimEvent::Tool {
                id,
                name,
                input,
                stop,
            } => serde_json::to_vec(&ToolPayload {
                input: input.as_deref(),
                name,
                stop: *stop,
                tool_use_id: id,
            }),
            SimEvent::ReasoningText(text) => serde_json::to_vec(&ReasoningPayload {
                signature: None,
                text: Some(text),
            }),
            SimEvent::ReasoningSignature(signature) => serde_json::to_vec(&ReasoningPayload {
                signature: Some(signature),
                text: None,
            }),
            SimEvent::Metering { usage } => serde_json::to_vec(&MeteringPayload {
                unit: "credit",
                unit_plural: "credits",
                usage: *usage,
            }),
            SimEvent::ContextUsage { percentage } => serde_json::to_vec(&ContextUsagePayload {
                context_usage_percentage: *percentage,
            }),
            SimEvent::Metadata {
                input_tokens,
                output_tokens,
            } => serde_json::to_vec(&MetadataPayload {
                token_usage: TokenUsagePayload {
                    output_tokens: *output_tokens,
                    total_tokens: input_tokens + output_tokens,
                    uncached_input_tokens: *input_tokens,
                },
            }),
        };
        // These payloads are plain structs of strings and finite numbers:
        // serializing them cannot fail, and an empty object is a safe fallback.
        json.unwrap_or_else(|_| b"{}".to_vec())
    }

    /// Characters of model output this event carries (for usage figures).
    fn output_chars(&self) -> usize {
        match self {
            SimEvent::Text(t) | SimEvent::ReasoningText(t) => t.chars().count(),
            SimEvent::Tool { input, .. } => input.as_deref().map_or(0, |i| i.chars().count()),
            _ => 0,
        }
    }
}

/// Text split into `assistantResponseEvent`s.
fn text_events(text: &str, chunk: usize, out: &mut Vec<SimEvent>) {
    out.extend(
        content::chunks(text, chunk)
            .into_iter()
            .map(|c| SimEvent::Text(c.to_owned())),
    );
}

/// The text of the built-in default answer.
pub fn default_answer_text(model_id: &str) -> String {
    format!("Hello from upstream-sim! This answer was generated by model {model_id}.")
}

/// The preamble of the tools scenario.
pub const TOOLS_PREAMBLE: &str = "Let me use the tools for that.";

/// The content events of a streaming scenario (no trailer). `None` for `Status`.
pub fn content_events(scenario: &Scenario, req: &RequestView<'_>) -> Option<Vec<SimEvent>> {
    let mut out = Vec::new();
    match &scenario.kind {
        ScenarioKind::Status { .. } => return None,
        ScenarioKind::Default { chunk } => {
            text_events(&default_answer_text(req.model_id), *chunk, &mut out)
        }
        ScenarioKind::Text {
            len,
            chunk,
            unicode,
        } => {
            let flavor = if *unicode {
                Flavor::AnswerUnicode
            } else {
                Flavor::Answer
            };
            text_events(&content::generate(*len, flavor), *chunk, &mut out);
        }
        ScenarioKind::Echo { chunk } => text_events(req.content, *chunk, &mut out),
        ScenarioKind::Tools {
            n,
            fragments,
            preamble,
            name,
            duplicate,
        } => {
            if *preamble {
                out.push(SimEvent::Text(TOOLS_PREAMBLE.to_owned()));
            }
            for i in 0..*n {
                // The offered tools in turn (none offered: a generic name).
                let offered = req.tools.iter().cycle().nth(i);
                let tool_name = match (name, offered) {
                    (Some(forced), _) => forced.clone(),
                    (None, Some(t)) => t.name.to_owned(),
                    (None, None) => format!("sim_tool_{i}"),
                };
                let schema = match (name, offered) {
                    (None, Some(t)) => Some(t.schema),
                    _ => None,
                };
                let input = content::tool_input(schema, i).to_string();
                tool_events(&tool_name, &input, *fragments, *duplicate, &mut out);
            }
        }
        ScenarioKind::Thinking {
            thinking_len,
            len,
            chunk,
        } => {
            let text = format!(
                "<thinking>{}</thinking>\n\n{}",
                content::generate(*thinking_len, Flavor::Thought),
                content::generate(*len, Flavor::Answer)
            );
            text_events(&text, *chunk, &mut out);
        }
        ScenarioKind::Reasoning {
            thinking_len,
            len,
            chunk,
        } => {
            let thought = content::generate(*thinking_len, Flavor::Thought);
            out.extend(
                content::chunks(&thought, *chunk)
                    .into_iter()
                    .map(|c| SimEvent::ReasoningText(c.to_owned())),
            );
            out.push(SimEvent::ReasoningSignature(ids::token("sim-signature-")));
            text_events(&content::generate(*len, Flavor::Answer), *chunk, &mut out);
        }
    }
    Some(out)
}

fn tool_events(
    name: &str,
    input: &str,
    fragments: usize,
    duplicate: bool,
    out: &mut Vec<SimEvent>,
) {
    let id = ids::tool_use_id();
    let frame = |input: Option<&str>, stop: bool| SimEvent::Tool {
        id: id.clone(),
        name: name.to_owned(),
        input: input.map(str::to_owned),
        stop,
    };
    out.push(frame(None, false));
    for piece in content::fragments(input, fragments) {
        out.push(frame(Some(piece), false));
    }
    out.push(frame(None, true));
    if duplicate {
        // The real service sometimes repeats a call's id with an empty input.
        out.push(frame(Some(""), false));
        out.push(frame(None, true));
    }
}

/// Cut a truncated answer: the last tool call keeps its opening frame and the
/// first half (rounded down) of its input fragments, and never stops, so its
/// input text is never complete JSON.
pub fn truncate(events: &mut Vec<SimEvent>) {
    let Some(SimEvent::Tool { id: last_id, .. }) = events
        .iter()
        .rev()
        .find(|e| matches!(e, SimEvent::Tool { .. }))
        .cloned()
    else {
        return;
    };
    let Some(first) = events
        .iter()
        .position(|e| matches!(e, SimEvent::Tool { id, .. } if *id == last_id))
    else {
        return;
    };
    let inputs = events[first..]
        .iter()
        .filter(|e| matches!(e, SimEvent::Tool { input: Some(i), .. } if !i.is_empty()))
        .count();
    events.truncate(first + 1 + inputs / 2);
}

/// Characters of model output in `events` (text, reasoning, tool input).
pub fn output_chars(events: &[SimEvent]) -> usize {
    events.iter().map(SimEvent::output_chars).sum()
}

/// The closing events: metadata, metering, context usage, as the scenario
/// asks; `output_chars` is what the content carried ([`output_chars`]).
pub fn trailer(
    scenario: &Scenario,
    output_chars: usize,
    body_len: usize,
    max_input_tokens: u64,
) -> Vec<SimEvent> {
    let mut out = Vec::new();
    if scenario.truncate {
        return out;
    }
    let input_tokens = body_len.div_ceil(4) as u64;
    if scenario.metadata {
        out.push(SimEvent::Metadata {
            input_tokens,
            output_tokens: output_chars.div_ceil(4) as u64,
        });
    }
    if scenario.metering {
        // Credits in steps of 1/10000, so the decimal text is short.
        let usage = (100 + output_chars) as f64 / 10_000.0;
        out.push(SimEvent::Metering { usage });
    }
    if scenario.context_usage {
        let max = max_input_tokens.max(1) as f64;
        let percentage = (input_tokens as f64 * 10_000.0 / max).round() / 100.0;
        out.push(SimEvent::ContextUsage { percentage });
    }
    out
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
