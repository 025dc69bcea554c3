//! The URLs of a sign-in: the gateway's public base (config `public_url`, or
//! derived from the request), the callback `redirect_uri` under it, and the
//! provider's authorization URL with every parameter of the request.

use axum::http::{header, HeaderMap};

use super::SsoError;

/// Path of the callback below the public base URL.
pub(crate) const CALLBACK_PATH: &str = "/_ui/api/auth/google/callback";

/// The gateway's public base URL, without trailing `/`: `public_url` when
/// configured; otherwise `X-Forwarded-Proto` (else `http`) and
/// `X-Forwarded-Host` (else `Host`) of the request. Deployments behind a
/// proxy that rewrites neither header should set `public_url`.
pub(crate) fn public_base(
    public_url: Option<&str>,
    headers: &HeaderMap,
) -> Result<String, SsoError> {
    if let Some(url) = public_url.map(str::trim).filter(|u| !u.is_empty()) {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            // A proxy chain may list several values: the first is the client's.
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let proto = match text("x-forwarded-proto").map(str::to_ascii_lowercase) {
        Some(p) if p == "https" || p == "http" => p,
        Some(_) => {
            return Err(SsoError::BadRequest(
                "X-Forwarded-Proto must be http or https".into(),
            ))
        }
        None => "http".to_owned(),
    };
    let host = text("x-forwarded-host")
        .or_else(|| text(header::HOST.as_str()))
        .ok_or_else(|| {
            SsoError::BadRequest("no Host header: set public_url in the configuration".into())
        })?;
    // Only a host and an optional port: anything else could bend the redirect.
    let valid = host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']' | b'_'));
    if !valid {
        return Err(SsoError::BadRequest(
            "the Host header is not a host name".into(),
        ));
    }
    Ok(format!("{proto}://{host}"))
}

/// `{base}/_ui/api/auth/google/callback`.
pub(crate) fn callback_uri(base: &str) -> String {
    format!("{base}{CALLBACK_PATH}")
}

/// The parameters of one authorization request.
#[derive(Debug, Clone)]
pub(crate) struct AuthorizationRequest<'a> {
    pub authorization_endpoint: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: &'a str,
    pub nonce: &'a str,
    pub code_challenge: &'a str,
}

/// The URL the browser is sent to (scope `openid email profile`, PKCE S256).
pub(crate) fn authorization_url(req: &AuthorizationRequest<'_>) -> Result<String, SsoError> {
    let mut url = url::Url::parse(req.authorization_endpoint)
        .map_err(|_| SsoError::Unavailable("authorization_endpoint is not a URL".into()))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", req.client_id)
        .append_pair("redirect_uri", req.redirect_uri)
        .append_pair("scope", "openid email profile")
        .append_pair("state", req.state)
        .append_pair("nonce", req.nonce)
        .append_pair("code_challenge", req.code_challenge)
        .append_pair("code_challenge_method", "S256");
    Ok(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn configured_public_url_wins() {
        let h = headers(&[("host", "internal:9999")]);
        assert_eq!(
            public_base(Some("https://gw.example.com/"), &h).unwrap(),
            "https://gw.example.com"
        );
    }

    #[test]
    fn derived_from_host_and_forwarded_headers() {
        assert_eq!(
            public_base(None, &headers(&[("host", "127.0.0.1:9999")])).unwrap(),
            "http://127.0.0.1:9999"
        );
        assert_eq!(
            public_base(
                None,
                &headers(&[
                    ("host", "backend:9999"),
                    ("x-forwarded-proto", "https, http"),
                    ("x-forwarded-host", "gw.example.com")
                ])
            )
            .unwrap(),
            "https://gw.example.com"
        );
        assert!(public_base(None, &HeaderMap::new()).is_err());
        assert!(public_base(None, &headers(&[("host", "evil.example/x?")])).is_err());
        assert!(public_base(
            None,
            &headers(&[("host", "a"), ("x-forwarded-proto", "javascript")])
        )
        .is_err());
    }

    #[test]
    fn authorization_url_carries_every_parameter() {
        let url = authorization_url(&AuthorizationRequest {
            authorization_endpoint: "https://idp.example/auth?prompt=select_account",
            client_id: "c 1",
            redirect_uri: "https://gw.example.com/_ui/api/auth/google/callback",
            state: "st",
            nonce: "no",
            code_challenge: "ch",
        })
        .unwrap();
        let parsed = url::Url::parse(&url).unwrap();
        let q: std::collections::HashMap<_, _> = parsed.query_pairs().into_owned().collect();
        assert_eq!(q["prompt"], "select_account");
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "c 1");
        assert_eq!(q["scope"], "openid email profile");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(
            q["redirect_uri"],
            "https://gw.example.com/_ui/api/auth/google/callback"
        );
        assert_eq!(q["state"], "st");
        assert_eq!(q["nonce"], "no");
    }
}
