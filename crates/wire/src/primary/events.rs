//! Payloads of the `primary` event stream, keyed by the `:event-type` header,
//! and the payload of its `exception` frames.
//!
//! Every payload is a flat JSON object. Reading is lenient (unknown fields are
//! ignored, missing ones default) because the service adds fields over time;
//! writing leaves absent options out, which is what the simulator needs to
//! produce realistic frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::views::EventView;

/// `:event-type` names.
pub mod event_type {
    pub const ASSISTANT_RESPONSE: &str = "assistantResponseEvent";
    pub const TOOL_USE: &str = "toolUseEvent";
    pub const REASONING_CONTENT: &str = "reasoningContentEvent";
    pub const METERING: &str = "meteringEvent";
    pub const CONTEXT_USAGE: &str = "contextUsageEvent";
    pub const METADATA: &str = "metadataEvent";
    pub const MESSAGE_METADATA: &str = "messageMetadataEvent";
    pub const INVALID_STATE: &str = "invalidStateEvent";
    pub const FOLLOWUP_PROMPT: &str = "followupPromptEvent";
    pub const CODE_REFERENCE: &str = "codeReferenceEvent";
    /// Opening event of the awsJson1_0 (SDK) form of the call.
    pub const INITIAL_RESPONSE: &str = "initial-response";
}

/// A text delta.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantResponseEvent {
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

/// One fragment of a streamed tool call. Fragments of one call share
/// `toolUseId` (the upstream repeats `name` on each); `stop: true` ends it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseEvent {
    #[serde(default)]
    pub tool_use_id: String,
    #[serde(default)]
    pub name: String,
    /// Usually a string fragment of the arguments' JSON text; some frames carry
    /// the arguments as a JSON value instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<bool>,
}

/// Native reasoning from models that produce it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningContentEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Encrypted reasoning (base64), to be returned verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted_content: Option<String>,
}

/// Billing in credits (not tokens).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeteringEvent {
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub unit_plural: String,
    #[serde(default)]
    pub usage: f64,
}

/// Share (0-100) of the model's context window this turn used.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsageEvent {
    #[serde(default)]
    pub context_usage_percentage: f64,
}

/// `metadataEvent` and `messageMetadataEvent`: exact token usage when present.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utterance_id: Option<String>,
}

/// The `messageMetadataEvent` payload has the same members.
pub type MessageMetadataEvent = MetadataEvent;

/// Exact token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Input tokens not served from or written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncached_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
}

/// The upstream gave up on the conversation mid-stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvalidStateEvent {
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

/// Payload of an `exception` frame (`{"message": ..., "reason": ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExceptionPayload {
    /// Some AWS paths spell it `Message`.
    #[serde(default, alias = "Message", skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A decoded event, dispatched on its `:event-type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    AssistantResponse(AssistantResponseEvent),
    ToolUse(ToolUseEvent),
    ReasoningContent(ReasoningContentEvent),
    Metering(MeteringEvent),
    ContextUsage(ContextUsageEvent),
    Metadata(MetadataEvent),
    MessageMetadata(MessageMetadataEvent),
    InvalidState(InvalidStateEvent),
    /// Any other event type (follow-up prompts, code references, citations,
    /// `initial-response`, ...): nothing a chat answer needs. Its payload is
    /// not parsed.
    Other,
}

