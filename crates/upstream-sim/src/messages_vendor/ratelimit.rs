//! The messages vendor's rate-limit headers, on every answer: the
//! `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`
//! families, resets as RFC 3339 times one minute ahead. A rate-limited answer
//! reports nothing remaining.

use axum::http::HeaderMap;

use crate::http::{rfc3339, set_header, unix_now};

const REQUESTS_LIMIT: u64 = 4_000;
const INPUT_LIMIT: u64 = 2_000_000;
const OUTPUT_LIMIT: u64 = 400_000;

/// Set the rate-limit headers; `limited` for a 429.
pub fn set(headers: &mut HeaderMap, limited: bool) {
    let reset = rfc3339(unix_now() + 60);
    let remaining = |limit: u64, used: u64| {
        if limited {
            0
        } else {
            limit - used
        }
    };
    let families: [(&str, &str, &str, u64, u64); 4] = [
        (
            "anthropic-ratelimit-requests-limit",
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
            REQUESTS_LIMIT,
            remaining(REQUESTS_LIMIT, 1),
        ),
        (
            "anthropic-ratelimit-tokens-limit",
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-tokens-reset",
            INPUT_LIMIT + OUTPUT_LIMIT,
            remaining(INPUT_LIMIT + OUTPUT_LIMIT, 1_000),
        ),
        (
            "anthropic-ratelimit-input-tokens-limit",
            "anthropic-ratelimit-input-tokens-remaining",
            "anthropic-ratelimit-input-tokens-reset",
            INPUT_LIMIT,
            remaining(INPUT_LIMIT, 1_000),
        ),
        (
            "anthropic-ratelimit-output-tokens-limit",
            "anthropic-ratelimit-output-tokens-remaining",
            "anthropic-ratelimit-output-tokens-reset",
            OUTPUT_LIMIT,
            remaining(OUTPUT_LIMIT, 0),
        ),
    ];
    for (limit_name, remaining_name, reset_name, limit, left) in families {
        set_header(headers, limit_name, &limit.to_string());
        set_header(headers, remaining_name, &left.to_string());
        set_header(headers, reset_name, &reset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_present() {
        let mut h = HeaderMap::new();
        set(&mut h, false);
        assert_eq!(h.len(), 12);
        assert_eq!(h["anthropic-ratelimit-requests-remaining"], "3999");
        let reset = h["anthropic-ratelimit-output-tokens-reset"]
            .to_str()
            .unwrap();
        assert!(reset.ends_with('Z') && reset.len() == 20, "{reset}");
        set(&mut h, true);
        assert_eq!(h["anthropic-ratelimit-tokens-remaining"], "0");
    }
}
