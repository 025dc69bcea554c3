//! Stop-reason mapping between the canonical [`StopReason`] and each format's words.

use crate::model::StopReason;

/// The stop reason a client sees: `tool_use` when the answer called tools and
/// the provider said `end_turn` (or nothing), else the provider's reason.
pub(crate) fn final_stop_reason(reason: Option<&StopReason>, tool_calls: bool) -> StopReason {
    match reason {
        Some(StopReason::EndTurn) | None if tool_calls => StopReason::ToolUse,
        Some(reason) => reason.clone(),
        None => StopReason::EndTurn,
    }
}

/// OpenAI `finish_reason` for a stop reason.
pub fn to_openai(reason: &StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn | StopReason::StopSequence | StopReason::PauseTurn => "stop",
        StopReason::MaxTokens => "length",
        StopReason::ToolUse => "tool_calls",
        StopReason::ContentFilter | StopReason::Refusal => "content_filter",
    }
}

/// Canonical stop reason for an OpenAI `finish_reason`; unknown values read as `EndTurn`.
pub fn from_openai(finish_reason: &str) -> StopReason {
    match finish_reason {
        "length" => StopReason::MaxTokens,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::ContentFilter,
        _ => StopReason::EndTurn,
    }
}

/// Anthropic `stop_reason` for a stop reason.
pub fn to_anthropic(reason: &StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::ToolUse => "tool_use",
        StopReason::StopSequence => "stop_sequence",
        StopReason::PauseTurn => "pause_turn",
        StopReason::ContentFilter | StopReason::Refusal => "refusal",
    }
}

/// Canonical stop reason for an Anthropic `stop_reason`; unknown values read as `EndTurn`.
pub fn from_anthropic(stop_reason: &str) -> StopReason {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "tool_use" => StopReason::ToolUse,
        "stop_sequence" => StopReason::StopSequence,
        "pause_turn" => StopReason::PauseTurn,
        "refusal" => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_each_format() {
        for r in [
            StopReason::EndTurn,
            StopReason::MaxTokens,
            StopReason::ToolUse,
        ] {
            assert_eq!(from_openai(to_openai(&r)), r);
            assert_eq!(from_anthropic(to_anthropic(&r)), r);
        }
        assert_eq!(
            from_anthropic(to_anthropic(&StopReason::StopSequence)),
            StopReason::StopSequence
        );
        assert_eq!(to_openai(&StopReason::StopSequence), "stop");
        assert_eq!(to_openai(&StopReason::ContentFilter), "content_filter");
        assert_eq!(from_openai("content_filter"), StopReason::ContentFilter);
    }
}
