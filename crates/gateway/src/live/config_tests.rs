use std::time::Duration;

use super::*;

fn plain(v: &str) -> ConfigValue {
    ConfigValue::Plain(v.to_owned())
}

#[test]
fn overlay_skips_bad_and_foreign_values() {
    let mut env = RuntimeConfig::default();
    env.set("http_max_retries", "4").unwrap();
    let stored = vec![
        ("http_max_retries".to_owned(), plain("7")),
        ("first_token_timeout".to_owned(), plain("not a duration")),
        ("removed_in_a_later_version".to_owned(), plain("1")),
        ("server_port".to_owned(), plain("1")),
        ("sso_client_id".to_owned(), plain("abc")),
    ];
    let (merged, set) = overlay(&env, &stored);
    assert_eq!(merged.http_max_retries, 7);
    assert_eq!(merged.first_token_timeout, Duration::from_secs(15));
    assert_eq!(merged.server_port, 8000);
    assert_eq!(set, ["http_max_retries"]);
}

#[test]
fn only_hot_fields_are_applied_live() {
    let live = RuntimeConfig::default();
    let mut target = RuntimeConfig::default();
    target.set("fake_reasoning_enabled", "false").unwrap();
    target.set("model_cache_refresh", "1h").unwrap();
    let next = with_hot_fields(&live, &target);
    assert!(!next.fake_reasoning_enabled);
    assert_eq!(next.model_cache_refresh, live.model_cache_refresh);
}
