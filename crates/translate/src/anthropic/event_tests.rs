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
    ] {
        let fast = scan(data);
        assert!(fast.is_some(), "not on the fast path: {data}");
        assert_eq!(fast, serde_read(data), "{data}");
    }
}

#[test]
fn other_events_and_the_unusual_go_to_serde() {
    for data in [
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":3}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
        r#"{"type":"some_future_event","index":0}"#,
        // serde's errors, unchanged.
        r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"no index"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}"#,
        r#"{"type":"content_block_stop","index":0,"index":1}"#,
        r#"{"type":"content_block_stop","type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_stop","index":-1}"#,
        r#"{"type":"content_block_stop","index":0} trailing"#,
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
        });
    (
        prop::option::weighted(
            0.95,
            kind(&["content_block_delta", "content_block_stop", "ping"]),
        ),
        prop::option::weighted(0.95, index),
        prop::option::weighted(0.9, prop_oneof![1 => Just(Value::Null), 10 => delta]),
        prop::option::weighted(0.2, crate::json_scan::tests::any_json()),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(kind, index, delta, other, order)| {
            let mut members = vec![
                ("type", kind),
                ("index", index),
                ("delta", delta),
                ("other", other),
            ];
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
