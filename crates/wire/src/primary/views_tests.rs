use super::*;
use crate::primary::TokenUsage;
use proptest::prelude::*;
use serde_json::json;

fn view(name: &str, payload: &str) -> EventView<'static> {
    let payload: &'static str = Box::leak(payload.to_owned().into_boxed_str());
    EventView::parse(name, payload.as_bytes()).unwrap()
}

fn content(payload: &str) -> Cow<'static, str> {
    match view("assistantResponseEvent", payload) {
        EventView::AssistantResponse(e) => e.content,
        other => panic!("not a text delta: {other:?}"),
    }
}

/// How the owned types read a payload on their own (the former parser).
fn owned(name: &str, payload: &[u8]) -> Result<Event, serde_json::Error> {
    use self::event_type as t;
    use serde_json::from_slice as f;
    Ok(match name {
        t::ASSISTANT_RESPONSE => Event::AssistantResponse(f(payload)?),
        t::TOOL_USE => Event::ToolUse(f(payload)?),
        t::REASONING_CONTENT => Event::ReasoningContent(f(payload)?),
        t::METERING => Event::Metering(f(payload)?),
        t::CONTEXT_USAGE => Event::ContextUsage(f(payload)?),
        t::METADATA => Event::Metadata(f(payload)?),
        t::MESSAGE_METADATA => Event::MessageMetadata(f(payload)?),
        t::INVALID_STATE => Event::InvalidState(f(payload)?),
        _ => Event::Other,
    })
}

