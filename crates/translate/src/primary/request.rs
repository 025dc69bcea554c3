//! Assembly of the `generateAssistantResponse` body from a [`ChatRequest`].
//!
//! The upstream has no system-prompt field and no inference settings, so:
//! - The system prompt (client blocks joined with `\n`, then the moved tool
//!   descriptions, the fake-reasoning and truncation-recovery additions, each
//!   section separated by `\n\n---\n`) is folded into the first user turn of
//!   the history as `<system>\n\n<content>`, or into the current message when
//!   the history is empty.
//! - `max_tokens`, `temperature`, `top_p`, `top_k`, penalties, `stop`
//!   sequences, `parallel_tool_calls`, `user`, `cache_control` and the format's
//!   `extra` fields are not sent (there is nothing to carry them). Stop
//!   sequences, if honoured at all, must be applied by the gateway on the output.
//! - `tool_choice` is expressed as described in the `tools` module.
//!
//! Shape guarantees: the history alternates user/assistant, starts with a
//! user turn (a `(continued)` turn is inserted before a leading assistant
//! turn) and ends with an assistant turn; the current message is always a user
//! turn (`Continue` when the client's last message is an assistant message,
//! which then closes the history). Empty turns read `(empty)`, an empty current
//! message `Continue`, an empty tool result `(empty result)`. Every user turn
//! carries `modelId` and `origin`; tools ride only on the current message.

use wire::json::{Fixed, Pieces};
use wire::primary::{
    AssistantResponseMessage, ChatTriggerType, ConversationState, CurrentMessage,
    GenerateAssistantResponseRequest, HistoryEntry, ImageBlock, ToolEntry, ToolResult, ToolUse,
    UserInputMessage, UserInputMessageContext, ORIGIN_AI_EDITOR,
};

use super::tools;
use super::turns::{self, Turn};
use crate::error::TranslateError;
use crate::model::{ChatRequest, Role};
use crate::{fake_reasoning, truncation};

/// Descriptions longer than this many characters move to the system prompt.
pub const DEFAULT_TOOL_DESCRIPTION_MAX_LENGTH: usize = 10_000;

/// Separator between the sections of the folded system prompt.
static SECTION_SEPARATOR: Fixed = Fixed::new("\n\n---\n");
/// Content of an empty history turn.
const EMPTY: &str = "(empty)";
/// Content of an empty or synthetic current message.
const CONTINUE: &str = "Continue";
/// Content of the user turn inserted before a leading assistant turn.
const CONTINUED: &str = "(continued)";

/// What the caller decides for one upstream request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestOptions {
    /// `conversationId`; the caller supplies it (this crate has no randomness).
    pub conversation_id: String,
    /// The resolved upstream model id, sent as `modelId` on every user turn.
    pub model_id: String,
    /// Sent as `profileArn` when given and non-empty.
    pub profile_arn: Option<String>,
    /// Reasoning budget when fake reasoning is on for this request.
    pub fake_reasoning: Option<u32>,
    /// Add the truncation-recovery system-prompt addition.
    pub truncation_recovery: bool,
    /// See [`DEFAULT_TOOL_DESCRIPTION_MAX_LENGTH`].
    pub tool_description_max_length: usize,
}

impl RequestOptions {
    /// Options with no profile, no fake reasoning, no recovery addition and
    /// the default description limit.
    pub fn new(conversation_id: impl Into<String>, model_id: impl Into<String>) -> Self {
        Self {
            conversation_id: conversation_id.into(),
            model_id: model_id.into(),
            profile_arn: None,
            fake_reasoning: None,
            truncation_recovery: false,
            tool_description_max_length: DEFAULT_TOOL_DESCRIPTION_MAX_LENGTH,
        }
    }
}

