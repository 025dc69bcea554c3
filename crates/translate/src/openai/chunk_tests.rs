use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

fn serde_read(data: &str) -> Result<Payload<'_>, serde_json::Error> {
    serde_json::from_str(data)
}

/// `data` takes the fast path and reads as serde_json reads it.
fn assert_fast(data: &str) {
    let fast = scan(data);
    assert!(fast.is_some(), "not on the fast path: {data}");
    assert_eq!(fast, serde_read(data).ok(), "{data}");
}

const HEAD: &str = r#"{"id":"chatcmpl-7Ruy1FAEsjiAvaz0XDQITH6Xpa2g3","object":"chat.completion.chunk","created":1795846047,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_23987855ad","choices":[{"index":0,"delta":"#;

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        r#"{HEAD}{delta},"logprobs":null,"finish_reason":{finish}}}],"usage":null,"obfuscation":"x8Qp"}}"#
    )
}

#[test]
fn the_chunks_providers_send_take_the_fast_path() {
    for data in [
        chunk(r#"{"role":"assistant","content":"","refusal":null}"#, "null"),
        chunk(r#"{"content":"Hello"}"#, "null"),
        chunk(r#"{"content":"line\none \"quoted\" caf\u00e9 \ud83d\ude00 \\ done"}"#, "null"),
        chunk(r#"{"content":"naïve 😀 raw UTF-8"}"#, "null"),
        chunk(r#"{"reasoning_content":"thinking","content":null}"#, "null"),
        chunk(r#"{"reasoning":"thinking"}"#, "null"),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_DJAHk64Q6vOI7kG34UOFLFCB","type":"function","function":{"name":"get_weather","arguments":""}}]}"#,
            "null",
        ),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Par"}}]}"#, "null"),
        chunk(r#"{"tool_calls":[{"function":{"arguments":"is\"}"}}]}"#, "null"),
        chunk("{}", r#""stop""#),
        chunk("null", r#""tool_calls""#),
        // The logprobs members a client may ask for.
        format!(
            r#"{HEAD}{{"content":"Hi"}},"logprobs":{{"content":[{{"token":"Hi","logprob":-0.0012,"bytes":[72,105],"top_logprobs":[]}}]}},"finish_reason":null}}]}}"#
        ),
        // Other servers' spellings: no id, nulls, spaces and new lines.
        r#"{ "model" : null , "choices" : [ { "index" : null , "delta" : { "content" : "x" } } ] }"#.to_owned(),
        "{\n  \"choices\": null\n}".to_owned(),
        r#"{"choices":[]}"#.to_owned(),
        r#"{"id":"a","choices":[{"index":1,"delta":{"content":"second choice"}}]}"#.to_owned(),
        "{}".to_owned(),
    ] {
        assert_fast(&data);
    }
}

#[test]
fn unescaped_id_and_model_are_borrowed() {
    let data = chunk(r#"{"content":"x"}"#, "null");
    let payload = scan(&data).unwrap_or_default();
    assert!(matches!(payload.id, Some(Cow::Borrowed(_))));
    assert!(matches!(
        payload.model,
        Some(Cow::Borrowed("gpt-4o-2024-08-06"))
    ));
}

#[test]
fn usage_errors_and_the_unusual_go_to_serde() {
    for data in [
        // Read by serde (once a stream).
        r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}"#,
        r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
        // Unusual but valid.
        r#"{"choices":[{"index":0,"delta":{"con\u0074ent":"escaped key"}}]}"#,
        r#"{"choices":[{"index":0.0,"delta":{}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"lone \ud800"}}]}"#,
        // serde's errors, unchanged.
        r#"{"id":"a","id":"b"}"#,
        // Found by the fuzzer: a repeated member is an error even when null.
        r#"{"usage":null,"usage":null}"#,
        r#"{"error":null,"error":null}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}"#,
        r#"{"choices":[{"index":-1}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":5}}]}"#,
        r#"{"choices":{}}"#,
        r#"{"id":"a"} trailing"#,
        r#"{"id":"a",}"#,
        r#"["id","model"]"#,
        "not json",
    ] {
        assert_eq!(scan(data), None, "{data}");
        assert_eq!(read(data).ok(), serde_read(data).ok(), "{data}");
    }
}

/// A chunk built from parts: known members with values of the right type
/// or (less often) not, unknown members with any value. Mostly what a
/// provider sends, so that the fast path is taken often.
fn any_chunk() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        1 => Just(Value::Null),
        3 => any::<String>().prop_map(Value::String),
        // Every character serde_json escapes, and a few it does not.
        6 => "[a-z \\n\"\\\\/\u{8}\u{c}\r\t\u{1}\u{1f}é😀]{0,12}".prop_map(Value::String),
        1 => Just(json!(7)),
    ];
    let some = |p: f64, s: BoxedStrategy<Value>| prop::option::weighted(p, s);
    let text = text.boxed();
    let function = (some(0.7, text.clone()), some(0.7, text.clone()))
        .prop_map(|(name, arguments)| object([("name", name), ("arguments", arguments)]));
    let index = prop_oneof![
        2 => Just(Value::Null),
        16 => (0u64..5).prop_map(Value::from),
        1 => Just(json!(-1)),
        1 => Just(json!(1.5)),
        1 => Just(json!(u64::from(u32::MAX) + 1)),
    ]
    .boxed();
    let call = (
        some(0.7, index.clone()),
        some(0.5, text.clone()),
        some(0.5, text.clone()),
        some(
            0.8,
            prop_oneof![1 => Just(Value::Null), 8 => function].boxed(),
        ),
    )
        .prop_map(|(index, id, kind, function)| {
            object([
                ("index", index),
                ("id", id),
                ("type", kind),
                ("function", function),
            ])
        });
    let delta = (
        some(0.3, text.clone()),
        some(0.6, text.clone()),
        some(0.3, text.clone()),
        some(0.3, text.clone()),
        some(0.3, text.clone()),
        some(
            0.3,
            prop_oneof![
                1 => Just(Value::Null),
                4 => prop::collection::vec(call, 0..3).prop_map(Value::Array),
            ]
            .boxed(),
        ),
    )
        .prop_map(
            |(role, content, reasoning_content, reasoning, refusal, tool_calls)| {
                object([
                    ("role", role),
                    ("content", content),
                    ("reasoning_content", reasoning_content),
                    ("reasoning", reasoning),
                    ("refusal", refusal),
                    ("tool_calls", tool_calls),
                ])
            },
        );
    let choice = (
        some(0.9, index),
        some(0.9, prop_oneof![1 => Just(Value::Null), 8 => delta].boxed()),
        some(0.5, text.clone()),
        some(0.3, crate::json_scan::tests::any_json().boxed()),
    )
        .prop_map(|(index, delta, finish, logprobs)| {
            object([
                ("index", index),
                ("delta", delta),
                ("finish_reason", finish),
                ("logprobs", logprobs),
            ])
        });
    (
        some(0.8, text.clone()),
        some(0.8, text),
        some(
            0.9,
            prop_oneof![
                1 => Just(Value::Null),
                8 => prop::collection::vec(choice, 0..3).prop_map(Value::Array),
            ]
            .boxed(),
        ),
        some(0.3, Just(Value::Null).boxed()),
        some(0.3, crate::json_scan::tests::any_json().boxed()),
    )
        .prop_map(|(id, model, choices, usage, other)| {
            object([
                ("id", id),
                ("model", model),
                ("choices", choices),
                ("usage", usage),
                ("system_fingerprint", other),
            ])
        })
}

/// An object of the members that are present.
fn object<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect(),
    )
}

/// A byte-level edit of a text (which may break it).
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, char),
    Delete(usize),
    Replace(usize, char),
}

fn apply(text: &str, edit: &Edit) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let at = |i: usize| if chars.is_empty() { 0 } else { i % chars.len() };
    match *edit {
        Edit::Insert(i, c) => {
            let i = if chars.is_empty() {
                0
            } else {
                i % (chars.len() + 1)
            };
            chars.insert(i, c);
        }
        Edit::Delete(i) if !chars.is_empty() => {
            let i = at(i);
            chars.remove(i);
        }
        Edit::Replace(i, c) if !chars.is_empty() => {
            let i = at(i);
            chars[i] = c;
        }
        _ => {}
    }
    chars.into_iter().collect()
}

fn any_edit() -> impl Strategy<Value = Edit> {
    let c = prop::sample::select(vec![
        '"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', '.', 'e', 'n', 'u', 'l', ' ', '\n',
        '\t', 'x', '\u{1}',
    ]);
    prop_oneof![
        (any::<usize>(), c.clone()).prop_map(|(i, c)| Edit::Insert(i, c)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), c).prop_map(|(i, c)| Edit::Replace(i, c)),
    ]
}

