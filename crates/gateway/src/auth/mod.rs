//! Client API-key authentication for `/v1/*` (spec 5.2), the pure pieces:
//! who a request is ([`Caller`]), which keys it presents
//! ([`presented_keys`]), the proxy-mode comparison ([`check`]), and per-user
//! keys ([`keys`]: generation, hashing, the lookup cache). The middleware
//! that applies them is `server::client_auth`; revocations reach every
//! replica through `live::invalidation`.
//!
//! In proxy mode the one key is `PROXY_API_KEY`: it is hashed once at start
//! (SHA-256, [`ApiKeyHash`]) and each presented key is hashed and compared in
//! constant time, so neither the comparison time nor a memory dump of the
//! request path reveals the key.
//!
//! A key is presented as `Authorization: Bearer <key>` or `x-api-key: <key>`;
//! when both are sent, either may match. No key at all is "missing", a key
//! that does not match is "invalid" (both 401 `auth_error`).

pub mod keys;

use axum::http::{header, HeaderMap};

pub use keys::ApiKeyHash;

use crate::error::{AuthFailure, GatewayError};
use crate::store::api_keys::KeyOwner;

/// Who made an authenticated `/v1` request; inserted in the request
/// extensions by the client-auth middleware and taken by handlers as an
/// extractor. Its absence is a wiring bug: fail closed (500), never a
/// default caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Proxy mode: the holder of `PROXY_API_KEY`.
    Proxy,
    /// Full deployment: the owner of a per-user API key.
    User(KeyOwner),
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = GatewayError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, GatewayError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            GatewayError::internal(anyhow::anyhow!(
                "a /v1 request reached its handler without a caller"
            ))
        })
    }
}

/// The keys a request presents: the bearer token and the `x-api-key` value
/// (empty values and other `Authorization` schemes are ignored).
pub fn presented_keys(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    let api_key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    bearer.into_iter().chain(api_key).filter(|k| !k.is_empty())
}

/// Check the presented keys against `expected`.
pub fn check(headers: &HeaderMap, expected: &ApiKeyHash) -> Result<(), AuthFailure> {
    let mut any = false;
    let mut ok = false;
    for key in presented_keys(headers) {
        any = true;
        // No early exit: each presented key is hashed and compared.
        ok |= expected.matches(key);
    }
    match (any, ok) {
        (_, true) => Ok(()),
        (false, false) => Err(AuthFailure::MissingKey),
        (true, false) => Err(AuthFailure::InvalidKey),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn bearer_or_x_api_key() {
        let expected = ApiKeyHash::of("secret-key");
        assert_eq!(
            check(
                &headers(&[("authorization", "Bearer secret-key")]),
                &expected
            ),
            Ok(())
        );
        assert_eq!(
            check(
                &headers(&[("authorization", "bearer  secret-key ")]),
                &expected
            ),
            Ok(())
        );
        assert_eq!(
            check(&headers(&[("x-api-key", "secret-key")]), &expected),
            Ok(())
        );
        // Both sent, one right.
        assert_eq!(
            check(
                &headers(&[
                    ("authorization", "Bearer wrong"),
                    ("x-api-key", "secret-key")
                ]),
                &expected
            ),
            Ok(())
        );
    }

    #[test]
    fn missing_versus_invalid() {
        let expected = ApiKeyHash::of("secret-key");
        assert_eq!(
            check(&headers(&[]), &expected),
            Err(AuthFailure::MissingKey)
        );
        assert_eq!(
            check(&headers(&[("authorization", "Basic abc")]), &expected),
            Err(AuthFailure::MissingKey)
        );
        assert_eq!(
            check(&headers(&[("authorization", "Bearer ")]), &expected),
            Err(AuthFailure::MissingKey)
        );
        assert_eq!(
            check(&headers(&[("x-api-key", "")]), &expected),
            Err(AuthFailure::MissingKey)
        );
        assert_eq!(
            check(&headers(&[("x-api-key", "nope")]), &expected),
            Err(AuthFailure::InvalidKey)
        );
        assert_eq!(
            check(
                &headers(&[("authorization", "Bearer secret-key-2")]),
                &expected
            ),
            Err(AuthFailure::InvalidKey)
        );
    }

    #[test]
    fn the_hash_does_not_print() {
        assert_eq!(format!("{:?}", ApiKeyHash::of("k")), "ApiKeyHash(***)");
    }
}
