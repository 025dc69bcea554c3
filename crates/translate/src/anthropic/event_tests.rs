use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;

fn serde_read(data: &str) -> Option<w::StreamEvent> {
    serde_json::from_str(data).ok()
}

#[test]
fn the_events_of_an_answer_take_the_fast_path() {
    for data in [
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"line\none \"q\" caf\u00e9 \ud83d\ude00"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}"#,
        r#"{"type":"content_block_stop","index":3}"#,
        // Members in another order, spaces, and members the gateway ignores.
        r#"{ "index" : 2 , "delta" : { "text" : "x" , "type" : "text_delta" } , "type" : "content_block_delta" }"#,
        r#"{"type":"content_block_stop","index":0,"extra":{"a":[1,2.5e3,null]}}"#,
        " {\"type\":\"content_block_stop\",\"index\":0}\n",
        r#"{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":12,"output_tokens":1,"service_tier":"standard"}}}"#,
        r#"{"type":"message_start","message":{"id":null,"usage":null}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"}}"#,
        // The type after the members that depend on it.
        r#"{"delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":null,"output_tokens":7},"type":"message_delta"}"#,
        r#"{"message":{"model":"m"},"type":"message_start"}"#,
        r#"{"delta":{"text":"late","type":"text_delta"},"index":0,"type":"content_block_delta"}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","signature":null,"extra":1}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":null}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"name":"f","id":"t","type":"tool_use"}}"#,
        r#"{"content_block":{"type":"text","text":"before the type"},"index":0,"type":"content_block_start"}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"ping","extra":[1,{"a":null}]}"#,
    ] {
        let fast = scan(data);
        assert!(fast.is_some(), "not on the fast path: {data}");
        assert_eq!(fast, serde_read(data), "{data}");
    }
}

#[test]
fn other_events_and_the_unusual_go_to_serde() {
    for data in [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"image","source":{}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwK"}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"city":"Paris"}}}"#,
        // Repeated members: the block's own reader takes the last, this
        // one gives up.
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"a","text":"b"}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text"}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f"}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":null}"#,
        r#"{"type":"content_block_start","content_block":{"type":"text","text":""}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
        r#"{"type":"some_future_event","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":null}"#,
        r#"{"type":"message_delta","usage":{"output_tokens":5}}"#,
        r#"{"type":"message_delta","delta":null}"#,
        r#"{"type":"message_start"}"#,
        r#"{"type":"message_start","message":null}"#,
        r#"{"type":"message_start","message":{"usage":{"input_tokens":-3}}}"#,
        r#"{"type":"message_start","message":{"id":"a","id":"b"}}"#,
        // serde's errors, unchanged.
        r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"no index"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}"#,
        r#"{"type":"content_block_stop","index":0,"index":1}"#,
        r#"{"type":"content_block_stop","type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_stop","index":-1}"#,
        r#"{"type":"content_block_stop","index":0} trailing"#,
        // Found by the fuzzer: a member serde ignores still has its number
        // read (the tagged enum buffers it), and this one is out of range.
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"x","creaed":-17389555555555555.11E11111111118}}"#,
        r#"{"type":"content_block_stop","in":"\uddfc","index":2}"#,
        "not json",
    ] {
        assert_eq!(scan(data), None, "{data}");
        assert_eq!(read(data).ok(), serde_read(data), "{data}");
    }
}

