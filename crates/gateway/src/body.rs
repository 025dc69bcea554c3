//! Reading a client's JSON body: content type checked, parsed once, and a
//! serde failure reported as `validation_error` naming the JSON path that failed.

use axum::http::{header, HeaderMap};
use serde::de::DeserializeOwned;

use crate::error::GatewayError;

/// Parse `body` as `T`, requiring a JSON content type.
///
/// The message names the failing field (`messages[0].role: unknown variant ...`):
/// a body that fails is parsed a second time with `serde_path_to_error`,
/// which tracks the path. Tracking it on every body would cost each request
/// about 2,000 instructions for the few that fail.
pub(crate) fn parse_json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<T, GatewayError> {
    check_content_type(headers)?;
    if body.is_empty() {
        return Err(GatewayError::validation(
            "request body is empty: a JSON object is required",
        ));
    }
    // Valid UTF-8 (every real body) is checked once here, so the reader
    // need not check each string again; anything else goes to the byte
    // reader, which reports exactly as before.
    let parsed = match std::str::from_utf8(body) {
        Ok(text) => read_whole(serde_json::Deserializer::from_str(text)),
        Err(_) => read_whole(serde_json::Deserializer::from_slice(body)),
    };
    match parsed {
        Ok(value) => Ok(value),
        Err(Unread::Trailing(err)) => {
            Err(GatewayError::validation(format!("malformed JSON: {err}")))
        }
        Err(Unread::NotA) => Err(describe_failure::<T>(body)),
    }
}

/// Why [`read_whole`] read no value.
enum Unread {
    /// The value did not parse as the type (described with its path).
    NotA,
    /// A value parsed, but something other than whitespace follows it.
    Trailing(serde_json::Error),
}

/// One value of type `T` and nothing after it.
fn read_whole<'de, R, T>(mut de: serde_json::Deserializer<R>) -> Result<T, Unread>
where
    R: serde_json::de::Read<'de>,
    T: DeserializeOwned,
{
    let value = T::deserialize(&mut de).map_err(|_| Unread::NotA)?;
    de.end().map_err(Unread::Trailing)?;
    Ok(value)
}

/// What is wrong with a body that does not parse as `T`, with its path.
fn describe_failure<T: DeserializeOwned>(body: &[u8]) -> GatewayError {
    let mut de = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(err) => {
            let path = err.path().to_string();
            let inner = err.into_inner();
            let what = if inner.is_syntax() || inner.is_eof() {
                format!("malformed JSON: {inner}")
            } else if path == "." {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            };
            GatewayError::validation(what)
        }
        // Parsing is deterministic; kept total all the same.
        Ok(_) => GatewayError::validation("malformed JSON"),
    }
}

fn check_content_type(headers: &HeaderMap) -> Result<(), GatewayError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(GatewayError::validation(
            "Content-Type header is missing: send 'Content-Type: application/json'",
        ));
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
    {
        Ok(())
    } else {
        Err(GatewayError::validation(format!(
            "Content-Type must be application/json (got '{}')",
            value.to_str().unwrap_or("<non-ASCII>")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[derive(Debug, serde::Deserialize)]
    struct Body {
        #[expect(dead_code, reason = "only parsed")]
        model: String,
        #[expect(dead_code, reason = "only parsed")]
        messages: Vec<Msg>,
    }
    #[derive(Debug, serde::Deserialize)]
    struct Msg {
        #[expect(dead_code, reason = "only parsed")]
        role: u8,
    }

    fn json_headers() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        h
    }

    fn message(r: Result<Body, GatewayError>) -> String {
        match r {
            Err(GatewayError::Validation(m)) => m,
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn names_the_failing_path() {
        let m = message(parse_json(
            &json_headers(),
            br#"{"model":"m","messages":[{"role":"x"}]}"#,
        ));
        assert!(m.starts_with("messages[0].role: invalid type"), "{m}");
    }

    #[test]
    fn reports_missing_fields_and_malformed_json() {
        let m = message(parse_json(&json_headers(), br#"{"model":"m"}"#));
        assert!(m.contains("missing field `messages`"), "{m}");
        let m = message(parse_json(&json_headers(), br#"{"model":"m","#));
        assert!(m.starts_with("malformed JSON"), "{m}");
        let m = message(parse_json(
            &json_headers(),
            br#"{"model":"m","messages":[]} x"#,
        ));
        assert!(m.starts_with("malformed JSON"), "{m}");
    }

    #[test]
    fn a_body_that_is_not_utf8_is_read_as_bytes_with_the_same_answers() {
        // A string that is not UTF-8: the byte reader's error, as before.
        let m = message(parse_json(
            &json_headers(),
            b"{\"model\":\"m\xff\",\"messages\":[]}",
        ));
        assert!(
            m.starts_with("malformed JSON: invalid unicode code point"),
            "{m}"
        );
        // Non-UTF-8 bytes after a whole value: trailing characters.
        let m = message(parse_json(
            &json_headers(),
            b"{\"model\":\"m\",\"messages\":[]} \xff",
        ));
        assert!(m.starts_with("malformed JSON: trailing characters"), "{m}");
        // And a valid one parses.
        let ok: Result<Body, _> = parse_json(
            &json_headers(),
            "{\"model\":\"m\u{e9}\",\"messages\":[{\"role\":1}]}".as_bytes(),
        );
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn requires_a_json_content_type() {
        let m = message(parse_json(&HeaderMap::new(), b"{}"));
        assert!(m.contains("Content-Type header is missing"), "{m}");
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        let m = message(parse_json(&h, b"{}"));
        assert!(m.contains("must be application/json"), "{m}");
    }
}
