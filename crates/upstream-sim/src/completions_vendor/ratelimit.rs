//! The OpenAI-format rate-limit headers, on every answer:
//! `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as
//! durations such as `6ms` or `1s`). A rate-limited answer reports nothing
//! remaining.

use axum::http::HeaderMap;

use crate::http::set_header;

const REQUESTS_LIMIT: u64 = 10_000;
const TOKENS_LIMIT: u64 = 30_000_000;

/// Set the rate-limit headers; `limited` for a 429.
pub fn set(headers: &mut HeaderMap, limited: bool) {
    let (requests_left, tokens_left, reset) = if limited {
        (0, 0, "1s")
    } else {
        (REQUESTS_LIMIT - 1, TOKENS_LIMIT - 1_000, "6ms")
    };
    set_header(
        headers,
        "x-ratelimit-limit-requests",
        &REQUESTS_LIMIT.to_string(),
    );
    set_header(
        headers,
        "x-ratelimit-limit-tokens",
        &TOKENS_LIMIT.to_string(),
    );
    set_header(
        headers,
        "x-ratelimit-remaining-requests",
        &requests_left.to_string(),
    );
    set_header(
        headers,
        "x-ratelimit-remaining-tokens",
        &tokens_left.to_string(),
    );
    set_header(headers, "x-ratelimit-reset-requests", reset);
    set_header(headers, "x-ratelimit-reset-tokens", reset);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_families() {
        let mut h = HeaderMap::new();
        set(&mut h, false);
        assert_eq!(h.len(), 6);
        assert_eq!(h["x-ratelimit-remaining-requests"], "9999");
        set(&mut h, true);
        assert_eq!(h["x-ratelimit-remaining-tokens"], "0");
        assert_eq!(h["x-ratelimit-reset-requests"], "1s");
    }
}