#[test]
fn plain_strings_borrow_and_escaped_ones_decode() {
    assert!(matches!(
        content(r#"{"content":"Hello ü → 🙂"}"#),
        Cow::Borrowed("Hello ü → 🙂")
    ));
    let decoded = content(r#"{"content":"a\"b\\c\nd\t\u00e9\ud83d\ude42 \/"}"#);
    assert!(matches!(decoded, Cow::Owned(_)));
    assert_eq!(decoded, "a\"b\\c\nd\té🙂 /");
}

#[test]
fn the_plain_shape_is_sliced_and_anything_else_is_read() {
    let plain = "{\"content\":\"Hi é 🙂 }{ ' \u{7f}\"}".as_bytes();
    let EventView::AssistantResponse(e) =
        EventView::parse("assistantResponseEvent", plain).unwrap()
    else {
        panic!("not a text delta")
    };
    assert!(matches!(e.content, Cow::Borrowed(_)));
    for payload in [
        &br#"{"content":"a\u0001"}"#[..],
        b"{\"content\":\"a\x01\"}",
        b"{\"content\":\"\xff\"}",
        br#"{"content":"a" }"#,
        br#"{"content":"}"#,
        br#"{"content":"a","content":"b"}"#,
        br#"{"content":"a"}}"#,
    ] {
        let new = EventView::parse("assistantResponseEvent", payload).map(EventView::into_owned);
        let old = owned("assistantResponseEvent", payload);
        assert_eq!(
            format!("{new:?}"),
            format!("{old:?}"),
            "{}",
            String::from_utf8_lossy(payload)
        );
    }
}

#[test]
fn one_letter_escapes_are_decoded_without_the_reader() {
    let decoded = content(r#"{"content":"a\nb\t\"q\" \\ \/ \b\f\r é"}"#);
    assert_eq!(decoded, "a\nb\t\"q\" \\ / \u{8}\u{c}\r é");
    assert_eq!(content(r#"{"content":"\n"}"#), "\n");
    assert_eq!(content(r#"{"content":"\\\\"}"#), "\\\\");
    // Long enough to cross the scan's 16-byte blocks, escapes on both sides.
    let long = format!(
        r#"{{"content":"{}\n{}\"x"}}"#,
        "a".repeat(15),
        "b".repeat(17)
    );
    assert_eq!(
        content(&long),
        format!("{}\n{}\"x", "a".repeat(15), "b".repeat(17))
    );
    // What only the reader decodes or refuses gives its value or its error.
    assert_eq!(content(r#"{"content":"\u00e9\n"}"#), "é\n");
    for bad in [
        &br#"{"content":"\x"}"#[..],
        br#"{"content":"a\"}"#,
        br#"{"content":"a\n""}"#,
        b"{\"content\":\"\\n\t\"}",
        b"{\"content\":\"\\n\xc3\"}",
    ] {
        let new = EventView::parse("assistantResponseEvent", bad).unwrap_err();
        let old = owned("assistantResponseEvent", bad).unwrap_err();
        assert_eq!(new.to_string(), old.to_string());
    }
}

#[test]
fn empty_and_missing_content_is_empty() {
    assert_eq!(content(r#"{"content":""}"#), "");
    assert_eq!(content("{}"), "");
    assert_eq!(content(r#" { "modelId" : "m" } "#), "");
    // `null` is not a string, for the owned type as well.
    assert!(EventView::parse("assistantResponseEvent", br#"{"content":null}"#).is_err());
    assert!(owned("assistantResponseEvent", br#"{"content":null}"#).is_err());
}

#[test]
fn unknown_fields_are_skipped_whatever_they_hold() {
    let e = view(
        "assistantResponseEvent",
        r#"{"citations":[{"url":"x\"y","n":[1,2.5e3,null,true]}],"content":"ok","modelId":"m\u0031","extra":{"a":{"b":"\\"}}}"#,
    );
    assert_eq!(
        e,
        EventView::AssistantResponse(AssistantResponseView {
            content: Cow::Borrowed("ok"),
            model_id: Some(Cow::Owned("m1".into())),
        })
    );
    let t = view(
        "toolUseEvent",
        r#"{"toolUseId":"t1","brandNew":{"input":"no"},"name":"f","input":"{\"a\":1}","stop":false}"#,
    );
    let EventView::ToolUse(t) = t else {
        panic!("not a tool fragment")
    };
    assert_eq!(t.tool_use_id, "t1");
    assert_eq!(
        t.input,
        Some(ToolInput::Text(Cow::Owned("{\"a\":1}".into())))
    );
    assert_eq!(t.stop, Some(false));
}

#[test]
fn tool_input_of_every_json_kind() {
    let input = |raw: &str| -> Option<ToolInput<'static>> {
        match view(
            "toolUseEvent",
            &format!(r#"{{"toolUseId":"t","input":{raw}}}"#),
        ) {
            EventView::ToolUse(e) => e.input,
            other => panic!("not a tool fragment: {other:?}"),
        }
    };
    assert_eq!(input("null"), None);
    assert_eq!(input(r#""""#), Some(ToolInput::Text(Cow::Borrowed(""))));
    assert!(matches!(input(r#""{ \"p""#), Some(ToolInput::Text(Cow::Owned(s))) if s == "{ \"p"));
    for raw in [
        r#"{"path":"a","n":[1,-2,3.5,1e300,18446744073709551615,true,null]}"#,
        "[]",
        "-7",
        "12345678901234567890123",
        "0.1",
        "false",
    ] {
        let want: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(input(raw), Some(ToolInput::Json(want)), "{raw}");
    }
    // Key order is kept (the arguments are re-serialized from the value).
    let Some(ToolInput::Json(v)) = input(r#"{"z":1,"a":2}"#) else {
        panic!("not JSON")
    };
    assert_eq!(v.to_string(), r#"{"z":1,"a":2}"#);
}

#[test]
fn reasoning_borrows_its_optional_strings() {
    let r = view(
        "reasoningContentEvent",
        r#"{"text":"hmm","signature":"s\u0069g","redactedContent":null}"#,
    );
    let EventView::ReasoningContent(r) = r else {
        panic!("not reasoning")
    };
    assert!(matches!(r.text, Some(Cow::Borrowed("hmm"))));
    assert!(matches!(&r.signature, Some(Cow::Owned(s)) if s == "sig"));
    assert_eq!(r.redacted_content, None);
}

#[test]
fn rare_events_and_unknown_types() {
    assert_eq!(
        view("metadataEvent", r#"{"tokenUsage":{"outputTokens":3}}"#).into_owned(),
        Event::Metadata(MetadataEvent {
            token_usage: Some(TokenUsage {
                output_tokens: Some(3),
                ..TokenUsage::default()
            }),
            ..MetadataEvent::default()
        })
    );
    assert_eq!(view("followupPromptEvent", "not json"), EventView::Other);
}

#[test]
fn errors_read_as_before() {
    // The messages name the owned types and end up in the client's error event.
    for (name, payload) in [
        ("assistantResponseEvent", &b"{\"content\":\"a\xff\"}"[..]),
        ("assistantResponseEvent", b"0"),
        ("toolUseEvent", br#""x""#),
        ("toolUseEvent", br#"{"input":"#),
        ("reasoningContentEvent", br#"{"text":1}"#),
    ] {
        let new = EventView::parse(name, payload).unwrap_err();
        let old = owned(name, payload).unwrap_err();
        assert_eq!(new.to_string(), old.to_string());
    }
    let e = EventView::parse("assistantResponseEvent", b"0").unwrap_err();
    assert!(e.to_string().contains("AssistantResponseEvent"), "{e}");
}

/// JSON strings with every kind of escape and a few raw characters.
fn json_string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("a".to_owned()),
            Just(" ".to_owned()),
            Just("é→🙂".to_owned()),
            Just(r#"\""#.to_owned()),
            Just(r"\\".to_owned()),
            Just(r"\n".to_owned()),
            Just(r"\/".to_owned()),
            Just(r"\u00e9".to_owned()),
            Just(r"\ud83d\ude42".to_owned()),
            Just(r"\ud83d".to_owned()),
            Just("\t".to_owned()),
            Just(r"\x".to_owned()),
        ],
        0..6,
    )
    .prop_map(|parts| format!("\"{}\"", parts.concat()))
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        json_string(),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("-12".to_owned()),
        Just("3.25e2".to_owned()),
        Just("99999999999999999999".to_owned()),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((json_string(), inner), 0..3).prop_map(|v| {
                let members: Vec<String> = v.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"content\"".to_owned()),
        Just("\"modelId\"".to_owned()),
        Just("\"toolUseId\"".to_owned()),
        Just("\"name\"".to_owned()),
        Just("\"input\"".to_owned()),
        Just("\"stop\"".to_owned()),
        Just("\"text\"".to_owned()),
        Just("\"signature\"".to_owned()),
        Just("\"redactedContent\"".to_owned()),
        Just("\"unit\"".to_owned()),
        Just("\"usage\"".to_owned()),
        Just("\"tokenUsage\"".to_owned()),
        Just("\"reason\"".to_owned()),
        Just("\"brandNew\"".to_owned()),
        Just("\"c\\u006fntent\"".to_owned()),
    ]
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec((key(), json_value()), 0..4).prop_map(|members| {
            let members: Vec<String> = members.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", members.join(",")).into_bytes()
        }),
        1 => prop::collection::vec(any::<u8>(), 0..24),
        // The shape read without the JSON reader: escapes of every kind...
        4 => json_string().prop_map(|s| format!("{{\"content\":{s}}}").into_bytes()),
        // ...and any bytes between the quotes.
        4 => prop::collection::vec(
            prop_oneof![
                Just(b'a'), Just(b' '), Just(b'"'), Just(b'\\'), Just(b'\\'), Just(b'\n'),
                Just(0x1f), Just(0x7f), Just(0xc3), Just(0xa9), Just(0xff), Just(b'}'),
                Just(b'u'), Just(b'n'), Just(b't'), Just(b'/'), Just(b'b'), Just(b'0'),
            ],
            0..40,
        )
        .prop_map(|mid| [&br#"{"content":""#[..], &mid, br#""}"#].concat()),
        1 => "[{}\":a-z0-9 ,\\\\]{0,24}".prop_map(String::into_bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn views_read_exactly_what_the_owned_types_read(
        name in prop_oneof![
            Just(event_type::ASSISTANT_RESPONSE),
            Just(event_type::TOOL_USE),
            Just(event_type::REASONING_CONTENT),
            Just(event_type::METERING),
            Just(event_type::METADATA),
            Just(event_type::INVALID_STATE),
        ],
        payload in payload(),
    ) {
        let new = EventView::parse(name, &payload).map(EventView::into_owned);
        match (new, owned(name, &payload)) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "view {:?} vs owned {:?}", a, b),
        }
    }
}

#[test]
fn tool_input_object_equals_the_value_route() {
    let raw = br#"{"input":{"k":[1,{"x":"\u00e9"}]},"toolUseId":"t"}"#;
    let new = EventView::parse("toolUseEvent", raw).unwrap().into_owned();
    assert_eq!(new, owned("toolUseEvent", raw).unwrap());
    let Event::ToolUse(e) = new else {
        panic!("not a tool fragment")
    };
    assert_eq!(e.input, Some(json!({"k": [1, {"x": "é"}]})));
}
