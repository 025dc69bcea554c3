//! Client API-key authentication for `/v1/*` (spec 5.2). In proxy mode the one
//! key is `PROXY_API_KEY`: it is hashed once at start (SHA-256) and each
//! presented key is hashed and compared in constant time, so neither the
//! comparison time nor a memory dump of the request path reveals the key.
//!
//! A key is presented as `Authorization: Bearer <key>` or `x-api-key: <key>`;
//! when both are sent, either may match. No key at all is "missing", a key
//! that does not match is "invalid" (both 401 `auth_error`).
//!
//! In full deployment ([`require_user_key`]) keys are per user ([`keys`]):
//! the presented key is hashed and looked up in the in-memory cache, then
//! the store; a hit attaches [`Caller::User`] (user id and key id) and the
//! request's [`crate::usage::UsageTicket`]. The user's upstream credentials
//! are taken from the per-user cache when the request is routed to
//! `primary` ([`crate::credentials::per_user::PrimaryAuth::for_caller`]).
//! Revocations reach every replica through [`invalidation`].

pub mod invalidation;
pub mod keys;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{AuthFailure, GatewayError};
use crate::state::AppState;
use crate::store::api_keys::KeyOwner;

/// Who made an authenticated `/v1` request; inserted in the request extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Proxy mode: the holder of `PROXY_API_KEY`.
    Proxy,
    /// Full deployment: the owner of a per-user API key.
    User(KeyOwner),
}

/// The SHA-256 of a key.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeyHash([u8; 32]);

impl std::fmt::Debug for ApiKeyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKeyHash(***)")
    }
}

impl ApiKeyHash {
    pub fn of(key: &str) -> Self {
        ApiKeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// Constant-time comparison of the hash of `presented` with this hash.
    pub fn matches(&self, presented: &str) -> bool {
        let candidate: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        bool::from(self.0.ct_eq(&candidate))
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

/// Middleware for `/v1/*` in proxy mode.
pub async fn require_proxy_key(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, GatewayError> {
    let Some(expected) = state.proxy_key_hash() else {
        // Proxy mode always has a key (config validation); fail closed anyway.
        return Err(GatewayError::Config(
            "PROXY_API_KEY is not configured".into(),
        ));
    };
    check(request.headers(), expected).map_err(GatewayError::Auth)?;
    request.extensions_mut().insert(Caller::Proxy);
    Ok(next.run(request).await)
}

/// Whether a `/v1` path (seen inside the nested router, or whole) is a
/// chat call, the calls recorded as usage.
pub fn is_chat_path(path: &str) -> bool {
    path.ends_with("/chat/completions") || path.ends_with("/messages")
}

/// `/v1/*` in full deployment, after the setup check: the per-user key of
/// the request (see the module doc). Keys that do not have the shape of an
/// issued key are refused without a lookup.
pub async fn require_user_key(
    app: &AppState,
    mut request: Request,
    next: Next,
) -> Result<Response, GatewayError> {
    let store = app.store()?;
    let hashes: Vec<Option<keys::KeyHash>> = presented_keys(request.headers())
        .map(|k| keys::well_formed(k).then(|| keys::hash(k)))
        .collect();
    let mut owner = None;
    for hash in hashes.iter().flatten() {
        owner = app.key_cache().lookup(store, *hash).await?;
        if owner.is_some() {
            break;
        }
    }
    let owner = match (hashes.is_empty(), owner) {
        (_, Some(owner)) => owner,
        (true, None) => return Err(GatewayError::Auth(AuthFailure::MissingKey)),
        (false, None) => return Err(GatewayError::Auth(AuthFailure::InvalidKey)),
    };
    let chat = is_chat_path(request.uri().path());
    let ticket = app.usage_sink().open(owner, chat);
    request.extensions_mut().insert(Caller::User(owner));
    request.extensions_mut().insert(ticket.clone());
    let span = tracing::info_span!("caller", user_id = %owner.user_id, key_id = %owner.key_id);
    let response = tracing::Instrument::instrument(next.run(request), span).await;
    ticket.respond(response.status().as_u16());
    Ok(response)
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
    fn chat_paths() {
        assert!(is_chat_path("/chat/completions"));
        assert!(is_chat_path("/v1/messages"));
        assert!(!is_chat_path("/messages/count_tokens"));
        assert!(!is_chat_path("/models"));
    }

    #[test]
    fn the_hash_does_not_print() {
        assert_eq!(format!("{:?}", ApiKeyHash::of("k")), "ApiKeyHash(***)");
    }
}
