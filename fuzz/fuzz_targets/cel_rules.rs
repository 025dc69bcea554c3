//! The guardrail rules' CEL front end (`rules`): any text compiles or is
//! refused without a panic; a refusal points at a line and column inside
//! the text (1-based, characters; the column may be one past the line's
//! end, where the text ends too early); compiling is deterministic; a
//! compiled expression evaluates over arbitrary request facts without a
//! panic, to a boolean or an error.
//!
//! Input: 16 bytes of facts (see `facts`), then the expression.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rules::{RequestFacts, RequestScope, RuleExpression};

const MODELS: [&str; 4] = ["claude-sonnet-4", "gpt-4o", "", "ünïcode/model"];

fn facts(bytes: &[u8; 16]) -> RequestFacts<'static> {
    let n = |i: usize| {
        let v = u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        // Small numbers mostly, the extremes sometimes.
        if bytes[0] & 0x80 != 0 {
            usize::MAX - v as usize
        } else {
            v as usize
        }
    };
    RequestFacts {
        model: MODELS[usize::from(bytes[0] & 3)],
        api_format: if bytes[0] & 4 == 0 {
            "openai"
        } else {
            "anthropic"
        },
        message_count: n(4),
        has_tools: bytes[0] & 8 != 0,
        is_streaming: bytes[0] & 16 != 0,
        content_length: n(8),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<16>() else {
        return;
    };
    let source = String::from_utf8_lossy(rest);
    match RuleExpression::compile(&source) {
        Err(e) => {
            assert!(e.line >= 1 && e.column >= 1, "{e}");
            let lines: Vec<&str> = source.split('\n').collect();
            let line = lines
                .get(e.line as usize - 1)
                .unwrap_or_else(|| panic!("{e}: only {} lines", lines.len()));
            assert!(
                e.column as usize <= line.chars().count() + 1,
                "{e}: the line has {} characters",
                line.chars().count()
            );
            assert!(!e.message.is_empty());
            assert_eq!(RuleExpression::compile(&source).err(), Some(e));
        }
        Ok(expression) => {
            assert!(RuleExpression::compile(&source).is_ok());
            assert_eq!(expression.is_empty(), source.trim().is_empty());
            let mut other = *head;
            other[0] ^= 0xff;
            for f in [facts(head), facts(&other)] {
                let _ = expression.matches(&RequestScope::new(&f));
            }
        }
    }
});