/// An event built from parts: the members of the fast path's events with
/// values of the right type or not, unknown members, in any order.
fn any_event() -> impl Strategy<Value = Value> {
    // Mostly what a provider sends, so that the fast path is taken often;
    // sometimes a wrong type or a missing member.
    let text = prop_oneof![
        1 => Just(Value::Null),
        3 => any::<String>().prop_map(Value::String),
        6 => "[a-z \\n\"\\\\/\u{8}\u{c}\r\t\u{1}é😀]{0,12}".prop_map(Value::String),
        1 => Just(json!(7)),
    ];
    let kind = |names: &'static [&'static str]| {
        prop_oneof![
            10 => prop::sample::select(names).prop_map(|n| json!(n)),
            1 => Just(json!(null)),
            1 => Just(json!(1)),
        ]
    };
    let index = prop_oneof![
        10 => (0u64..5).prop_map(Value::from),
        1 => Just(json!(-1)),
        1 => Just(json!(1.5)),
        1 => Just(json!(null)),
    ];
    let mostly = |p: f64| prop::option::weighted(p, Just(())).prop_map(|o| o.is_some());
    let delta = (
        prop::option::weighted(
            0.95,
            kind(&[
                "text_delta",
                "input_json_delta",
                "thinking_delta",
                "signature_delta",
            ]),
        ),
        text.clone(),
        mostly(0.3),
        prop::option::weighted(0.2, crate::json_scan::tests::any_json()),
    )
        .prop_map(|(kind, value, other_too, other)| {
            // The member the type asks for, and sometimes another one.
            let member = match kind.as_ref().and_then(Value::as_str) {
                Some("input_json_delta") => "partial_json",
                Some("thinking_delta") => "thinking",
                Some("signature_delta") => "signature",
                _ => "text",
            };
            let second = if other_too { Some(json!("x")) } else { None };
            object(vec![
                ("type", kind),
                (member, Some(value)),
                (if member == "text" { "thinking" } else { "text" }, second),
                ("citation", other),
            ])
        })
        .boxed();

    let count = prop_oneof![
        8 => (0u64..100_000).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => Just(json!(-1)),
        1 => Just(json!(2.0)),
        1 => Just(json!(u64::from(u32::MAX) + 1)),
    ];
    let usage = (
        prop::option::weighted(0.7, count.clone()),
        prop::option::weighted(0.5, count.clone()),
        prop::option::weighted(0.5, count.clone()),
        prop::option::weighted(0.7, count),
        mostly(0.2),
    )
        .prop_map(|(input, creation, read, output, tier)| {
            object(vec![
                ("input_tokens", input),
                ("cache_creation_input_tokens", creation),
                ("cache_read_input_tokens", read),
                ("output_tokens", output),
                ("service_tier", tier.then(|| json!("standard"))),
            ])
        })
        .boxed();
    let usage = prop_oneof![8 => usage, 1 => Just(Value::Null)].boxed();
    let stop = (
        prop::option::weighted(0.8, text.clone()),
        prop::option::weighted(0.6, text.clone()),
    )
        .prop_map(|(reason, sequence)| {
            object(vec![("stop_reason", reason), ("stop_sequence", sequence)])
        })
        .boxed();

    let message = (
        prop::option::weighted(0.8, text.clone()),
        prop::option::weighted(0.8, text.clone()),
        prop::option::weighted(0.8, usage.clone()),
    )
        .prop_map(|(id, model, usage)| {
            object(vec![
                ("id", id),
                ("type", Some(json!("message"))),
                ("model", model),
                ("content", Some(json!([]))),
                ("usage", usage),
            ])
        });
    // The members of each type of event, sometimes with another type's.
    let block_event = (
        kind(&["content_block_delta", "content_block_stop"]),
        prop::option::weighted(0.95, index.clone()),
        prop::option::weighted(0.9, prop_oneof![1 => Just(Value::Null), 10 => delta]),
    )
        .prop_map(|(kind, index, delta)| {
            vec![("type", Some(kind)), ("index", index), ("delta", delta)]
        })
        .boxed();

    let message_delta = (
        kind(&["message_delta"]),
        prop::option::weighted(0.9, prop_oneof![1 => Just(Value::Null), 10 => stop]),
        prop::option::weighted(0.7, usage),
        prop::option::weighted(0.1, index.clone()),
    )
        .prop_map(|(kind, delta, usage, index)| {
            vec![
                ("type", Some(kind)),
                ("delta", delta),
                ("usage", usage),
                ("index", index),
            ]
        })
        .boxed();

    let message_start = (
        kind(&["message_start"]),
        prop::option::weighted(0.9, prop_oneof![1 => Just(Value::Null), 10 => message]),
        prop::option::weighted(0.1, index.clone()),
    )
        .prop_map(|(kind, message, index)| {
            vec![("type", Some(kind)), ("message", message), ("index", index)]
        })
        .boxed();

    // Mostly strings here: one member of a wrong type spoils the block.
    let string = prop_oneof![
        12 => "[a-z \\n\"é]{0,8}".prop_map(Value::String),
        1 => Just(Value::Null),
        1 => Just(json!(7)),
    ]
    .boxed();
    let block = (
        kind(&["text", "thinking", "tool_use", "image"]),
        prop::option::weighted(0.6, string.clone()),
        prop::option::weighted(0.5, string.clone()),
        prop::option::weighted(0.3, string.clone()),
        prop::option::weighted(0.5, string.clone()),
        prop::option::weighted(0.5, string),
        prop::option::weighted(
            0.5,
            prop_oneof![
                6 => Just(json!({})),
                2 => Just(Value::Null),
                1 => Just(json!({"city": "Paris"})),
            ],
        ),
    )
        .prop_map(|(kind, text, thinking, signature, id, name, input)| {
            object(vec![
                ("type", Some(kind)),
                ("text", text),
                ("thinking", thinking),
                ("signature", signature),
                ("id", id),
                ("name", name),
                ("input", input),
            ])
        })
        .boxed();
    let block_start = (
        kind(&["content_block_start"]),
        prop::option::weighted(0.95, index.clone()),
        prop::option::weighted(0.95, prop_oneof![1 => Just(Value::Null), 10 => block]),
    )
        .prop_map(|(kind, index, block)| {
            vec![
                ("type", Some(kind)),
                ("index", index),
                ("content_block", block),
            ]
        })
        .boxed();
    let unit = (
        kind(&["message_stop", "ping"]),
        prop::option::weighted(0.1, index),
    )
        .prop_map(|(kind, index)| vec![("type", Some(kind)), ("index", index)]);
    (
        prop_oneof![
            4 => block_event,
            2 => block_start,
            2 => message_delta,
            2 => message_start,
            1 => unit,
        ],
        mostly(0.95),
        prop::option::weighted(0.2, crate::json_scan::tests::any_json()),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut members, typed, other, order)| {
            if !typed {
                members.retain(|(name, _)| *name != "type");
            }
            members.push(("other", other));
            // The tag need not come first.
            let at = order.index(members.len());
            members.rotate_left(at);
            object(members)
        })
}

