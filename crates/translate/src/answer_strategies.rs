//! Proptest strategies for collected answers ([`ChatResponse`]) and their
//! [`ResponseMeta`], shared by the tests of the client formats' writers.

use proptest::prelude::*;

use crate::collect::ChatResponse;
use crate::model::{ContentPart, StopReason, Usage};
use crate::ResponseMeta;

/// Strings with what JSON must escape: quotes, backslashes, control bytes,
/// non-ASCII.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{1,40}",
        "[\"\\\\\\n\\t\\u{0}-\\u{1f}a-zé🤔/<>]{0,40}",
    ]
}

fn part() -> impl Strategy<Value = ContentPart> {
    prop_oneof![
        text().prop_map(|text| ContentPart::Text {
            text,
            cache_control: None
        }),
        (text(), proptest::option::of(text())).prop_map(|(thinking, signature)| {
            ContentPart::Thinking {
                thinking,
                signature,
            }
        }),
        text().prop_map(|data| ContentPart::RedactedThinking { data }),
        (text(), text(), arguments()).prop_map(|(id, name, arguments)| ContentPart::ToolUse {
            id,
            name,
            arguments
        }),
    ]
}

/// Tool-call arguments: JSON objects, and what is not one.
fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        text(),
        Just(r#"{"city":"Paris","days":[1,2],"unit":null}"#.to_owned()),
        Just(r#"{"b":1,"a":{"z":"\u00e9\n"}}"#.to_owned()),
        Just("[1,2]".to_owned()),
    ]
}

fn stop_reason() -> impl Strategy<Value = Option<StopReason>> {
    proptest::option::of(prop_oneof![
        Just(StopReason::EndTurn),
        Just(StopReason::MaxTokens),
        Just(StopReason::ToolUse),
        Just(StopReason::StopSequence),
        Just(StopReason::ContentFilter),
        Just(StopReason::PauseTurn),
        Just(StopReason::Refusal),
    ])
}

fn count() -> impl Strategy<Value = Option<u32>> {
    proptest::option::of(prop_oneof![Just(0u32), Just(u32::MAX), any::<u32>()])
}

fn usage() -> impl Strategy<Value = Usage> {
    (count(), count(), count(), count()).prop_map(|(input, output, read, write)| Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
    })
}

pub(crate) fn response() -> impl Strategy<Value = ChatResponse> {
    (
        proptest::collection::vec(part(), 0..6),
        stop_reason(),
        proptest::option::of(text()),
        usage(),
    )
        .prop_map(
            |(content, stop_reason, stop_sequence, usage)| ChatResponse {
                content,
                stop_reason,
                stop_sequence,
                usage,
                ..ChatResponse::default()
            },
        )
}

pub(crate) fn meta() -> impl Strategy<Value = ResponseMeta> {
    (text(), text(), any::<u64>()).prop_map(|(id, model, created)| ResponseMeta {
        id,
        model,
        created,
    })
}
