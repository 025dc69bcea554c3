//! The identity provider's signing keys (its JWKS), cached per `jwks_uri`.
//!
//! Keys are fetched on first use and again after an hour. A token whose `kid`
//! is not in the cached set makes one refetch (the provider rotated its keys),
//! but at most one such refetch per `refetch_interval`: a stream of tokens
//! with made-up key ids cannot turn the gateway into a JWKS hammer.
//!
//! Only RSA signature keys are kept (RS256 is what ID tokens are verified
//! with, see [`super::verify`]); other keys in the set are skipped.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use serde_json::Value;
use tokio::sync::Mutex;

use super::verify::TokenProblem;
use super::SsoError;

/// How long a fetched key set is used before it is fetched again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyCacheTiming {
    pub ttl: Duration,
    /// Least time between two refetches caused by unknown key ids.
    pub refetch_interval: Duration,
}

struct KeySet {
    keys: HashMap<String, Arc<DecodingKey>>,
    fetched: Instant,
    last_unknown_kid_refetch: Option<Instant>,
}

/// Key sets by `jwks_uri`.
pub(crate) struct KeyCache {
    sets: Mutex<HashMap<String, KeySet>>,
    timing: KeyCacheTiming,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

/// The RSA signature keys of a JWKS document, by `kid` (`""` for a key without one).
pub(crate) fn parse_key_set(body: &[u8]) -> Result<HashMap<String, Arc<DecodingKey>>, String> {
    let doc: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("no \"keys\" array")?;
    let mut out = HashMap::new();
    for key in keys {
        let text = |name: &str| key.get(name).and_then(Value::as_str);
        if text("kty") != Some("RSA") {
            continue;
        }
        if !matches!(text("use"), None | Some("sig")) {
            continue;
        }
        if !matches!(text("alg"), None | Some("RS256")) {
            continue;
        }
        let (Some(n), Some(e)) = (text("n"), text("e")) else {
            continue;
        };
        let Ok(decoding) = DecodingKey::from_rsa_components(n, e) else {
            continue;
        };
        out.insert(text("kid").unwrap_or("").to_owned(), Arc::new(decoding));
    }
    Ok(out)
}

impl KeyCache {
    pub(crate) fn new(timing: KeyCacheTiming) -> Self {
        KeyCache {
            sets: Mutex::new(HashMap::new()),
            timing,
        }
    }

    /// The key to verify a token signed with `kid` (`None`: the token names no
    /// key, accepted only when the set holds exactly one).
    pub(crate) async fn key(
        &self,
        http: &reqwest::Client,
        jwks_uri: &str,
        kid: Option<&str>,
        timeout: Duration,
    ) -> Result<Arc<DecodingKey>, SsoError> {
        // One lock for the lookup and any fetch: concurrent sign-ins wait for
        // one fetch instead of each making their own.
        let mut sets = self.sets.lock().await;
        let now = Instant::now();
        let fresh = sets
            .get(jwks_uri)
            .is_some_and(|s| now.duration_since(s.fetched) < self.timing.ttl);
        if !fresh {
            let keys = fetch(http, jwks_uri, timeout).await?;
            let previous = sets.get(jwks_uri).and_then(|s| s.last_unknown_kid_refetch);
            sets.insert(
                jwks_uri.to_owned(),
                KeySet {
                    keys,
                    fetched: now,
                    last_unknown_kid_refetch: previous,
                },
            );
        } else if let Some(set) = sets.get(jwks_uri) {
            let known = find(&set.keys, kid).is_some();
            let may_refetch = set
                .last_unknown_kid_refetch
                .is_none_or(|t| now.duration_since(t) >= self.timing.refetch_interval);
            if !known && may_refetch {
                tracing::info!(
                    jwks_uri,
                    kid,
                    "unknown signing key id: fetching the provider's keys again"
                );
                let keys = fetch(http, jwks_uri, timeout).await?;
                sets.insert(
                    jwks_uri.to_owned(),
                    KeySet {
                        keys,
                        fetched: now,
                        last_unknown_kid_refetch: Some(now),
                    },
                );
            }
        }
        sets.get(jwks_uri)
            .and_then(|s| find(&s.keys, kid))
            .ok_or(SsoError::InvalidToken(TokenProblem::UnknownKey))
    }
}

fn find(keys: &HashMap<String, Arc<DecodingKey>>, kid: Option<&str>) -> Option<Arc<DecodingKey>> {
    match kid {
        Some(kid) => keys.get(kid).cloned(),
        None if keys.len() == 1 => keys.values().next().cloned(),
        None => None,
    }
}

async fn fetch(
    http: &reqwest::Client,
    jwks_uri: &str,
    timeout: Duration,
) -> Result<HashMap<String, Arc<DecodingKey>>, SsoError> {
    let body = super::get_json_body(http, jwks_uri, timeout).await?;
    parse_key_set(&body).map_err(|e| SsoError::Unavailable(format!("JWKS at {jwks_uri}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The public half of a 2048-bit test key (modulus and exponent only).
    const N: &str = "nuTi-Q9GBbMqBxNN38zALIxRdRJu-PxRhXXrIE57G4FqY38WyMSFklyBzPA0Vqwo3NzHtxqGiB0fbh7zolMF807Jfhmo6-ig1BlYt7ROea1DOOaIOJlEgbAHScPQNltEKz2LYhKXCZ4XwAPn2EkU8pj2iN6FUOHzvFoQ-D2c9WPjUiiadOaMU3eiPEkxILk0PhCal2jwf8-kt3jRhHU2Y5YI0aoQpJzyZA6fsMrsQdXHt_EzLOkb5EnwVQcPuGO_ybBISFojfq-VJWjm-IbTtpjEQf-PCK-rQyaFhw-o7LpqbGNezIfKk1gLcCMPW7_St7498sEDaZ_krvDN1aYDbQ";

    #[test]
    fn only_rsa_signature_keys_are_kept() {
        let body = serde_json::json!({"keys": [
            {"kty": "RSA", "kid": "a", "use": "sig", "alg": "RS256", "n": N, "e": "AQAB"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": N, "e": "AQAB"},
            {"kty": "EC", "kid": "ec", "crv": "P-256", "x": "x", "y": "y"},
            {"kty": "RSA", "kid": "ps", "alg": "PS256", "n": N, "e": "AQAB"},
            {"kty": "RSA", "kid": "b", "n": N, "e": "AQAB"},
            {"kty": "RSA", "kid": "broken"},
        ]})
        .to_string();
        let keys = parse_key_set(body.as_bytes()).unwrap();
        let mut kids: Vec<_> = keys.keys().cloned().collect();
        kids.sort();
        assert_eq!(kids, ["a", "b"]);
        assert!(parse_key_set(b"[]").is_err());
        assert!(parse_key_set(b"{\"keys\": 1}").is_err());
    }

    #[test]
    fn a_token_without_kid_needs_a_single_key() {
        let one = parse_key_set(
            serde_json::json!({"keys": [{"kty": "RSA", "kid": "a", "n": N, "e": "AQAB"}]})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        assert!(find(&one, None).is_some());
        assert!(find(&one, Some("a")).is_some());
        assert!(find(&one, Some("z")).is_none());
        let mut two = one.clone();
        two.insert("b".into(), one["a"].clone());
        assert!(find(&two, None).is_none());
    }
}
