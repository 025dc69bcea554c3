use super::*;

fn parse(s: &str) -> VendorScenario {
    s.parse().unwrap()
}

fn parse_err(s: &str) -> String {
    s.parse::<VendorScenario>().unwrap_err().0
}

#[test]
fn names_and_defaults() {
    assert_eq!(parse(""), VendorScenario::default_answer());
    assert_eq!(parse("text len=500 chunk=7"), VendorScenario::text(500, 7));
    assert_eq!(
        parse("scenario=tools fragments=4 n=2"),
        VendorScenario::tools(2, 4)
    );
    assert_eq!(parse("reasoning"), VendorScenario::thinking());
    assert_eq!(parse("echo"), VendorScenario::echo());
}

#[test]
fn status_once_with_retry_after() {
    let s = parse("status code=429 retry_after=2 times=1");
    assert_eq!(s, VendorScenario::rate_limited(2).with_times(1));
    let s = parse("status code=429 error_type=insufficient_quota");
    assert_eq!(
        s.kind,
        VendorKind::Status {
            code: 429,
            retry_after: None,
            error_type: Some("insufficient_quota".into())
        }
    );
}

#[test]
fn common_keys() {
    let s = parse("text delay=2s interval=5 header_delay=10ms extra=1 finish=length");
    assert_eq!(s.first_delay, Duration::from_secs(2));
    assert_eq!(s.interval, Duration::from_millis(5));
    assert_eq!(s.header_delay, Duration::from_millis(10));
    assert!(s.extra);
    assert_eq!(s.finish, Finish::Length);
}

#[test]
fn faults() {
    assert_eq!(
        parse("text disconnect_after=3").fault,
        Some(VendorFault::Disconnect { after: 3 })
    );
    assert_eq!(
        parse("text error=api_error error_after=2").fault,
        Some(VendorFault::ErrorEvent {
            after: 2,
            error_type: Some("api_error".into())
        })
    );
    assert!(parse_err("text error=x").contains("error_after"));
    assert!(parse_err("text error_after=1 disconnect_after=1").contains("one fault"));
}

#[test]
fn errors_name_the_problem() {
    assert!(parse_err("bogus").contains("unknown scenario"));
    assert!(parse_err("text n=2").contains("unknown key 'n'"));
    assert!(parse_err("text len=x").contains("not a number"));
    assert!(parse_err("status code=200").contains("400..599"));
    assert!(parse_err("tools n=0").contains("at least 1"));
    assert!(parse_err("text finish=maybe").contains("natural or length"));
    assert!(parse_err("text len").contains("key=value"));
    assert!(parse_err("text scenario=echo").contains("two scenario names"));
}

#[test]
fn display_round_trips() {
    for text in [
        "default",
        "text len=5 chunk=2 unicode=true",
        "echo chunk=3",
        "tools n=2 fragments=5 preamble=false name=read interleave=true",
        "thinking thinking_len=10 len=4 chunk=2",
        "status code=529",
        "status code=429 retry_after=1 error_type=rate_limit_error times=1",
        "text header_delay=5ms delay=10ms interval=1ms extra=true finish=length",
        "text disconnect_after=2 key=k",
        "text error_after=1 error=overloaded_error",
        "text error_after=4",
    ] {
        let s = parse(text);
        assert_eq!(s.to_string(), text);
        assert_eq!(parse(&s.to_string()), s);
    }
    assert_eq!(VendorScenario::thinking().counter_key(), "thinking");
    assert_eq!(VendorScenario::echo().with_key("k").counter_key(), "k");
}
