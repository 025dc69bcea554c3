//! AES-256-GCM for secrets at rest.
//!
//! A stored value is `v1:` followed by base64 (standard, padded) of
//! `nonce (12 bytes) || ciphertext || tag (16 bytes)`. Every value gets a fresh
//! random 96-bit nonce. The caller names where the value lives (`context`,
//! e.g. `users.totp_secret:<user id>`); it is authenticated as associated
//! data, so a ciphertext copied into another row or column does not decrypt.
//! The version prefix lets a later build change the scheme and still read
//! old values.

use std::fmt;
use std::sync::Arc;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use rand::RngCore as _;

use super::CryptoError;
use crate::config::Secret;

const PREFIX: &str = "v1:";
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// A 32-byte AES-256 key. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct EncryptionKey([u8; 32]);

impl fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EncryptionKey(***)")
    }
}

impl EncryptionKey {
    /// Parse 64 hex characters, or base64 (standard or URL-safe, padded or
    /// not) of exactly 32 bytes. Surrounding whitespace is ignored.
    pub fn parse(raw: &str) -> Result<Self, CryptoError> {
        let raw = raw.trim();
        let bytes = if raw.len() == 64 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(raw).ok()
        } else {
            let engines = [
                &base64::engine::general_purpose::STANDARD,
                &base64::engine::general_purpose::STANDARD_NO_PAD,
                &base64::engine::general_purpose::URL_SAFE,
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ];
            engines.iter().find_map(|e| e.decode(raw).ok())
        };
        match bytes.and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok()) {
            Some(key) => Ok(EncryptionKey(key)),
            None => Err(CryptoError::BadKey(
                "expected 32 bytes as base64 or as 64 hex characters".into(),
            )),
        }
    }

    /// A new random key from the operating system's generator.
    pub fn generate() -> Self {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        EncryptionKey(key)
    }

    /// The key as standard padded base64 (the key file's format).
    pub fn to_base64(&self) -> Secret {
        Secret::new(base64::engine::general_purpose::STANDARD.encode(self.0))
    }
}

/// Encrypts and decrypts stored secrets; cheap to clone.
#[derive(Clone)]
pub struct Cipher {
    aead: Arc<Aes256Gcm>,
}

impl fmt::Debug for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cipher(***)")
    }
}

impl Cipher {
    pub fn new(key: &EncryptionKey) -> Self {
        Cipher {
            aead: Arc::new(Aes256Gcm::new(&key.0.into())),
        }
    }

    /// Encrypt `plaintext` for storage at `context`.
    pub fn encrypt(&self, plaintext: &[u8], context: &str) -> Result<String, CryptoError> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let sealed = self
            .aead
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| CryptoError::Encrypt)?;
        let mut raw = Vec::with_capacity(NONCE_LEN + sealed.len());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&sealed);
        let mut out = String::with_capacity(PREFIX.len() + raw.len() * 4 / 3 + 4);
        out.push_str(PREFIX);
        base64::engine::general_purpose::STANDARD.encode_string(&raw, &mut out);
        Ok(out)
    }

    /// Decrypt a value written by [`Cipher::encrypt`] with the same `context`.
    pub fn decrypt(&self, stored: &str, context: &str) -> Result<Vec<u8>, CryptoError> {
        let body = stored.strip_prefix(PREFIX).ok_or(CryptoError::Format)?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|_| CryptoError::Format)?;
        if raw.len() < NONCE_LEN + TAG_LEN {
            return Err(CryptoError::Format);
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        self.aead
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| CryptoError::Decrypt)
    }

    /// Encrypt a text secret.
    pub fn encrypt_secret(&self, value: &Secret, context: &str) -> Result<String, CryptoError> {
        self.encrypt(value.expose().as_bytes(), context)
    }

    /// Decrypt a text secret.
    pub fn decrypt_secret(&self, stored: &str, context: &str) -> Result<Secret, CryptoError> {
        let bytes = self.decrypt(stored, context)?;
        String::from_utf8(bytes)
            .map(Secret::new)
            .map_err(|_| CryptoError::Format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cipher() -> Cipher {
        Cipher::new(&EncryptionKey::generate())
    }

    #[test]
    fn round_trip_with_a_fresh_nonce_each_time() {
        let c = cipher();
        let a = c.encrypt(b"hunter2", "config:x").unwrap();
        let b = c.encrypt(b"hunter2", "config:x").unwrap();
        assert!(a.starts_with("v1:"));
        assert_ne!(a, b, "the nonce is random per value");
        assert!(!a.contains("hunter2"));
        assert_eq!(c.decrypt(&a, "config:x").unwrap(), b"hunter2");
        assert_eq!(c.decrypt(&b, "config:x").unwrap(), b"hunter2");
        // nonce (12) + plaintext (7) + tag (16) = 35 bytes of base64.
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&a[3..])
            .unwrap();
        assert_eq!(raw.len(), 35);
    }

    #[test]
    fn another_key_or_another_place_does_not_decrypt() {
        let c = cipher();
        let stored = c.encrypt(b"secret", "users.totp_secret:1").unwrap();
        assert!(matches!(
            cipher().decrypt(&stored, "users.totp_secret:1"),
            Err(CryptoError::Decrypt)
        ));
        assert!(matches!(
            c.decrypt(&stored, "users.totp_secret:2"),
            Err(CryptoError::Decrypt)
        ));
    }

    #[test]
    fn tampering_and_garbage_are_errors_not_panics() {
        let c = cipher();
        let stored = c.encrypt(b"secret", "ctx").unwrap();
        let mut raw = base64::engine::general_purpose::STANDARD
            .decode(&stored[3..])
            .unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let flipped = format!(
            "v1:{}",
            base64::engine::general_purpose::STANDARD.encode(&raw)
        );
        assert!(matches!(
            c.decrypt(&flipped, "ctx"),
            Err(CryptoError::Decrypt)
        ));
        for bad in ["", "v1:", "v1:!!!", "v2:AAAA", "secret", "v1:AAAA"] {
            assert!(
                matches!(c.decrypt(bad, "ctx"), Err(CryptoError::Format)),
                "{bad}"
            );
        }
    }

    #[test]
    fn key_forms() {
        let hex_key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let k = EncryptionKey::parse(hex_key).unwrap();
        let b64 = k.to_base64();
        assert_eq!(EncryptionKey::parse(b64.expose()).unwrap(), k);
        assert_eq!(
            EncryptionKey::parse(&format!("  {}\n", b64.expose())).unwrap(),
            k
        );
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xfbu8; 32]);
        assert!(EncryptionKey::parse(&url_safe).is_ok());
        for bad in ["", "abc", &hex_key[..62], &"g".repeat(64)] {
            assert!(EncryptionKey::parse(bad).is_err(), "{bad}");
        }
        let short = base64::engine::general_purpose::STANDARD.encode([1u8; 16]);
        assert!(EncryptionKey::parse(&short).is_err());
        assert_eq!(format!("{k:?}"), "EncryptionKey(***)");
        assert_eq!(format!("{:?}", Cipher::new(&k)), "Cipher(***)");
    }
}
