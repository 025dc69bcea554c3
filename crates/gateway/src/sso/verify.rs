//! ID-token verification (OpenID Connect Core 3.1.3.7):
//!
//! 1. the header's `alg` is `RS256` (the algorithm OpenID Connect requires
//!    providers to support; `none`, HMAC and others are refused, so a token
//!    cannot pick a weaker check) and its `kid` names a key of the provider's
//!    JWKS ([`super::jwks`]);
//! 2. the signature verifies with that key;
//! 3. `iss` is exactly the issuer of the discovery document;
//! 4. `aud` contains the client id; with several audiences `azp` must be
//!    present, and whenever `azp` is present it must be the client id;
//! 5. `exp` is in the future and `iat` not in the future, both with a small
//!    leeway for clock skew, and `iat` no older than `max_age`;
//! 6. `nonce` equals the nonce of this sign-in attempt (replay protection);
//! 7. `email` is present and `email_verified` is true (a JSON `true` or the
//!    string `"true"`, which some providers send).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;

use super::SsoError;

/// Why an ID token was refused (logged; the person sees `sso_token_invalid`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenProblem {
    #[error("the token is not a well-formed JWS")]
    Malformed,
    #[error("the token is not signed with RS256")]
    Algorithm,
    #[error("the token names a key the provider does not publish")]
    UnknownKey,
    #[error("the signature does not verify")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token was issued in the future or too long ago")]
    IssuedAt,
    #[error("the issuer is not the configured provider")]
    Issuer,
    #[error("the token is not issued to this client (aud)")]
    Audience,
    #[error("the token's authorized party (azp) is not this client")]
    AuthorizedParty,
    #[error("the nonce does not match the sign-in attempt")]
    Nonce,
    #[error("the token has no {0} claim")]
    MissingClaim(String),
}

/// What the token must say.
#[derive(Debug, Clone)]
pub(crate) struct Expectations<'a> {
    /// The `issuer` of the discovery document.
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
    /// Clock skew tolerated on `exp` and `iat`.
    pub leeway: Duration,
    /// Oldest `iat` accepted.
    pub max_age: Duration,
}

/// The person the provider vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VerifiedIdentity {
    /// `sub`: the provider's stable id of the person.
    pub subject: String,
    /// The verified email address (trimmed).
    pub email: String,
    pub name: Option<String>,
}

impl VerifiedIdentity {
    /// The lower-case domain of the email (after the last `@`).
    pub(crate) fn email_domain(&self) -> String {
        self.email
            .rsplit_once('@')
            .map(|(_, d)| d.to_ascii_lowercase())
            .unwrap_or_default()
    }
}

/// The header fields the verifier needs, read before any key is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenHeader {
    pub kid: Option<String>,
}

/// Read the header and refuse any algorithm but RS256.
pub(crate) fn read_header(token: &str) -> Result<TokenHeader, SsoError> {
    let invalid = |p| SsoError::InvalidToken(p);
    let mut parts = token.split('.');
    let (Some(head), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid(TokenProblem::Malformed));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(head)
        .map_err(|_| invalid(TokenProblem::Malformed))?;
    let header: Value =
        serde_json::from_slice(&bytes).map_err(|_| invalid(TokenProblem::Malformed))?;
    if header.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err(invalid(TokenProblem::Algorithm));
    }
    Ok(TokenHeader {
        kid: header.get("kid").and_then(Value::as_str).map(str::to_owned),
    })
}

#[derive(Debug, Deserialize)]
struct Claims {
    sub: Option<String>,
    aud: Option<Value>,
    azp: Option<String>,
    iat: Option<i64>,
    nonce: Option<String>,
    email: Option<String>,
    email_verified: Option<Value>,
    name: Option<String>,
}

/// Verify `token` with `key` against `expect` (the header was checked by
/// [`read_header`], which also chose the key).
pub(crate) fn verify(
    token: &str,
    key: &DecodingKey,
    expect: &Expectations<'_>,
) -> Result<VerifiedIdentity, SsoError> {
    let invalid = SsoError::InvalidToken;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = expect.leeway.as_secs();
    validation.set_issuer(&[expect.issuer]);
    validation.set_audience(&[expect.client_id]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let data = jsonwebtoken::decode::<Claims>(token, key, &validation).map_err(|e| {
        invalid(match e.kind() {
            ErrorKind::InvalidSignature => TokenProblem::Signature,
            ErrorKind::ExpiredSignature => TokenProblem::Expired,
            ErrorKind::InvalidIssuer => TokenProblem::Issuer,
            ErrorKind::InvalidAudience => TokenProblem::Audience,
            ErrorKind::InvalidAlgorithm => TokenProblem::Algorithm,
            ErrorKind::MissingRequiredClaim(c) => TokenProblem::MissingClaim(c.clone()),
            _ => TokenProblem::Malformed,
        })
    })?;
    let claims = data.claims;

    let several_audiences = matches!(&claims.aud, Some(Value::Array(a)) if a.len() > 1);
    match claims.azp.as_deref() {
        Some(azp) if azp != expect.client_id => return Err(invalid(TokenProblem::AuthorizedParty)),
        None if several_audiences => return Err(invalid(TokenProblem::AuthorizedParty)),
        _ => {}
    }

    let iat = claims
        .iat
        .ok_or_else(|| invalid(TokenProblem::MissingClaim("iat".into())))?;
    let now = unix_now();
    let leeway = secs(expect.leeway);
    let oldest = now
        .saturating_sub(secs(expect.max_age))
        .saturating_sub(leeway);
    if iat > now.saturating_add(leeway) || iat < oldest {
        return Err(invalid(TokenProblem::IssuedAt));
    }

    match claims.nonce.as_deref() {
        Some(n) if constant_time_eq(n.as_bytes(), expect.nonce.as_bytes()) => {}
        Some(_) => return Err(invalid(TokenProblem::Nonce)),
        None => return Err(invalid(TokenProblem::MissingClaim("nonce".into()))),
    }

    let subject = claims
        .sub
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(TokenProblem::MissingClaim("sub".into())))?;
    let verified = match &claims.email_verified {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    };
    let email = claims
        .email
        .map(|e| e.trim().to_owned())
        .filter(|e| is_plausible_email(e));
    let Some(email) = email.filter(|_| verified) else {
        return Err(SsoError::EmailNotVerified);
    };
    Ok(VerifiedIdentity {
        subject,
        email,
        name: claims.name.filter(|n| !n.trim().is_empty()),
    })
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(secs)
        .unwrap_or(0)
}

/// One `@` with something on both sides, no spaces or control characters.
fn is_plausible_email(e: &str) -> bool {
    match e.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !e.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
