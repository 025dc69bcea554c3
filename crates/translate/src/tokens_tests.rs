use std::sync::OnceLock;

use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

use super::*;
use crate::model::{Message, Role, SystemBlock};

/// Exact `cl100k_base` token count of `text` (slow; see the module doc).
fn count_text_bpe(text: &str) -> u32 {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    let bpe = BPE.get_or_init(|| tiktoken_rs::cl100k_base().unwrap());
    saturate(bpe.encode_ordinary(text).len())
}

/// The estimator before it was table-driven (issue 20), kept as the
/// reference the table-driven one must agree with.
fn count_text_reference(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut tenths: usize = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_alphabetic() {
                end += 1;
            }
            tenths += 10 * word_tokens(end - i);
            i = end;
        } else if b.is_ascii_digit() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            tenths += 10 * (end - i).div_ceil(3);
            i = end;
        } else if b.is_ascii_whitespace() {
            let mut end = i;
            let mut newline = false;
            while end < bytes.len() && bytes[end].is_ascii_whitespace() {
                newline |= bytes[end] == b'\n';
                end += 1;
            }
            let run = end - i;
            tenths += if newline {
                let indent = bytes[i..end]
                    .iter()
                    .rev()
                    .take_while(|c| **c == b' ' || **c == b'\t')
                    .count();
                5 + if indent > 1 { 10 } else { 0 }
            } else if run == 1 && end < bytes.len() {
                0
            } else {
                10 * run.div_ceil(4)
            };
            i = end;
        } else if b.is_ascii() {
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_punctuation() {
                end += 1;
            }
            let run = (end - i).max(1);
            tenths += 10 * run.div_ceil(4);
            i += run;
        } else {
            let width = match b {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            };
            tenths += match width {
                4 => 10,
                3 => 8,
                _ => 5,
            };
            i += width;
        }
    }
    saturate(tenths.div_ceil(10))
}

const SAMPLES: &[(&str, &str)] = &[
    ("prose", "The gateway accepts chat requests in two formats and routes them to an upstream provider, translating formats where needed. Streaming uses Server-Sent Events, and reasoning wrapped in thinking tags is extracted and exposed separately. Truncated responses are detected and recovered by retry, with recovery instructions injected into the conversation. Optional content guardrails validate input and output through a cloud service plus a rule-expression engine."),
    ("code", "fn main() {\n    let listener = TcpListener::bind(\"127.0.0.1:8000\").await?;\n    for (i, item) in items.iter().enumerate() {\n        if item.len() > 42 {\n            println!(\"{i}: {item:?}\");\n        }\n    }\n    Ok(())\n}\n"),
    ("json", r#"{"model":"claude-sonnet-4.5","messages":[{"role":"user","content":"List the files in the repo."},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]}],"max_tokens":1024,"temperature":0.7}"#),
    ("cjk", "网关接受两种格式的聊天请求，并将其路由到上游提供者，在需要时转换格式。流式传输使用服务器发送事件。"),
    ("mixed", "Résumé: naïve café owners in Zürich earn 4,250.75 CHF/month 🙂 — see https://example.com/a/b?c=d&e=f for details."),
];

#[test]
fn counts_known_strings() {
    assert_eq!(count_text(""), 0);
    assert_eq!(count_text_bpe("hello world"), 2);
    assert_eq!(count_text("hello world"), 2);
}

#[test]
fn estimate_stays_close_to_the_real_bpe() {
    let mut bad = Vec::new();
    for (name, text) in SAMPLES {
        let fast = f64::from(count_text(text));
        let exact = f64::from(count_text_bpe(text));
        let ratio = fast / exact;
        eprintln!("{name}: fast {fast} exact {exact} ratio {ratio:.3}");
        bad.extend((!(0.85..=1.2).contains(&ratio)).then_some(*name));
    }
    assert!(bad.is_empty(), "out of band: {bad:?}");
}

#[test]
fn table_agrees_with_the_reference_on_the_samples() {
    for (name, text) in SAMPLES {
        assert_eq!(count_text(text), count_text_reference(text), "{name}");
    }
    let edges = [
        "",
        " ",
        "\n",
        "a",
        "a ",
        " a",
        "  a",
        "\t\ta",
        "x\n  y",
        "x\n \ty",
        "x \n\t",
        "x\r\n",
        "x\n\r  ",
        "x\n  \r",
        "\x0b\x0c\x7f\0",
        "a\x01!!",
        "!!\x01",
        "1234567",
        "é",
        "中文",
        "🙂🙂",
        "word-with-dashes_and_underscores",
        "aaaaaaaaaaaaaaaaaaaaaaaaa",
    ];
    for text in edges {
        assert_eq!(count_text(text), count_text_reference(text), "{text:?}");
    }
}

#[test]
fn classes_match_the_ascii_predicates() {
    for b in 0..=u8::MAX {
        let class = class_of(b);
        assert_eq!(class == Class::Letter, b.is_ascii_alphabetic(), "{b}");
        assert_eq!(class == Class::Digit, b.is_ascii_digit(), "{b}");
        assert_eq!(class == Class::Punct, b.is_ascii_punctuation(), "{b}");
        let space = matches!(class, Class::Blank | Class::Newline | Class::OtherSpace);
        assert_eq!(space, b.is_ascii_whitespace(), "{b}");
        assert_eq!(
            class == Class::Continuation,
            (0x80..0xC0).contains(&b),
            "{b}"
        );
    }
}

/// Text that exercises every class and the run boundaries between them.
fn mixed_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z]{1,20}",
        "[0-9]{1,8}",
        "[ \t\n\r\x0b\x0c]{1,6}",
        "[!-/:-@\\[-`{-~]{1,6}",
        "[\x00-\x1f\x7f]",
        "[é中🙂ß€]{1,3}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// Prose-like text, the commonest answer: words of 1-20 letters (across