impl Event {
    /// Parse the payload of an event whose `:event-type` is `name`.
    pub fn parse(name: &str, payload: &[u8]) -> Result<Event, serde_json::Error> {
        EventView::parse(name, payload).map(EventView::into_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_documented_example_stream() {
        let frames: [(&str, &str); 8] = [
            ("assistantResponseEvent", r#"{"content":"Let me "}"#),
            ("assistantResponseEvent", r#"{"content":"check."}"#),
            (
                "toolUseEvent",
                r#"{"name":"read_file","toolUseId":"tooluse_B7"}"#,
            ),
            (
                "toolUseEvent",
                r#"{"input":"{\"pa","name":"read_file","toolUseId":"tooluse_B7"}"#,
            ),
            (
                "toolUseEvent",
                r#"{"input":"th\":\"README.md\"}","name":"read_file","toolUseId":"tooluse_B7"}"#,
            ),
            (
                "toolUseEvent",
                r#"{"name":"read_file","stop":true,"toolUseId":"tooluse_B7"}"#,
            ),
            (
                "meteringEvent",
                r#"{"unit":"credit","unitPlural":"credits","usage":0.021}"#,
            ),
            ("contextUsageEvent", r#"{"contextUsagePercentage":3.2}"#),
        ];
        let events: Vec<Event> = frames
            .iter()
            .map(|(t, p)| Event::parse(t, p.as_bytes()).unwrap())
            .collect();
        assert_eq!(
            events[0],
            Event::AssistantResponse(AssistantResponseEvent {
                content: "Let me ".into(),
                model_id: None
            })
        );
        assert_eq!(
            events[2],
            Event::ToolUse(ToolUseEvent {
                tool_use_id: "tooluse_B7".into(),
                name: "read_file".into(),
                input: None,
                stop: None
            })
        );
        assert_eq!(
            events[3],
            Event::ToolUse(ToolUseEvent {
                tool_use_id: "tooluse_B7".into(),
                name: "read_file".into(),
                input: Some(json!("{\"pa")),
                stop: None
            })
        );
        assert!(matches!(&events[5], Event::ToolUse(e) if e.stop == Some(true)));
        assert_eq!(
            events[6],
            Event::Metering(MeteringEvent {
                unit: "credit".into(),
                unit_plural: "credits".into(),
                usage: 0.021
            })
        );
        assert_eq!(
            events[7],
            Event::ContextUsage(ContextUsageEvent {
                context_usage_percentage: 3.2
            })
        );
    }

    #[test]
    fn unknown_fields_and_unknown_events_are_ignored() {
        let e = Event::parse(
            "assistantResponseEvent",
            br#"{"content":"x","modelId":"m","brandNew":[1,2]}"#,
        )
        .unwrap();
        assert_eq!(
            e,
            Event::AssistantResponse(AssistantResponseEvent {
                content: "x".into(),
                model_id: Some("m".into())
            })
        );
        assert_eq!(
            Event::parse("followupPromptEvent", b"not even json").unwrap(),
            Event::Other
        );
        assert_eq!(
            Event::parse("initial-response", b"{}").unwrap(),
            Event::Other
        );
        assert!(Event::parse("assistantResponseEvent", b"{\"content\":").is_err());
    }

    #[test]
    fn metadata_usage_reasoning_and_invalid_state() {
        let m = Event::parse(
            "metadataEvent",
            br#"{"tokenUsage":{"uncachedInputTokens":120,"outputTokens":33,"totalTokens":153,"cacheReadInputTokens":1000}}"#,
        )
        .unwrap();
        let Event::Metadata(m) = m else {
            panic!("not metadata")
        };
        let u = m.token_usage.unwrap();
        assert_eq!(u.uncached_input_tokens, Some(120));
        assert_eq!(u.output_tokens, Some(33));
        assert_eq!(u.cache_read_input_tokens, Some(1000));
        assert_eq!(u.cache_write_input_tokens, None);

        let mm = Event::parse(
            "messageMetadataEvent",
            br#"{"conversationId":"c1","utteranceId":"u1"}"#,
        )
        .unwrap();
        assert!(
            matches!(mm, Event::MessageMetadata(m) if m.token_usage.is_none() && m.conversation_id.as_deref() == Some("c1"))
        );

        let r = Event::parse(
            "reasoningContentEvent",
            br#"{"signature":"sig","text":"hmm"}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            Event::ReasoningContent(ReasoningContentEvent {
                text: Some("hmm".into()),
                signature: Some("sig".into()),
                redacted_content: None
            })
        );

        let s = Event::parse(
            "invalidStateEvent",
            br#"{"message":"bad state","reason":"INVALID_TASK"}"#,
        )
        .unwrap();
        assert_eq!(
            s,
            Event::InvalidState(InvalidStateEvent {
                reason: "INVALID_TASK".into(),
                message: "bad state".into()
            })
        );
    }

    #[test]
    fn tool_input_may_be_an_object() {
        let e: ToolUseEvent =
            serde_json::from_str(r#"{"input":{"path":"a"},"name":"f","toolUseId":"t"}"#).unwrap();
        assert_eq!(e.input, Some(json!({"path": "a"})));
    }

    #[test]
    fn exception_payload_reads_either_spelling() {
        let a: ExceptionPayload =
            serde_json::from_str(r#"{"message":"Too many requests","reason":"X"}"#).unwrap();
        assert_eq!(a.message.as_deref(), Some("Too many requests"));
        assert_eq!(a.reason.as_deref(), Some("X"));
        let b: ExceptionPayload = serde_json::from_str(r#"{"Message":"m"}"#).unwrap();
        assert_eq!(b.message.as_deref(), Some("m"));
    }

    #[test]
    fn events_serialize_without_absent_members() {
        let e = ToolUseEvent {
            tool_use_id: "t".into(),
            name: "f".into(),
            input: None,
            stop: Some(true),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"toolUseId":"t","name":"f","stop":true}"#
        );
    }
}