proptest! {
    /// Where the fast path answers, it answers what serde_json does; where
    /// serde_json reads a plain chunk, the fast path reads it too.
    #[test]
    fn agrees_with_serde_on_any_chunk(value in any_chunk(), pretty in any::<bool>()) {
        let data = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        }
        .unwrap_or_default();
        let fast = scan(&data);
        let slow = serde_read(&data);
        match (&fast, &slow) {
            (Some(fast), slow) => prop_assert_eq!(Some(fast), slow.as_ref().ok(), "{}", data),
            // The generator writes `usage` only as null, keys plainly.
            (None, Ok(_)) => prop_assert!(false, "a plain chunk left the fast path: {}", data),
            (None, Err(_)) => {}
        }
        prop_assert_eq!(read(&data).ok(), slow.ok(), "{}", data);
    }

    /// Broken or bent chunks: the fast path never accepts what serde_json
    /// refuses, nor reads it differently.
    #[test]
    fn an_edited_chunk_reads_as_serde_reads_it(
        value in any_chunk(),
        edits in prop::collection::vec(any_edit(), 1..3),
    ) {
        let mut data = serde_json::to_string(&value).unwrap_or_default();
        for edit in &edits {
            data = apply(&data, edit);
        }
        if let Some(fast) = scan(&data) {
            prop_assert_eq!(Some(fast), serde_read(&data).ok(), "{}", data);
        }
    }
}
