use super::*;

fn parse(s: &str) -> Scenario {
    s.parse().unwrap()
}

fn parse_err(s: &str) -> String {
    s.parse::<Scenario>().unwrap_err().0
}

#[test]
fn bare_name_and_scenario_key_are_the_same() {
    assert_eq!(
        parse("text len=500 chunk=20"),
        parse("scenario=text chunk=20 len=500")
    );
    assert_eq!(parse("text len=500 chunk=20"), Scenario::text(500, 20));
    assert_eq!(parse(""), Scenario::default_answer());
    assert_eq!(parse("scenario=echo"), Scenario::echo());
}

#[test]
fn examples_from_the_issue() {
    assert_eq!(
        parse("scenario=tools n=2 fragments=4"),
        Scenario::tools(2, 4)
    );
    let s = parse("scenario=status code=429 times=1 retry_after=1");
    assert_eq!(
        s.kind,
        ScenarioKind::Status {
            code: 429,
            retry_after: Some(1),
            reason: None,
            revoke: false
        }
    );
    assert_eq!(s.times, Some(1));
}

#[test]
fn common_keys() {
    let s = parse("text delay=250 header_delay=1s interval=5ms truncate=1 metadata=yes context=0 metering=false key=k1");
    assert_eq!(s.first_delay, Duration::from_millis(250));
    assert_eq!(s.header_delay, Duration::from_secs(1));
    assert_eq!(s.interval, Duration::from_millis(5));
    assert!(s.truncate && s.metadata && !s.context_usage && !s.metering);
    assert_eq!(s.key.as_deref(), Some("k1"));
    assert_eq!(s.counter_key(), "k1");
}

#[test]
fn faults() {
    assert_eq!(
        parse("text disconnect_after=3").fault,
        Some(Fault::Disconnect { after: 3 })
    );
    assert_eq!(
        parse("text corrupt_at=0").fault,
        Some(Fault::CorruptCrc { at: 0 })
    );
    assert_eq!(
        parse("text exception=ThrottlingException exception_after=2").fault,
        Some(Fault::Exception {
            after: 2,
            exception_type: "ThrottlingException".into()
        })
    );
    assert_eq!(
        parse("text error_after=1").fault,
        Some(Fault::Error {
            after: 1,
            code: DEFAULT_ERROR_CODE.into()
        })
    );
    assert!(parse_err("text exception=X").contains("exception_after"));
    assert!(parse_err("text corrupt_at=1 disconnect_after=2").contains("one fault"));
}

#[test]
fn errors_name_the_problem() {
    assert!(parse_err("nope").contains("unknown scenario 'nope'"));
    assert!(parse_err("text n=2").contains("unknown key 'n' for scenario text"));
    assert!(parse_err("text len=abc").contains("not a number"));
    assert!(parse_err("text chunk=0").contains("at least 1"));
    assert!(parse_err("text unicode=maybe").contains("not a boolean"));
    assert!(parse_err("text len").contains("key=value"));
    assert!(parse_err("text len=").contains("no value"));
    assert!(parse_err("status code=200").contains("400..599"));
    assert!(parse_err("text scenario=echo").contains("two scenario names"));
}

#[test]
fn display_is_canonical_and_round_trips() {
    for text in [
        "default",
        "text len=500 chunk=7 unicode=true",
        "echo chunk=5",
        "tools n=2 fragments=4 preamble=false name=read_file duplicate=true",
        "thinking thinking_len=10 len=5 chunk=3",
        "reasoning",
        "status code=429 retry_after=1 reason=INSUFFICIENT_MODEL_CAPACITY revoke=true",
        "text header_delay=10ms delay=20ms interval=30ms truncate=true metering=false context=false metadata=true exception_after=2 exception=validationException times=1 key=a",
        "text error_after=0 error_code=Boom",
        "text disconnect_after=4",
        "text corrupt_at=2",
    ] {
        let s = parse(text);
        assert_eq!(s.to_string(), text);
        assert_eq!(parse(&s.to_string()), s);
    }
    // Defaults are not printed, so spellings of one scenario share a counter key.
    assert_eq!(
        parse("scenario=text len=200 chunk=20").counter_key(),
        "text"
    );
    assert_eq!(
        parse("status times=1 code=429").counter_key(),
        parse("status code=429 times=1").counter_key()
    );
}