/// An object of the members that are present, in the order given.
fn object(members: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Where the fast path answers, it answers what serde_json does.
    #[test]
    fn agrees_with_serde_on_any_event(value in any_event(), pretty in any::<bool>()) {
        let data = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        }
        .unwrap_or_default();
        if let Some(fast) = scan(&data) {
            prop_assert_eq!(Some(fast), serde_read(&data), "{}", data);
        }
        prop_assert_eq!(read(&data).ok(), serde_read(&data), "{}", data);
    }

    /// Broken or bent events: the fast path never accepts what serde_json
    /// refuses, nor reads it differently.
    #[test]
    fn an_edited_event_reads_as_serde_reads_it(
        value in any_event(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(vec![
            '"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', '.', 'e', 'n', ' ', 'x', '\u{1}',
        ]),
        delete in any::<bool>(),
    ) {
        let mut chars: Vec<char> = serde_json::to_string(&value).unwrap_or_default().chars().collect();
        let i = at.index(chars.len() + 1);
        if delete && i < chars.len() {
            chars.remove(i);
        } else {
            chars.insert(i, byte);
        }
        let data: String = chars.into_iter().collect();
        if let Some(fast) = scan(&data) {
            prop_assert_eq!(Some(fast), serde_read(&data), "{}", data);
        }
    }
}
