//! Logging: the `tracing` subscriber (`LOG_LEVEL` as filter, `LOG_FORMAT=json`
//! for JSON lines) and the masking every logged body or header goes through,
//! whatever `DEBUG_MODE` says: API keys, tokens, secrets, passwords,
//! authorization and cookie values never reach the log. In a full
//! deployment every line is also kept for the admins' live log stream
//! ([`stream`]).

pub mod access_note;
#[cfg(test)]
mod captured;
pub mod stream;
mod tenths;
mod text_fields;
mod text_line;

use serde_json::Value;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

const MASK: &str = "***";

/// Install the global subscriber. Safe to call twice (the second call is a no-op),
/// which tests that start several servers rely on.
pub fn init(config: &LogConfig) {
    let filter = EnvFilter::try_new(&config.level).unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a person at a terminal, never into files or collectors.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_target(true);
    // In a full deployment every line also goes to the admin log stream's
    // ring (`stream`); proxy mode has no admins, so no line is kept for them.
    let stream = config.live_stream.then_some(stream::StreamLayer);
    let result = match config.format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .finish()
            .with(stream)
            .try_init(),
        LogFormat::Text if ansi => builder
            .fmt_fields(text_fields::TextFields)
            .finish()
            .with(stream)
            .try_init(),
        LogFormat::Text => builder
            .fmt_fields(text_fields::TextFields)
            .event_format(text_line::TextLine)
            .finish()
            .with(stream)
            .try_init(),
    };
    // Already installed (a second server in the same test process): keep the first.
    drop(result);
}

/// Whether a JSON key names a credential. Counts such as `max_tokens` or
/// `input_tokens` are numbers and stay visible (only string values are masked).
/// One-time credentials count too: a TOTP or recovery `code`, the setup
/// code, an OAuth `code`, its `state` and PKCE verifier.
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace(['-', '_'], "");
    const WORDS: [&str; 14] = [
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "authorization",
        "cookie",
        "credential",
        "privatekey",
        "accesskey",
        "devicecode",
        "setupcode",
        "recoverycode",
        "codeverifier",
    ];
    WORDS.iter().any(|w| k.contains(w)) || matches!(k.as_str(), "key" | "auth" | "code" | "state")
}

/// Mask credentials in a JSON text: string values under credential-like keys
/// become `***`, and bearer tokens or `sk-` keys inside any string are masked.
/// Text that is not JSON is masked by the same value patterns.
pub fn mask_secrets(json: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(mut value) => {
            mask_value(&mut value);
            value.to_string()
        }
        Err(_) => mask_text(json),
    }
}

/// [`mask_secrets`] on a `serde_json::Value`, in place.
pub fn mask_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret_key(key) && v.is_string() {
                    *v = Value::String(MASK.to_owned());
                } else {
                    mask_value(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_value),
        Value::String(s) => {
            let masked = mask_text(s);
            if masked != *s {
                *s = masked;
            }
        }
        _ => {}
    }
}

/// Mask `Bearer <token>` and `sk-...` keys inside free text.
pub fn mask_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let bearer = find_ascii_ci(rest, "bearer ");
        let sk = find_key_prefix(rest);
        let next = match (bearer, sk) {
            (Some(b), Some(s)) => Some(if b <= s { (b, 7) } else { (s, 3) }),
            (Some(b), None) => Some((b, 7)),
            (None, Some(s)) => Some((s, 3)),
            (None, None) => None,
        };
        let Some((at, prefix_len)) = next else {
            out.push_str(rest);
            return out;
        };
        let (head, tail) = rest.split_at(at + prefix_len);
        out.push_str(head);
        let token_len = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '}' | ']'))
            .unwrap_or(tail.len());
        if token_len > 0 {
            out.push_str(MASK);
        }
        rest = &tail[token_len..];
    }
}

fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `sk-` at a word start followed by at least 8 key characters.
fn find_key_prefix(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(pos) = text[from..].find("sk-") {
        let at = from + pos;
        let word_start = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let key_len = bytes[at + 3..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b'_')
            .count();
        if word_start && key_len >= 8 {
            return Some(at);
        }
        from = at + 3;
    }
    None
}

/// Header names whose values are credentials.
pub fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "authorization" | "proxy-authorization" | "x-api-key" | "cookie" | "set-cookie"
    ) || is_secret_key(&n)
}

/// Headers as `name: value` pairs for a debug log, credentials masked.
pub fn mask_headers(headers: &axum::http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = if is_secret_header(name.as_str()) {
                MASK.to_owned()
            } else {
                mask_text(&String::from_utf8_lossy(value.as_bytes()))
            };
            (name.as_str().to_owned(), shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credential_keys_are_masked_at_any_depth() {
        let input = json!({
            "refresh_token": "aorAAAA",
            "client_secret": "eyJr",
            "nested": {"apiKey": "abc", "password": "pw", "Authorization": "Bearer xyz"},
            "list": [{"accessToken": "t1"}],
            "x-api-key": "k",
        });
        let out: Value = serde_json::from_str(&mask_secrets(&input.to_string())).unwrap();
        assert_eq!(
            out,
            json!({
                "refresh_token": "***",
                "client_secret": "***",
                "nested": {"apiKey": "***", "password": "***", "Authorization": "***"},
                "list": [{"accessToken": "***"}],
                "x-api-key": "***",
            })
        );
    }

    #[test]
    fn one_time_codes_are_masked() {
        let input = json!({"login_token": "t", "code": "169786", "state": "s1",
            "setup_code": "ABCD-EFGH", "recovery_code": "r-1", "code_verifier": "v"});
        let masked: Value = serde_json::from_str(&mask_secrets(&input.to_string())).unwrap();
        for key in [
            "login_token",
            "code",
            "state",
            "setup_code",
            "recovery_code",
            "code_verifier",
        ] {
            assert_eq!(masked[key], "***", "{key}");
        }
    }

    #[test]
    fn counts_and_content_stay_visible() {
        let input = json!({"max_tokens": 100, "usage": {"input_tokens": 5},
            "model": "claude-sonnet-4.5", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(mask_secrets(&input.to_string()), input.to_string());
    }

    #[test]
    fn bearer_and_sk_keys_inside_strings_are_masked() {
        let input = json!({"content": "use Bearer abc.def-123 and sk-proj1234567890 now"});
        let out = mask_secrets(&input.to_string());
        assert!(!out.contains("abc.def-123"));
        assert!(!out.contains("sk-proj1234567890"));
        assert!(out.contains("Bearer ***"));
        assert!(out.contains("sk-***"));
        assert!(out.contains("now"));
    }

    #[test]
    fn non_json_text_is_masked_by_pattern() {
        assert_eq!(
            mask_secrets("authorization: bearer tok123, next"),
            "authorization: bearer ***, next"
        );
        assert_eq!(mask_secrets("task-list sk-short"), "task-list sk-short");
        assert_eq!(mask_text("no secrets here"), "no secrets here");
    }

    #[test]
    fn headers_are_masked() {
        let mut h = axum::http::HeaderMap::new();
        h.insert("authorization", "Bearer sk-1234567890".parse().unwrap());
        h.insert("x-api-key", "sk-abcdefghij".parse().unwrap());
        h.insert("content-type", "application/json".parse().unwrap());
        let shown = mask_headers(&h);
        assert!(shown.contains(&("authorization".into(), "***".into())));
        assert!(shown.contains(&("x-api-key".into(), "***".into())));
        assert!(shown.contains(&("content-type".into(), "application/json".into())));
    }
}
