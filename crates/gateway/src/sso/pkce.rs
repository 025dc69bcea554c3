//! The random values of one authorization request (RFC 7636 and OpenID
//! Connect Core 3.1.2.1): the PKCE `code_verifier` and its S256
//! `code_challenge`, the `state`, the `nonce`, and the browser binding.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

/// 32 random bytes as URL-safe base64 without padding (43 characters, 256
/// bits): long enough for every value here, and inside the 43..=128
/// unreserved characters RFC 7636 4.1 asks of a verifier.
pub(crate) fn random_value() -> String {
    let mut buf = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// `BASE64URL(SHA256(verifier))` (RFC 7636 4.2, method `S256`).
pub(crate) fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Lower-case hex SHA-256, for values kept only as a digest (the binding).
pub(crate) fn digest_hex(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The values of one sign-in attempt.
#[derive(Debug, Clone)]
pub(crate) struct FlowSecrets {
    pub code_verifier: String,
    pub state: String,
    pub nonce: String,
    /// Goes to the browser in a cookie; the pending entry keeps its digest.
    pub binding: String,
}

impl FlowSecrets {
    pub(crate) fn generate() -> Self {
        FlowSecrets {
            code_verifier: random_value(),
            state: random_value(),
            nonce: random_value(),
            binding: random_value(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn values_are_random_unreserved_and_long_enough() {
        let a = FlowSecrets::generate();
        let b = FlowSecrets::generate();
        assert_ne!(a.state, b.state);
        assert_ne!(a.code_verifier, a.nonce);
        assert_eq!(a.code_verifier.len(), 43);
        assert!(a
            .code_verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    }

    #[test]
    fn digest_is_lower_hex_sha256() {
        assert_eq!(
            digest_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
