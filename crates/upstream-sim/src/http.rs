//! Small HTTP helpers every simulated service uses: reading credentials and
//! values from headers, setting headers, `application/x-www-form-urlencoded`
//! decoding, and clock values in the services' shapes (Unix seconds, RFC 3339,
//! SigV4's `x-amz-date`).

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

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

/// Decoded `a=b&c=d` pairs of a query string, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params(pub Vec<(String, String)>);

impl Params {
    pub fn parse(raw: &[u8]) -> Self {
        Params(
            url::form_urlencoded::parse(raw)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first non-empty value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// `base` with these query parameters added (a redirect back to a client);
/// `None` when `base` is not an absolute URL.
pub(crate) fn with_query(base: &str, pairs: &[(&str, &str)]) -> Option<String> {
    let mut url = url::Url::parse(base).ok()?;
    url.query_pairs_mut().extend_pairs(pairs);
    Some(url.into())
}

/// A 302 to `location`.
pub(crate) fn found(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(v) => (StatusCode::FOUND, [(header::LOCATION, v)]).into_response(),
        Err(_) => error_page(StatusCode::BAD_REQUEST, "The redirect URI is not valid."),
    }
}

/// An HTML error page, as a browser-facing authorization page shows one (no
/// redirect). `message` is fixed text, never a request value.
pub(crate) fn error_page(status: StatusCode, message: &str) -> Response {
    let page = format!(
        "<!doctype html>\n<html><head><title>Authorization error</title></head>\
         <body><h1>Authorization error</h1><p>{message}</p></body></html>\n"
    );
    (status, Html(page)).into_response()
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (UTC).
pub(crate) fn rfc3339(unix: u64) -> String {
    let [y, m, d, hh, mm, ss] = civil(unix);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// `YYYYMMDDTHHMMSSZ` of a Unix time (UTC): SigV4's `x-amz-date`.
pub(crate) fn amz_date(unix: u64) -> String {
    let [y, m, d, hh, mm, ss] = civil(unix);
    format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}Z")
}

/// The Unix time of a `YYYYMMDDTHHMMSSZ` (UTC); `None` when malformed or
/// before 1970.
pub(crate) fn parse_amz_date(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let n = |range: std::ops::Range<usize>| -> Option<u64> {
        let digits = s.get(range)?;
        if !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    let (y, m, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (hh, mm, ss) = (n(9..11)?, n(11..13)?, n(13..15)?);
    let days_in_month = match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if y < 1970 || !(1..=days_in_month).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Year, month, day, hour, minute, second of a Unix time (UTC).
fn civil(unix: u64) -> [u64; 6] {
    let secs = unix % 86_400;
    let (y, m, d) = civil_from_days(unix / 86_400);
    [y, m, d, secs / 3600, secs % 3600 / 60, secs % 60]
}

/// Days since 1970-01-01 of a proleptic Gregorian date (from 1970 on).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    // The inverse of `civil_from_days`: years start on March 1st.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y % 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
pub(crate) fn form_decode(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_759_104_000), "2025-09-29T00:00:00Z");
        assert_eq!(rfc3339(1_704_067_199), "2023-12-31T23:59:59Z");
    }

    #[test]
    fn amz_dates_both_ways() {
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
        assert_eq!(parse_amz_date("20150830T123600Z"), Some(1_440_938_160));
        assert_eq!(parse_amz_date("20000229T000000Z"), Some(951_782_400));
        assert_eq!(parse_amz_date("19700101T000000Z"), Some(0));
        for unix in [0, 951_782_400, 1_704_067_199, 1_759_104_000, 4_102_444_800] {
            assert_eq!(parse_amz_date(&amz_date(unix)), Some(unix));
        }
        for bad in [
            "20150830T123600",
            "2015-08-30T12:36:00Z",
            "20150230T123600Z",
            "20150830T243600Z",
            "20150830T12360aZ",
            "19691231T235959Z",
            "2015083OT123600Z",
        ] {
            assert_eq!(parse_amz_date(bad), None, "{bad}");
        }
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

    #[test]
    fn form_decoding() {
        assert_eq!(form_decode("a%2Bb+c"), "a+b c");
        assert_eq!(form_decode("%zz%4"), "%zz%4");
        assert_eq!(form_decode("arn%3Aaws%3Ax"), "arn:aws:x");
    }
}
