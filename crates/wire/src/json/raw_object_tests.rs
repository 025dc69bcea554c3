use proptest::prelude::*;
use serde_json::Value;

use super::*;

#[test]
fn only_the_rewritten_member_changes() {
    let body = br#"{"model":"custom/llama3","messages":[{"role":"user","content":"hi \u00e9"}],"temperature":1.0e0,"x_vendor":{"a":[1,2.50]},"stream":true}"#;
    let mut obj = RawObject::parse(body).unwrap();
    obj.set("model", &"llama3").unwrap();
    let out = obj.to_bytes();
    assert_eq!(
        std::str::from_utf8(&out).unwrap(),
        r#"{"model":"llama3","messages":[{"role":"user","content":"hi \u00e9"}],"temperature":1.0e0,"x_vendor":{"a":[1,2.50]},"stream":true}"#
    );
}

#[test]
fn usage_is_forced_and_other_options_kept() {
    let mut obj =
        RawObject::parse(br#"{"model":"m","stream_options":{"include_usage":false,"x":1}}"#)
            .unwrap();
    obj.force_include_usage().unwrap();
    assert_eq!(
        &obj.to_bytes()[..],
        br#"{"model":"m","stream_options":{"include_usage":true,"x":1}}"#
    );
    let mut obj = RawObject::parse(br#"{"model":"m"}"#).unwrap();
    obj.force_include_usage().unwrap();
    assert_eq!(
        &obj.to_bytes()[..],
        br#"{"model":"m","stream_options":{"include_usage":true}}"#
    );
    obj.remove("model");
    assert_eq!(
        &obj.to_bytes()[..],
        br#"{"stream_options":{"include_usage":true}}"#
    );
    // Already set: left exactly as written.
    let body = br#"{"stream_options":{ "include_usage" : true }}"#;
    let mut obj = RawObject::parse(body).unwrap();
    obj.force_include_usage().unwrap();
    assert_eq!(
        &obj.to_bytes()[..],
        br#"{"stream_options":{ "include_usage" : true }}"#
    );
    // Not an object: replaced.
    let mut obj = RawObject::parse(br#"{"stream_options":null}"#).unwrap();
    obj.force_include_usage().unwrap();
    assert_eq!(
        &obj.to_bytes()[..],
        br#"{"stream_options":{"include_usage":true}}"#
    );
}

#[test]
fn keys_with_escapes_are_written_back_as_valid_json() {
    let obj = RawObject::parse(br#"{"a\"b":1,"\u00e9":2}"#).unwrap();
    let back: Value = serde_json::from_slice(&obj.to_bytes()).unwrap();
    assert_eq!(back["a\"b"], 1);
    assert_eq!(back["é"], 2);
    assert!(RawObject::parse(b"[1]").is_err());
    assert!(RawObject::parse(b"{\"a\":1").is_err());
}

#[test]
fn values_and_plain_keys_are_borrowed_from_the_body() {
    let body = br#"{"model":"m","n":12}"#;
    let obj = RawObject::parse(body).unwrap();
    let range = body.as_ptr_range();
    let n = obj.get("n").unwrap().get();
    assert!(range.contains(&n.as_ptr()));
    assert!(obj
        .members
        .iter()
        .all(|(k, v)| matches!((k, v), (Cow::Borrowed(_), Cow::Borrowed(_)))));
}

#[test]
fn repeated_keys_are_kept_and_the_first_is_the_one_read_and_set() {
    let mut obj = RawObject::parse(br#"{"a":1,"b":2,"a":3}"#).unwrap();
    assert_eq!(obj.get("a").unwrap().get(), "1");
    obj.set("a", &9).unwrap();
    assert_eq!(&obj.to_bytes()[..], br#"{"a":9,"b":2,"a":3}"#);
    obj.remove("a");
    assert_eq!(&obj.to_bytes()[..], br#"{"b":2}"#);
}

/// A JSON value written with spacing, number spellings and escapes that a
/// `Value` round trip would change.
fn odd_json() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("1.0e0".to_owned()),
        Just("-0".to_owned()),
        Just("2.50".to_owned()),
        Just("\"\\u00e9\\/\"".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        "[a-z ]{0,6}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| format!("[ {} ]", v.join(" , "))),
            proptest::collection::vec(("[a-z]{1,4}", inner), 0..4).prop_map(|v| {
                let members: Vec<String> = v.iter().map(|(k, x)| format!("\"{k}\" :{x}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

proptest! {
    /// Parsed and written back, a compact object's members are its input
    /// text; after `set`, only that member differs from a `Value` view.
    #[test]
    fn members_are_written_back_as_they_came(
        members in proptest::collection::vec(("[a-z\"é]{1,5}", odd_json()), 0..6),
        model in "\\PC{0,12}",
    ) {
        let body = format!(
            "{{{}}}",
            members
                .iter()
                .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut obj = RawObject::parse(body.as_bytes()).unwrap();
        prop_assert_eq!(&obj.to_bytes()[..], body.as_bytes());
        obj.set("model", &model).unwrap();
        let before: serde_json::Map<String, Value> = serde_json::from_str(&body).unwrap();
        let after: serde_json::Map<String, Value> = serde_json::from_slice(&obj.to_bytes()).unwrap();
        prop_assert_eq!(after.get("model"), Some(&Value::String(model)));
        for (k, v) in before.iter().filter(|(k, _)| *k != "model") {
            prop_assert_eq!(after.get(k), Some(v));
        }
    }
}
