//! PKCE (RFC 7636) as an authorization server checks it: the S256 challenge
//! of a verifier, and the shapes a verifier and a S256 challenge must have.
//! Used by every simulated authorization server (the identity provider, the
//! messages vendor's OAuth).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

/// `BASE64URL(SHA256(verifier))`, RFC 7636 4.2.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// RFC 7636 4.1: 43 to 128 unreserved characters.
pub fn is_valid_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A S256 challenge is the 43-character base64url form of 32 bytes.
pub fn is_s256_challenge(c: &str) -> bool {
    c.len() == 43 && URL_SAFE_NO_PAD.decode(c).is_ok_and(|b| b.len() == 32)
}

/// Whether `verifier` is well formed and its S256 challenge is `challenge`.
pub fn verifies(verifier: &str, challenge: &str) -> bool {
    is_valid_verifier(verifier) && s256(verifier) == challenge
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_example() {
        // RFC 7636 Appendix B: this verifier's S256 challenge.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(verifies(verifier, challenge));
        assert!(is_s256_challenge(challenge));
        assert!(!verifies("short", &s256("short")));
        assert!(!is_s256_challenge("plain-text-challenge"));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(!is_valid_verifier(&format!("{}!", "a".repeat(43))));
    }
}
