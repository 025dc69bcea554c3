//! Random values from the operating system's generator, and digests.
//!
//! - [`token`]: URL-safe base64 of random bytes (CSRF tokens, setup codes);
//! - [`recovery_codes`]: 2FA recovery codes, 10 characters of `A-Z0-9`
//!   (about 51 bits each); [`normalize_recovery_code`] accepts what a person
//!   types (lower case, spaces, hyphens);
//! - [`sha256_hex`]: the digest stored for recovery codes.

use base64::Engine as _;
use rand::{Rng as _, RngCore as _};
use sha2::{Digest as _, Sha256};

/// Characters of a recovery code.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Length of a recovery code.
pub const RECOVERY_CODE_LEN: usize = 10;

/// `bytes` random bytes as URL-safe base64 without padding.
pub fn token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

/// `n` distinct recovery codes.
pub fn recovery_codes(n: usize) -> Vec<String> {
    let mut rng = rand::rngs::OsRng;
    let mut codes: Vec<String> = Vec::with_capacity(n);
    while codes.len() < n {
        let code: String = (0..RECOVERY_CODE_LEN)
            .map(|_| char::from(CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())]))
            .collect();
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    codes
}

/// A typed recovery code in its stored form: upper case, spaces and hyphens
/// removed.
pub fn normalize_recovery_code(input: &str) -> String {
    input
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Lower-case hex SHA-256 of `value`.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_url_safe() {
        let a = token(32);
        assert_eq!(a.len(), 43);
        assert_ne!(a, token(32));
        assert!(a
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }

    #[test]
    fn eight_distinct_alphanumeric_codes() {
        let codes = recovery_codes(8);
        assert_eq!(codes.len(), 8);
        for c in &codes {
            assert_eq!(c.len(), RECOVERY_CODE_LEN);
            assert!(c.bytes().all(|b| CODE_ALPHABET.contains(&b)));
        }
        let mut sorted = codes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 8);
    }

    #[test]
    fn typed_codes_normalise() {
        assert_eq!(normalize_recovery_code(" ab12c-de34f "), "AB12CDE34F");
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