/// `letter_run`'s eight-byte loads, past nine letters), mostly joined by single
/// spaces, sometimes by a mark and a space, a tab, a newline, two spaces,
/// digits or a non-ASCII character.
fn prose_text() -> impl Strategy<Value = String> {
    let gap = prop_oneof![
        8 => Just(" ".to_owned()),
        2 => "[,.;:!?)\"'-] ?",
        1 => "[ \t\n]{1,3}",
        1 => "[0-9]{1,5} ?",
        1 => "[é中🙂\x0b\x7f] ?",
    ];
    prop::collection::vec(("[a-zA-Z]{1,20}", gap), 0..24)
        .prop_map(|pieces| pieces.into_iter().map(|(word, gap)| word + &gap).collect())
}

#[test]
fn prose_agrees_with_the_reference_at_every_word_length_and_offset() {
    let gaps = [
        " ", "  ", "\t", "\n", ", ", ". ", ",", "-", "- ", " 1", "1", " é", "é", "\r\n", " \n",
    ];
    for lead in 0..8 {
        for len in 1..=20 {
            for gap in gaps {
                let word: String = (0..len).map(|i| char::from(b"qWeRtYz"[i % 7])).collect();
                for tail in ["", "a", "ab cd", "abcdefghijkl mn", "\"x\""] {
                    let text = format!("{}{word}{gap}{word}{gap}{tail}", "x ".repeat(lead));
                    assert_eq!(count_text(&text), count_text_reference(&text), "{text:?}");
                }
            }
        }
    }
}

#[test]
fn letter_runs_end_at_the_first_other_byte_at_every_offset() {
    for len in 0..24 {
        for end in (0..=255u8).filter(|&b| !b.is_ascii_alphabetic()) {
            let mut bytes: Vec<u8> = (0..len).map(|i| b"aZmQz"[i % 5]).collect();
            bytes.push(end);
            bytes.extend_from_slice(b"letters after");
            assert_eq!(letter_run(&bytes), len, "{len} letters, then {end:#x}");
        }
        let letters: Vec<u8> = (0..len).map(|i| b"AbYz"[i % 4]).collect();
        assert_eq!(letter_run(&letters), len);
    }
}

proptest! {
    #[test]
    fn letter_runs_end_where_the_byte_loop_ends(
        bytes in prop::collection::vec(prop_oneof![
            any::<u8>(), Just(b'a'), Just(b'z'), Just(b'A'), Just(b'Z'), Just(b'@'),
            Just(b'['), Just(b'`'), Just(b'{'), Just(0xc1), Just(0xe1), Just(0xfa),
        ], 0..40)
    ) {
        prop_assert_eq!(letter_run(&bytes), run_of(&bytes, Class::Letter));
    }

    #[test]
    fn table_agrees_with_the_reference(text in mixed_text()) {
        prop_assert_eq!(count_text(&text), count_text_reference(&text));
    }

    #[test]
    fn table_agrees_with_the_reference_on_prose(text in prose_text()) {
        prop_assert_eq!(count_text(&text), count_text_reference(&text));
    }

    #[test]
    fn table_agrees_with_the_reference_on_any_text(text in any::<String>()) {
        prop_assert_eq!(count_text(&text), count_text_reference(&text));
    }
}

#[test]
fn request_estimate_grows_with_content_and_scales_for_claude() {
    let mut req = ChatRequest {
        model: "gpt-4o".into(),
        system: vec![SystemBlock {
            text: "You are terse.".into(),
            cache_control: None,
        }],
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentPart::Text {
                text: "hello world".into(),
                cache_control: None,
            }],
            name: None,
        }],
        ..ChatRequest::default()
    };
    let gpt = estimate_request(&req);
    assert_eq!(
        gpt,
        3 + 4 + count_text("You are terse.") + 4 + count_text("hello world")
    );
    req.model = "claude-sonnet-4.5".into();
    assert!(estimate_request(&req) > gpt);
    req.messages[0]
        .content
        .push(ContentPart::Image(ImageSource::Url("http://x".into())));
    assert!(estimate_request(&req) > IMAGE_TOKENS);
}

#[test]
fn claude_detection_ignores_provider_prefix() {
    assert!(is_claude("messages_vendor/claude-opus-4.5"));
    assert!(is_claude("Claude-3"));
    assert!(!is_claude("gpt-4o"));
    assert!(!is_claude("cl"));
}
