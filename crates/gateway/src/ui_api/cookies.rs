//! The two web UI cookies (interfaces.md 6, spec 5.5):
//!
//! - `gw_session`: the session id; `HttpOnly` (scripts cannot read it),
//!   `SameSite=Strict`, `Path=/`, `Max-Age` = the session's remaining life,
//!   `Secure` unless `COOKIE_SECURE=false`;
//! - `csrf_token`: the session's CSRF token, readable by the UI's scripts so
//!   they can send it back in `X-CSRF-Token`; `SameSite=Strict`, `Path=/_ui`,
//!   same `Max-Age` and `Secure`.
//!
//! Ending a session sends both with an empty value and `Max-Age=0`.

use axum::http::{header, HeaderMap, HeaderValue};

pub(crate) const SESSION_COOKIE: &str = "gw_session";
pub(crate) const CSRF_COOKIE: &str = "csrf_token";
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";

/// Attributes shared by both cookies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CookiePolicy {
    pub secure: bool,
}

impl CookiePolicy {
    fn cookie(
        &self,
        name: &str,
        value: &str,
        path: &str,
        max_age: i64,
        http_only: bool,
    ) -> Option<HeaderValue> {
        let mut text = format!(
            "{name}={value}; Path={path}; Max-Age={}; SameSite=Strict",
            max_age.max(0)
        );
        if http_only {
            text.push_str("; HttpOnly");
        }
        if self.secure {
            text.push_str("; Secure");
        }
        // Values are UUIDs and URL-safe base64: always valid header text.
        HeaderValue::from_str(&text).ok()
    }

    /// `Set-Cookie` headers that start (or refresh) a session.
    pub(crate) fn session_headers(
        &self,
        session_id: &str,
        csrf_token: &str,
        max_age: i64,
    ) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let cookies = [
            self.cookie(SESSION_COOKIE, session_id, "/", max_age, true),
            self.cookie(CSRF_COOKIE, csrf_token, "/_ui", max_age, false),
        ];
        for cookie in cookies.into_iter().flatten() {
            headers.append(header::SET_COOKIE, cookie);
        }
        headers
    }

    /// `Set-Cookie` headers that delete both cookies.
    pub(crate) fn clearing_headers(&self) -> HeaderMap {
        self.session_headers("", "", 0)
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn read_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| wire::cookie::find(v, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_of_both_cookies() {
        let h = CookiePolicy { secure: true }.session_headers("sid", "tok", 86400);
        let all: Vec<&str> = h
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(
            all,
            [
                "gw_session=sid; Path=/; Max-Age=86400; SameSite=Strict; HttpOnly; Secure",
                "csrf_token=tok; Path=/_ui; Max-Age=86400; SameSite=Strict; Secure",
            ]
        );
        let h = CookiePolicy { secure: false }.clearing_headers();
        let all: Vec<&str> = h
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(
            all,
            [
                "gw_session=; Path=/; Max-Age=0; SameSite=Strict; HttpOnly",
                "csrf_token=; Path=/_ui; Max-Age=0; SameSite=Strict",
            ]
        );
    }

    #[test]
    fn reading_cookies() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; gw_session=abc"),
        );
        h.append(header::COOKIE, HeaderValue::from_static("csrf_token=\"x\""));
        assert_eq!(read_cookie(&h, "gw_session"), Some("abc"));
        assert_eq!(read_cookie(&h, "csrf_token"), Some("x"));
        assert_eq!(read_cookie(&h, "gw"), None);
    }
}
