use super::*;

fn parse(s: &str) -> GuardrailScenario {
    s.parse().unwrap()
}

fn parse_err(s: &str) -> String {
    s.parse::<GuardrailScenario>().unwrap_err().0
}

#[test]
fn names_and_defaults() {
    assert_eq!(parse(""), GuardrailScenario::new(GuardrailKind::None));
    assert_eq!(parse("none"), parse("scenario=none"));
    assert_eq!(
        parse("content").kind,
        GuardrailKind::Content {
            filter: None,
            confidence: None
        }
    );
    assert_eq!(
        parse("pii type=EMAIL match=jane@example.com").kind,
        GuardrailKind::Pii {
            entity: Some("EMAIL".into()),
            matched: Some("jane@example.com".into()),
            action: None
        }
    );
    assert_eq!(
        parse("status").kind,
        GuardrailKind::Status {
            code: 500,
            error_type: None
        }
    );
    assert_eq!(
        parse("word match=badword managed=true").kind,
        GuardrailKind::Word {
            matched: Some("badword".into()),
            managed: true
        }
    );
}

#[test]
fn source_and_the_name_after_keys() {
    let s = parse("source=OUTPUT pii match=jane@example.com");
    assert_eq!(s.source, Some(Source::Output));
    assert!(matches!(s.kind, GuardrailKind::Pii { .. }));
    assert!(s.applies_to(Source::Output));
    assert!(!s.applies_to(Source::Input));
    let both = parse("topic");
    assert!(both.applies_to(Source::Input) && both.applies_to(Source::Output));
    assert_eq!(parse("source=INPUT").kind, GuardrailKind::None);
    assert_eq!(name_first("a=1 b c=2"), "b a=1 c=2");
    assert_eq!(name_first("b a=1"), "b a=1");
}

#[test]
fn timing_and_counting() {
    let s = parse("none header_delay=2s delay=150 times=1 key=k");
    assert_eq!(s.header_delay, Duration::from_secs(2));
    assert_eq!(s.first_delay, Duration::from_millis(150));
    assert_eq!((s.times, s.counter_key().as_str()), (Some(1), "k"));
    assert_eq!(
        parse("content type=VIOLENCE").counter_key(),
        "content type=VIOLENCE"
    );
}

#[test]
fn errors_name_the_problem() {
    assert!(parse_err("bogus").contains("unknown guardrail scenario"));
    assert!(parse_err("content type=RUDE").contains("one of HATE"));
    assert!(parse_err("content confidence=SURE").contains("one of NONE"));
    assert!(parse_err("pii action=REDACT").contains("ANONYMIZED, BLOCKED"));
    assert!(parse_err("pii type=e-mail").contains("[A-Z_]+"));
    assert!(parse_err("word").contains("word needs match="));
    assert!(parse_err("regex name=ssn").contains("regex needs match="));
    assert!(parse_err("topic match=x").contains("unknown key 'match'"));
    assert!(parse_err("none source=BOTH").contains("INPUT or OUTPUT"));
    assert!(parse_err("status code=200").contains("400..599"));
    assert!(parse_err("pii regex").contains("key=value"));
}

#[test]
fn display_round_trips() {
    for text in [
        "none",
        "content type=INSULTS confidence=MEDIUM",
        "topic name=politics",
        "word match=badword managed=true",
        "pii type=PHONE match=555-0100 action=BLOCKED",
        "regex name=ssn match=123-45-6789 action=ANONYMIZED",
        "status code=429 error_type=ThrottlingException",
        "none header_delay=5ms delay=10ms source=OUTPUT times=1 key=k",
    ] {
        let s = parse(text);
        assert_eq!(s.to_string(), text);
        assert_eq!(parse(&s.to_string()), s);
    }
}

#[test]
fn lines_of_every_text() {
    let texts = [
        "hello\nsim: guardrail content\nsim: echo",
        "sim: text\nsim: guardrail source=INPUT pii",
        "no lines",
    ];
    let found = parse_lines(texts).unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].source, Some(Source::Input));
    assert!(parse_lines(["sim: guardrail nope"]).is_err());
    assert!(parse_lines(["sim: nope"]).unwrap().is_empty());
}
