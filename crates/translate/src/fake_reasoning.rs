//! "Fake reasoning": asking a model without a native reasoning channel to
//! think inside `<thinking>` tags, which [`crate::thinking::ThinkingSplitter`]
//! then turns back into thinking events.
//!
//! It is prompt engineering: it costs output tokens and a model may ignore it,
//! so it should be opt-in. [`budget`] derives a budget from what the client
//! asked for (`thinking`, `reasoning_effort`); the gateway calls it only when
//! `fake_reasoning_enabled` is on and skips it for models that stream native
//! reasoning. The texts here are the gateway's own.

use wire::json::{Fixed, Pieces};

use crate::model::ChatRequest;

/// Default budget (`fake_reasoning_max_tokens`).
pub const DEFAULT_MAX_TOKENS: u32 = 4_000;

/// The prefix up to its budget.
static PREFIX_HEAD: Fixed =
    Fixed::new("<thinking_mode>enabled</thinking_mode>\n<max_thinking_length>");

/// The prefix after its budget: the reasoning instruction in its tags.
static PREFIX_TAIL: Fixed = Fixed::new(
    "</max_thinking_length>\n<thinking_instruction>Before you answer, reason about the request \
step by step in English. Restate what is being asked, consider more than one approach and the \
edge cases, question your own assumptions, and check your conclusion before you commit to it. \
Then write the answer itself in the language the user wrote in.</thinking_instruction>\n\n",
);

/// Added to the system prompt (after a `---` separator) so that the model
/// treats the prefix tags as instructions from its host rather than as
/// prompt injection.
pub(crate) static SYSTEM_ADDITION: Fixed = Fixed::new(
    "# Extended Thinking Mode

Some user messages begin with the tags <thinking_mode>, <max_thinking_length> and \
<thinking_instruction>. The application you are running in adds them; they are genuine \
instructions, not an injection attempt, and you should follow them.

When <thinking_mode> is `enabled`, open your reply with your reasoning inside \
<thinking>...</thinking>, keep that reasoning within roughly <max_thinking_length> tokens, \
close the tag, and then give your answer. Do not mention these tags in the answer.",
);

/// The system-prompt addition that explains the prefix tags.
pub fn system_addition() -> &'static str {
    SYSTEM_ADDITION.text()
}

/// The prefix put before the current user message, for a budget in tokens.
pub fn prefix(budget: u32) -> String {
    let mut out = Pieces::new();
    push_prefix(&mut out, budget);
    out.to_text()
}

/// Appends [`prefix`] to `out`, its fixed texts as such.
pub fn push_prefix(out: &mut Pieces, budget: u32) {
    out.push_fixed(&PREFIX_HEAD);
    out.push_str(itoa::Buffer::new().format(budget));
    out.push_fixed(&PREFIX_TAIL);
}

/// The reasoning budget the client asked for, capped at `max_tokens`, or
/// `None` when it did not ask for reasoning.
///
/// - `thinking` with a budget: that budget (capped); a zero budget is `None`;
///   without a budget: `max_tokens`.
/// - `reasoning_effort`: `none`/`minimal` -> `None`, `low` -> a quarter,
///   `medium` -> half, `high` and anything else -> `max_tokens`.
pub fn budget(req: &ChatRequest, max_tokens: u32) -> Option<u32> {
    if max_tokens == 0 {
        return None;
    }
    if let Some(thinking) = req.thinking {
        return match thinking.budget_tokens {
            Some(0) => None,
            Some(b) => Some(b.min(max_tokens)),
            None => Some(max_tokens),
        };
    }
    let effort = req.reasoning_effort.as_deref()?;
    match effort.trim().to_ascii_lowercase().as_str() {
        "none" | "minimal" => None,
        "low" => Some((max_tokens / 4).max(1)),
        "medium" => Some((max_tokens / 2).max(1)),
        _ => Some(max_tokens),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ThinkingConfig;

    #[test]
    fn prefix_carries_the_budget_and_the_three_tags() {
        let p = prefix(4000);
        assert!(p.starts_with(
            "<thinking_mode>enabled</thinking_mode>\n<max_thinking_length>4000</max_thinking_length>\n<thinking_instruction>"
        ));
        assert!(p.ends_with("</thinking_instruction>\n\n"));
        assert!(system_addition().starts_with("# Extended Thinking Mode"));
        assert!(system_addition().contains("<thinking>...</thinking>"));
    }

    #[test]
    fn budget_follows_the_client() {
        let mut req = ChatRequest::default();
        assert_eq!(budget(&req, 4000), None);
        req.reasoning_effort = Some("low".into());
        assert_eq!(budget(&req, 4000), Some(1000));
        req.reasoning_effort = Some("Medium".into());
        assert_eq!(budget(&req, 4000), Some(2000));
        req.reasoning_effort = Some("high".into());
        assert_eq!(budget(&req, 4000), Some(4000));
        req.reasoning_effort = Some("minimal".into());
        assert_eq!(budget(&req, 4000), None);
        req.thinking = Some(ThinkingConfig {
            budget_tokens: Some(16_000),
        });
        assert_eq!(budget(&req, 4000), Some(4000), "capped");
        req.thinking = Some(ThinkingConfig {
            budget_tokens: Some(1024),
        });
        assert_eq!(budget(&req, 4000), Some(1024));
        req.thinking = Some(ThinkingConfig {
            budget_tokens: None,
        });
        assert_eq!(budget(&req, 4000), Some(4000));
        assert_eq!(budget(&req, 0), None);
    }
}
