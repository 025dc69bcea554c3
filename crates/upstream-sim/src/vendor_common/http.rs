//! Small HTTP helpers of the vendor simulators: reading credentials from
//! headers, reading JSON or form bodies, clock values in the vendors' shapes
//! (Unix seconds, RFC 3339), and building played response bodies.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use crate::primary::stream::{EventStream, Step};
use crate::recorder::ReceivedBody;
use crate::stats::{StreamCounters, StreamGuard};

/// `Content-Type` of streamed answers.
pub(crate) const SSE_CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";

/// A header's value as text.
pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The credential of `Authorization: <scheme> <credential>` when the scheme
/// matches (case-insensitively) and the credential is not empty.
pub(crate) fn authorization<'a>(headers: &'a HeaderMap, scheme: &str) -> Option<&'a str> {
    let value = header_str(headers, header::AUTHORIZATION.as_str())?;
    let (s, rest) = value.trim().split_once(' ')?;
    let rest = rest.trim();
    (s.eq_ignore_ascii_case(scheme) && !rest.is_empty()).then_some(rest)
}

/// Set a header from text; a value that is not a valid header is skipped.
pub(crate) fn set_header(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        headers.insert(HeaderName::from_static(name), v);
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (UTC).
pub(crate) fn rfc3339(unix: u64) -> String {
    let days = unix / 86_400;
    let secs = unix % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (days >= 0).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01 so leap days end each 400-year era.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// The fields of a JSON object body or of a form-encoded body (strings only;
/// other JSON values are kept as their JSON text). `None` when it is neither.
pub(crate) fn fields(body: &ReceivedBody) -> Option<HashMap<String, String>> {
    if let Some(json) = body.json.as_deref() {
        let obj = json.as_object()?;
        return Some(
            obj.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect(),
        );
    }
    let text = std::str::from_utf8(&body.raw).ok()?.trim();
    if text.is_empty() || text.starts_with('{') || text.starts_with('[') {
        return None;
    }
    Some(
        text.split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (form_decode(k), form_decode(v))
            })
            .collect(),
    )
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A 200 response whose body plays `steps`, counted as a stream in `counters`.
pub(crate) fn streamed(
    steps: VecDeque<Step>,
    counters: Arc<StreamCounters>,
    content_type: &'static str,
) -> Response {
    let guard = StreamGuard::start(counters);
    let mut res = Response::new(Body::from_stream(EventStream::new(steps, guard)));
    *res.status_mut() = StatusCode::OK;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}

/// A 200 JSON response whose body plays `steps` (not counted as a stream).
pub(crate) fn json_body(steps: VecDeque<Step>) -> Response {
    let guard = StreamGuard::start(Arc::new(StreamCounters::default()));
    let mut res = Response::new(Body::from_stream(EventStream::new(steps, guard)));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn rfc3339_of_known_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_759_104_000), "2025-09-29T00:00:00Z");
        assert_eq!(rfc3339(1_704_067_199), "2023-12-31T23:59:59Z");
    }

    #[test]
    fn authorization_schemes() {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("token gho_x"),
        );
        assert_eq!(authorization(&h, "token"), Some("gho_x"));
        assert_eq!(authorization(&h, "bearer"), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer  "));
        assert_eq!(authorization(&h, "bearer"), None);
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer abc"),
        );
        assert_eq!(authorization(&h, "Bearer"), Some("abc"));
    }

    fn received(raw: &'static [u8]) -> ReceivedBody {
        ReceivedBody {
            raw: Bytes::from_static(raw),
            json: serde_json::from_slice(raw).ok().map(Arc::new),
        }
    }

    #[test]
    fn fields_of_json_and_form_bodies() {
        let f = fields(&received(br#"{"grant_type":"refresh_token","n":1}"#)).unwrap();
        assert_eq!(f["grant_type"], "refresh_token");
        assert_eq!(f["n"], "1");
        let f = fields(&received(
            b"grant_type=refresh_token&refresh_token=a%2Bb+c&x",
        ))
        .unwrap();
        assert_eq!(f["refresh_token"], "a+b c");
        assert_eq!(f["x"], "");
        assert!(fields(&received(b"")).is_none());
        assert!(fields(&received(b"[1]")).is_none());
        assert_eq!(form_decode("%zz%4"), "%zz%4");
    }
}
