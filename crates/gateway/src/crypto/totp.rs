//! TOTP (RFC 6238): HMAC-SHA-1, 6 digits, 30-second steps, accepting the
//! previous and the next step as well (one step of clock skew).
//!
//! [`matching_step`] returns the time step a code belongs to; the caller
//! stores it and refuses codes of that step or earlier, so each code is
//! accepted once only (the store does that atomically).

use std::fmt;

use subtle::ConstantTimeEq as _;
use totp_rs::{Algorithm, TOTP};

/// Seconds per step.
pub const STEP_SECS: u64 = 30;
/// Digits per code.
pub const DIGITS: usize = 6;
/// Issuer shown in authenticator apps.
pub const ISSUER: &str = "Chat Gateway";
/// Bytes of a generated secret (160 bits, RFC 4226's recommendation).
const SECRET_BYTES: usize = 20;

/// A TOTP shared secret. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct TotpSecret(Vec<u8>);

impl fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TotpSecret(***)")
    }
}

impl TotpSecret {
    /// A new random secret.
    pub fn generate() -> Self {
        let mut bytes = vec![0u8; SECRET_BYTES];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut bytes);
        TotpSecret(bytes)
    }

    /// A secret from its raw bytes (as decrypted from the store).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        TotpSecret(bytes)
    }

    /// The raw bytes (to encrypt for the store).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Parse base32 (RFC 4648, upper or lower case, padding and spaces allowed).
    pub fn from_base32(text: &str) -> Option<Self> {
        let cleaned: String = text
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '=')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if cleaned.is_empty() {
            return None;
        }
        let bytes = totp_rs::Secret::Encoded(cleaned).to_bytes().ok()?;
        (!bytes.is_empty()).then_some(TotpSecret(bytes))
    }

    /// The secret as unpadded base32, as authenticator apps take it.
    pub fn to_base32(&self) -> String {
        match totp_rs::Secret::Raw(self.0.clone()).to_encoded() {
            totp_rs::Secret::Encoded(s) => s.trim_end_matches('=').to_owned(),
            totp_rs::Secret::Raw(_) => String::new(),
        }
    }

    fn totp(&self, account: &str) -> TOTP {
        // `new_unchecked`: secrets seeded by an operator may be shorter than
        // the 128 bits `TOTP::new` insists on; `:` is not allowed in labels.
        TOTP::new_unchecked(
            Algorithm::SHA1,
            DIGITS,
            1,
            STEP_SECS,
            self.0.clone(),
            Some(ISSUER.to_owned()),
            account.replace(':', "_"),
        )
    }

    /// The `otpauth://totp/...` URI for an authenticator app.
    pub fn otpauth_uri(&self, account: &str) -> String {
        self.totp(account).get_url()
    }

    /// The code of time step `step`.
    pub fn code_at_step(&self, step: u64) -> String {
        self.totp("").generate(step.saturating_mul(STEP_SECS))
    }
}

/// The step of `now_unix` (seconds since the epoch).
pub fn step_of(now_unix: u64) -> u64 {
    now_unix / STEP_SECS
}

/// Whether `code` is a plausible TOTP code (six ASCII digits).
pub fn looks_like_code(code: &str) -> bool {
    code.len() == DIGITS && code.bytes().all(|b| b.is_ascii_digit())
}

/// The step (previous, current or next) whose code is `code`, if any.
/// Every candidate is compared in constant time.
pub fn matching_step(secret: &TotpSecret, code: &str, now_unix: u64) -> Option<u64> {
    if !looks_like_code(code) {
        return None;
    }
    let current = step_of(now_unix);
    let mut found = None;
    for step in [current.saturating_sub(1), current, current + 1] {
        let expected = secret.code_at_step(step);
        if bool::from(expected.as_bytes().ct_eq(code.as_bytes())) && found.is_none() {
            found = Some(step);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B: the SHA-1 secret "12345678901234567890".
    fn rfc_secret() -> TotpSecret {
        TotpSecret(b"12345678901234567890".to_vec())
    }

    #[test]
    fn rfc_6238_vectors_truncated_to_six_digits() {
        let s = rfc_secret();
        // 8-digit vectors 94287082, 07081804, 14050471, 89005924, 69279037
        // -> their last 6 digits.
        assert_eq!(s.code_at_step(step_of(59)), "287082");
        assert_eq!(s.code_at_step(step_of(1_111_111_109)), "081804");
        assert_eq!(s.code_at_step(step_of(1_111_111_111)), "050471");
        assert_eq!(s.code_at_step(step_of(1_234_567_890)), "005924");
        assert_eq!(s.code_at_step(step_of(2_000_000_000)), "279037");
    }

    #[test]
    fn one_step_of_skew_each_way() {
        let s = TotpSecret::generate();
        let now = 1_700_000_000;
        let step = step_of(now);
        assert_eq!(matching_step(&s, &s.code_at_step(step), now), Some(step));
        assert_eq!(
            matching_step(&s, &s.code_at_step(step - 1), now),
            Some(step - 1)
        );
        assert_eq!(
            matching_step(&s, &s.code_at_step(step + 1), now),
            Some(step + 1)
        );
        let old = s.code_at_step(step - 2);
        let candidates: Vec<String> = (step - 1..=step + 1).map(|t| s.code_at_step(t)).collect();
        if !candidates.contains(&old) {
            assert_eq!(matching_step(&s, &old, now), None);
        }
        assert_eq!(matching_step(&s, "12345", now), None);
        assert_eq!(matching_step(&s, "abcdef", now), None);
    }

    #[test]
    fn base32_round_trip_and_uri() {
        let s = TotpSecret::generate();
        let b32 = s.to_base32();
        assert_eq!(b32.len(), 32);
        assert_eq!(TotpSecret::from_base32(&b32), Some(s.clone()));
        assert_eq!(
            TotpSecret::from_base32(&b32.to_ascii_lowercase()),
            Some(s.clone())
        );
        assert_eq!(TotpSecret::from_base32(""), None);
        assert_eq!(TotpSecret::from_base32("!!!"), None);
        let uri = s.otpauth_uri("alice@example.com");
        assert!(uri.starts_with("otpauth://totp/Chat%20Gateway:alice%40example.com?secret="));
        assert!(uri.contains(&format!("secret={b32}")));
        assert!(uri.contains("issuer=Chat%20Gateway"));
        assert_eq!(format!("{s:?}"), "TotpSecret(***)");
    }
}