/// Build the upstream request for `req`.
///
/// Errors (`TranslateError::Invalid`, naming the field) for what the upstream
/// cannot take: no messages; a tool name that is empty, longer than 64
/// characters, outside `[A-Za-z0-9_-]` or repeated; a non-object input
/// schema; `tool_choice` naming an unknown tool or requiring a call without
/// tools; URL images or image types other than png, jpeg, gif and webp; images
/// in assistant messages; tool calls outside assistant messages or tool
/// results outside user messages.
///
/// Fake reasoning (`opts.fake_reasoning`) applies only when the client's last
/// message is a user message; the caller should then parse the answer with
/// `extract_thinking` on.
pub fn build_request(
    req: &ChatRequest,
    opts: &RequestOptions,
) -> Result<GenerateAssistantResponseRequest, TranslateError> {
    if req.messages.is_empty() {
        return Err(TranslateError::invalid("messages", "must not be empty"));
    }
    let tools = tools::setup(req, opts.tool_description_max_length)?;
    let mut turns = turns::build_turns(&req.messages, !tools.specs.is_empty())?;

    let (current, real_user_turn) = match turns.pop() {
        Some(last) if last.role == Role::User => (last, true),
        Some(last) => {
            turns.push(last);
            (Turn::new(Role::User, String::new()), false)
        }
        None => (Turn::new(Role::User, String::new()), false),
    };
    if turns.first().is_some_and(|t| t.role == Role::Assistant) {
        turns.insert(0, Turn::new(Role::User, CONTINUED));
    }
    let fake = opts.fake_reasoning.filter(|_| real_user_turn);
    let mut system = system_prompt(req, &tools.docs, fake.is_some(), opts.truncation_recovery);

    let mut history = Vec::with_capacity(turns.len());
    for turn in turns {
        match turn.role {
            Role::User => {
                let content = with_system(&mut system, placeholder(turn.text, EMPTY));
                history.push(HistoryEntry::User(user_message(
                    content,
                    turn.images,
                    Vec::new(),
                    turn.tool_results,
                    opts,
                )));
            }
            Role::Assistant => history.push(HistoryEntry::Assistant(AssistantResponseMessage {
                content: placeholder(turn.text, EMPTY),
                tool_uses: turn
                    .tool_uses
                    .into_iter()
                    .map(|u| ToolUse {
                        input: turns::parse_arguments(&u.arguments),
                        tool_use_id: u.id,
                        name: u.name,
                    })
                    .collect(),
            })),
        }
    }

    // The reasoning prefix, the folded system prompt, the message, the tool
    // instruction. The gateway's own texts among them (most of the message
    // when the client's prompt is short) stay pieces of their own, written
    // from escapes kept for the process (`wire::json::Pieces`).
    let mut content = Pieces::new();
    if let Some(budget) = fake {
        fake_reasoning::push_prefix(&mut content, budget);
    }
    content.append(with_system(
        &mut system,
        placeholder(current.text, CONTINUE),
    ));
    if let Some(instruction) = &tools.instruction {
        content.push_str("\n\n");
        content.push_str(instruction);
    }
    let current = user_message(
        content,
        current.images,
        tools.specs,
        current.tool_results,
        opts,
    );

    Ok(GenerateAssistantResponseRequest {
        conversation_state: ConversationState {
            chat_trigger_type: ChatTriggerType::Manual,
            conversation_id: opts.conversation_id.clone(),
            history,
            current_message: CurrentMessage {
                user_input_message: current,
            },
        },
        profile_arn: opts
            .profile_arn
            .clone()
            .filter(|arn| !arn.trim().is_empty()),
    })
}

/// The folded system prompt, or `None` when there is nothing to fold.
fn system_prompt(req: &ChatRequest, tool_docs: &str, fake: bool, recovery: bool) -> Option<Pieces> {
    let joined = req
        .system
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Pieces::new();
    let mut sections = 0;
    let mut next_section = |out: &mut Pieces| {
        if sections > 0 {
            out.push_fixed(&SECTION_SEPARATOR);
        }
        sections += 1;
    };
    for text in [joined.trim(), tool_docs] {
        if !text.is_empty() {
            next_section(&mut out);
            out.push_str(text);
        }
    }
    for (on, addition) in [
        (fake, &fake_reasoning::SYSTEM_ADDITION),
        (recovery, &truncation::SYSTEM_ADDITION),
    ] {
        if on {
            next_section(&mut out);
            out.push_fixed(addition);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `content`, with the system prompt folded in before it if it is still
/// to be placed (it goes into the first user turn only).
fn with_system(system: &mut Option<Pieces>, content: String) -> Pieces {
    match system.take() {
        Some(mut out) => {
            out.push_str("\n\n");
            out.push_string(content);
            out
        }
        None => Pieces::from(content),
    }
}

fn placeholder(text: String, fill: &str) -> String {
    if text.trim().is_empty() {
        fill.to_owned()
    } else {
        text
    }
}

fn user_message(
    content: Pieces,
    images: Vec<ImageBlock>,
    tools: Vec<ToolEntry>,
    tool_results: Vec<ToolResult>,
    opts: &RequestOptions,
) -> UserInputMessage {
    let context = UserInputMessageContext {
        tools,
        tool_results,
    };
    UserInputMessage {
        content,
        model_id: opts.model_id.clone(),
        origin: ORIGIN_AI_EDITOR.to_owned(),
        images,
        user_input_message_context: (!context.is_empty()).then_some(context),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
