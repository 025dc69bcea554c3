//! One `data:` payload of a provider's chat-completions stream, read by a
//! hand-written fast path where it can be and by serde_json where not.
//!
//! A relayed stream is mostly chunks of one shape (OpenAI's, give or take a
//! field), and serde_json spent about 6,600 instructions on each, most of it
//! matching keys and skipping the members the gateway does not read
//! (`object`, `created`, `system_fingerprint`, `logprobs`, ...). [`read`]
//! first tries [`scan`], which reads the members [`Payload`] has with a
//! [`Cursor`] and skips the rest, checking their syntax. It gives up on
//! whatever it does not handle: a non-null `usage` or `error` (once a
//! stream), escapes in keys, repeated members, an index that is not a plain
//! integer, any syntax error. serde_json then reads the payload as before,
//! so its errors and its answer on unusual payloads are unchanged; where
//! the scan answers, it answers what serde_json would (a proptest and the
//! `provider_payloads` fuzz target compare the two).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use wire::openai::{ChunkChoice, ChunkDelta, CompletionUsage, FunctionCallChunk, ToolCallChunk};

use crate::json_scan::{Cursor, Seen};

/// One `data:` payload: a chunk, or an error object. `id` and `model`
/// come with every chunk but are read from the first only, so they are
/// borrowed (copied only when escaped), not allocated per chunk.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct Payload<'a> {
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    pub usage: Option<CompletionUsage>,
    #[serde(default)]
    pub error: Option<Value>,
}

/// The payload of `data` (trimmed, not empty, not `[DONE]`).
pub(super) fn read(data: &str) -> Result<Payload<'_>, serde_json::Error> {
    match scan(data) {
        Some(payload) => Ok(payload),
        None => serde_json::from_str(data),
    }
}

/// The fast path: `None` when the payload is anything but a plain chunk.
pub(super) fn scan(data: &str) -> Option<Payload<'_>> {
    let mut c = Cursor::new(data);
    let mut payload = Payload::default();
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"id" => {
            seen.first(0)?;
            payload.id = opt_cow(c)?;
            Some(())
        }
        b"model" => {
            seen.first(1)?;
            payload.model = opt_cow(c)?;
            Some(())
        }
        b"choices" => {
            seen.first(2)?;
            if !c.null() {
                let mut choices = Vec::with_capacity(1);
                c.array(|c| {
                    choices.push(choice(c)?);
                    Some(())
                })?;
                payload.choices = Some(choices);
            }
            Some(())
        }
        // Once a stream at most: serde reads them.
        b"usage" => {
            seen.first(3)?;
            c.null().then_some(())
        }
        b"error" => {
            seen.first(4)?;
            c.null().then_some(())
        }
        _ => c.skip_value(),
    })?;
    c.at_end().then_some(payload)
}

fn opt_cow<'a>(c: &mut Cursor<'a>) -> Option<Option<Cow<'a, str>>> {
    if c.null() {
        return Some(None);
    }
    c.string().map(Some)
}

fn choice(c: &mut Cursor<'_>) -> Option<ChunkChoice> {
    let mut choice = ChunkChoice::default();
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"index" => {
            seen.first(0)?;
            choice.index = if c.null() { 0 } else { c.u32()? };
            Some(())
        }
        b"delta" => {
            seen.first(1)?;
            if !c.null() {
                choice.delta = delta(c)?;
            }
            Some(())
        }
        b"finish_reason" => {
            seen.first(2)?;
            choice.finish_reason = c.opt_string()?;
            Some(())
        }
        _ => c.skip_value(),
    })?;
    Some(choice)
}

fn delta(c: &mut Cursor<'_>) -> Option<ChunkDelta> {
    let mut delta = ChunkDelta::default();
    let mut seen = Seen::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            b"role" => (0, &mut delta.role),
            b"content" => (1, &mut delta.content),
            b"reasoning_content" => (2, &mut delta.reasoning_content),
            b"reasoning" => (3, &mut delta.reasoning),
            b"refusal" => (4, &mut delta.refusal),
            b"tool_calls" => {
                seen.first(5)?;
                if !c.null() {
                    c.array(|c| {
                        delta.tool_calls.push(tool_call(c)?);
                        Some(())
                    })?;
                }
                return Some(());
            }
            _ => return c.skip_value(),
        };
        seen.first(bit)?;
        *slot = c.opt_string()?;
        Some(())
    })?;
    Some(delta)
}

fn tool_call(c: &mut Cursor<'_>) -> Option<ToolCallChunk> {
    let mut call = ToolCallChunk::default();
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"index" => {
            seen.first(0)?;
            call.index = if c.null() { None } else { Some(c.u32()?) };
            Some(())
        }
        b"id" => {
            seen.first(1)?;
            call.id = c.opt_string()?;
            Some(())
        }
        b"type" => {
            seen.first(2)?;
            call.kind = c.opt_string()?;
            Some(())
        }
        b"function" => {
            seen.first(3)?;
            if !c.null() {
                call.function = Some(function(c)?);
            }
            Some(())
        }
        _ => c.skip_value(),
    })?;
    Some(call)
}

fn function(c: &mut Cursor<'_>) -> Option<FunctionCallChunk> {
    let mut function = FunctionCallChunk::default();
    let mut seen = Seen::default();
    c.object(|c, key| match key {
        b"name" => {
            seen.first(0)?;
            function.name = c.opt_string()?;
            Some(())
        }
        b"arguments" => {
            seen.first(1)?;
            function.arguments = c.opt_string()?;
            Some(())
        }
        _ => c.skip_value(),
    })?;
    Some(function)
}

#[cfg(test)]
#[path = "chunk_tests.rs"]
mod tests;
