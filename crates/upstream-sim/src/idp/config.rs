//! What the simulated identity provider does, changeable while it runs with
//! [`crate::SimHandle::update_idp`]: the registered client, the person who
//! "signs in" at `/authorize`, errors to answer with, and how the ID token is
//! bent to produce forged, expired or otherwise wrong tokens for tests.

use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// The simulated provider's behaviour. `Default` is a well-behaved provider
/// with one registered client and a verified user `user@example.com`.
#[derive(Debug, Clone, PartialEq)]
pub struct IdpConfig {
    /// The registered client's id (`aud` of its ID tokens).
    pub client_id: String,
    /// The registered client's secret (`client_secret_post` or `client_secret_basic`).
    pub client_secret: String,
    /// Redirect URIs accepted at `/authorize` and `/token`; empty accepts any.
    pub redirect_uris: Vec<String>,
    /// Who signs in: `/authorize` approves at once, as this person.
    pub user: IdpUser,
    /// `/authorize` redirects back with this error instead of a code.
    pub authorize_error: Option<OAuthError>,
    /// `/token` answers 400 with this error instead of tokens.
    pub token_error: Option<OAuthError>,
    /// Every endpoint answers 503 (an unreachable provider).
    pub unavailable: bool,
    /// How long an authorization code can be exchanged.
    pub code_ttl: Duration,
    /// Changes to the ID token the next exchanges issue.
    pub tweaks: IdTokenTweaks,
}

impl Default for IdpConfig {
    fn default() -> Self {
        IdpConfig {
            client_id: "sim-idp-client.apps.example.com".to_owned(),
            client_secret: "sim-idp-client-secret".to_owned(),
            redirect_uris: Vec::new(),
            user: IdpUser::new("user@example.com", true),
            authorize_error: None,
            token_error: None,
            unavailable: false,
            code_ttl: Duration::from_secs(600),
            tweaks: IdTokenTweaks::default(),
        }
    }
}

/// The person who signs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpUser {
    /// `sub`: stable per email unless set explicitly.
    pub subject: String,
    /// `email`; `None` leaves the claim out.
    pub email: Option<String>,
    /// `email_verified`; `None` leaves the claim out.
    pub email_verified: Option<bool>,
    /// `name`; `None` leaves the claim out.
    pub name: Option<String>,
}

impl IdpUser {
    /// A user whose subject is derived from the email (the same email always
    /// gets the same subject, as with a real provider).
    pub fn new(email: &str, email_verified: bool) -> Self {
        let local = email.split('@').next().unwrap_or(email);
        IdpUser {
            subject: subject_for(email),
            email: Some(email.to_owned()),
            email_verified: Some(email_verified),
            name: Some(format!("Sim {local}")),
        }
    }
}

/// The subject the simulator gives an email: 21 decimal digits, like the
/// numeric subjects of the large consumer providers.
pub fn subject_for(email: &str) -> String {
    let digest = Sha256::digest(email.trim().to_ascii_lowercase().as_bytes());
    let mut n: u128 = 0;
    for b in digest.iter().take(16) {
        n = (n << 8) | u128::from(*b);
    }
    format!("1{:020}", n % 100_000_000_000_000_000_000)
}

/// An OAuth error (`error`, `error_description`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub error: String,
    pub description: String,
}

impl OAuthError {
    pub fn new(error: &str, description: &str) -> Self {
        OAuthError {
            error: error.to_owned(),
            description: description.to_owned(),
        }
    }
}

/// The `nonce` claim of issued ID tokens.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NonceClaim {
    /// The nonce the client sent to `/authorize` (left out when it sent none).
    #[default]
    Echo,
    /// This value instead.
    Fixed(String),
    /// No `nonce` claim.
    Omit,
}

/// How an ID token is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Signing {
    /// RS256 with the active published key, its `kid` in the header.
    #[default]
    Active,
    /// The active key's `kid`, but signed with the other (unpublished) key: a forgery.
    ForeignKey,
    /// Signed with the active key but with a `kid` the JWKS never lists.
    UnknownKid,
    /// Correctly signed, then the claims changed (the `email` replaced).
    Tampered,
    /// `alg: none` and an empty signature.
    NoneAlg,
    /// `alg: HS256` with a made-up MAC (an algorithm-confusion attempt).
    Hs256,
}

/// Changes applied to the ID tokens the simulator issues.
#[derive(Debug, Clone, PartialEq)]
pub struct IdTokenTweaks {
    /// Replaces `iss` (default: the issuer URL).
    pub issuer: Option<String>,
    /// Replaces `aud` (default: the client id); a string or an array.
    pub audience: Option<Value>,
    /// Adds `azp`.
    pub azp: Option<String>,
    pub nonce: NonceClaim,
    /// `exp` = now + this many seconds; negative issues an expired token.
    pub lifetime_secs: i64,
    /// `iat` = now + this many seconds (negative: issued in the past).
    pub issued_at_offset_secs: i64,
    /// Claims set last, overriding the others; `null` removes a claim.
    pub extra_claims: Map<String, Value>,
    pub signing: Signing,
}

impl Default for IdTokenTweaks {
    fn default() -> Self {
        IdTokenTweaks {
            issuer: None,
            audience: None,
            azp: None,
            nonce: NonceClaim::Echo,
            lifetime_secs: 3600,
            issued_at_offset_secs: 0,
            extra_claims: Map::new(),
            signing: Signing::Active,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_stable_per_email_and_distinct() {
        assert_eq!(subject_for("a@example.com"), subject_for("A@Example.com "));
        assert_ne!(subject_for("a@example.com"), subject_for("b@example.com"));
        let s = subject_for("a@example.com");
        assert_eq!(s.len(), 21);
        assert!(s.bytes().all(|b| b.is_ascii_digit()));
    }

    #[test]
    fn a_new_user_has_every_claim() {
        let u = IdpUser::new("ann@corp.example", false);
        assert_eq!(u.email.as_deref(), Some("ann@corp.example"));
        assert_eq!(u.email_verified, Some(false));
        assert_eq!(u.name.as_deref(), Some("Sim ann"));
        assert_eq!(u.subject, subject_for("ann@corp.example"));
    }
}
