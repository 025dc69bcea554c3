use serde_json::json;

use super::*;

fn message(r: Result<impl std::fmt::Debug, GuardrailError>) -> String {
    let e = r.unwrap_err();
    assert_eq!(e.error_type, "ValidationException");
    e.message
}

#[test]
fn identifiers_and_versions() {
    for id in [
        "ab12cd34",
        "arn:aws:bedrock:us-east-1:123456789012:guardrail/ab12cd34",
        "arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:guardrail/x1",
    ] {
        assert!(check_path(id, "DRAFT").is_ok(), "{id}");
    }
    for id in [
        "",
        "Upper",
        "ab-12",
        "arn:aws:bedrock:us-east-1:12345:guardrail/ab",
        "arn:aws:s3:us-east-1:123456789012:guardrail/ab",
        "arn:aws:bedrock:us-east-1:123456789012:agent/ab",
        "arn:awsx:bedrock:us-east-1:123456789012:guardrail/ab",
        "arn:aws:bedrock:us-east-1:123456789012:guardrail/ab/c",
    ] {
        assert!(
            message(check_path(id, "1")).contains("at 'guardrailIdentifier'"),
            "{id}"
        );
    }
    for v in ["1", "42", "99999999"] {
        assert!(check_path("g", v).is_ok(), "{v}");
    }
    for v in ["0", "01", "100000000", "draft", "", "1.0"] {
        assert!(
            message(check_path("g", v)).contains("at 'guardrailVersion'"),
            "{v}"
        );
    }
}

#[test]
fn a_valid_body() {
    let body = json!({
        "source": "OUTPUT",
        "content": [
            {"text": {"text": "one"}},
            {"text": {"text": "two", "qualifiers": ["guard_content", "query"]}}
        ],
        "outputScope": "FULL",
        "unknownField": 1
    });
    let req = parse_body(Some(&body)).unwrap();
    assert_eq!(req.source, Source::Output);
    assert_eq!(req.texts, ["one", "two"]);
    assert_eq!(source_of(Some(&body)), Some(Source::Output));
    assert_eq!(source_of(Some(&json!({"source": "SIDEWAYS"}))), None);
}

#[test]
fn refusals() {
    let text = |t: &str| json!({"text": {"text": t}});
    let cases = [
        (json!({"content": [text("a")]}), "Value null at 'source'"),
        (
            json!({"source": "BOTH", "content": [text("a")]}),
            "Value 'BOTH' at 'source' failed to satisfy constraint: Member must satisfy enum value set: [INPUT, OUTPUT]",
        ),
        (json!({"source": "INPUT"}), "Value null at 'content'"),
        (json!({"source": "INPUT", "content": []}), "greater than or equal to 1"),
        (
            json!({"source": "INPUT", "content": [text("a"), {"image": {}}]}),
            "Value null at 'content.2.member.text'",
        ),
        (
            json!({"source": "INPUT", "content": [{"text": {"qualifiers": []}}]}),
            "Value null at 'content.1.member.text.text'",
        ),
        (
            json!({"source": "INPUT", "content": [{"text": {"text": "a", "qualifiers": ["nope"]}}]}),
            "Value 'nope' at 'content.1.member.text.qualifiers'",
        ),
        (
            json!({"source": "INPUT", "content": [text("a")], "outputScope": "ALL"}),
            "at 'outputScope'",
        ),
    ];
    for (body, says) in cases {
        let m = message(parse_body(Some(&body)));
        assert!(m.starts_with("1 validation error detected: "), "{m}");
        assert!(m.contains(says), "{body}: {m}");
    }
    let e = parse_body(None).unwrap_err();
    assert_eq!(e.error_type, "SerializationException");
    assert_eq!(
        parse_body(Some(&json!([1]))).unwrap_err().status.as_u16(),
        400
    );
}
