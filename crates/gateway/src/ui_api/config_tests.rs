use super::*;
use serde_json::json;

fn body(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn plan_accepts_every_kind_in_canonical_form() {
    let planned = plan(
        &body(json!({
            "http_max_retries": 5,
            "first_token_timeout": "20",
            "truncation_recovery": false,
            "debug_mode": "ERRORS",
            "max_request_body": "1MiB",
            "public_url": "https://gw.example.com/",
            "sso_issuer_url": "https://accounts.example.com/",
            "sso_client_secret": "s3cret",
            "fake_reasoning_enabled": null,
        })),
        &RuntimeConfig::default(),
    )
    .unwrap();
    let get = |k: &str| planned.iter().find(|p| p.key == k).unwrap().clone();
    assert_eq!(get("http_max_retries").value.as_deref(), Some("5"));
    assert_eq!(get("first_token_timeout").value.as_deref(), Some("20s"));
    assert_eq!(get("truncation_recovery").value.as_deref(), Some("false"));
    assert_eq!(get("debug_mode").value.as_deref(), Some("errors"));
    assert_eq!(get("max_request_body").value.as_deref(), Some("1MiB"));
    assert_eq!(
        get("public_url").value.as_deref(),
        Some("https://gw.example.com")
    );
    assert_eq!(
        get("sso_issuer_url").value.as_deref(),
        Some("https://accounts.example.com")
    );
    assert!(get("sso_client_secret").secret);
    assert_eq!(get("fake_reasoning_enabled").value, None);
}

#[test]
fn plan_reports_every_problem_without_echoing_values() {
    let problems = plan(
        &body(json!({
            "http_max_retries": 11,
            "first_token_timeout": "soonish",
            "truncation_recovery": "maybe",
            "debug_mode": "verbose",
            "max_request_body": "12",
            "fake_reasoning_max_tokens": -1,
            "nope": 1,
            "server_port": 9999,
            "sso_issuer_url": "http://idp.example.com",
            "shutdown_grace": {"s": 1},
        })),
        &RuntimeConfig::default(),
    )
    .unwrap_err();
    assert_eq!(problems.len(), 10, "{problems:?}");
    for name in [
        "http_max_retries",
        "first_token_timeout",
        "truncation_recovery",
        "debug_mode",
        "max_request_body",
        "fake_reasoning_max_tokens",
        "nope",
        "server_port",
        "sso_issuer_url",
        "shutdown_grace",
    ] {
        assert!(
            problems.iter().any(|p| p.starts_with(&format!("{name}: "))),
            "{name}: {problems:?}"
        );
    }
    let all = problems.join(" ");
    assert!(!all.contains("soonish") && !all.contains("verbose") && !all.contains("maybe"));
}

#[test]
fn the_mask_leaves_a_secret_alone_and_empty_removes_it() {
    let planned = plan(
        &body(json!({"sso_client_secret": MASK, "sso_client_id": ""})),
        &RuntimeConfig::default(),
    )
    .unwrap();
    assert_eq!(
        planned,
        vec![Planned {
            key: "sso_client_id".into(),
            value: None,
            secret: false
        }]
    );
}

#[test]
fn sources() {
    let mut env = RuntimeConfig::default();
    env.set("http_max_retries", "4").unwrap();
    assert_eq!(source("http_max_retries", &env, false), "environment");
    assert_eq!(source("http_max_retries", &env, true), "database");
    assert_eq!(source("debug_mode", &env, false), "default");
}
