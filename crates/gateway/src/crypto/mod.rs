//! The cryptography of full deployment, each piece behind a small API:
//!
//! - [`cipher`]: AES-256-GCM for secrets at rest (`CONFIG_ENCRYPTION_KEY`),
//!   versioned `v1:` values bound to the place they are stored;
//! - [`key_file`]: where the key comes from (environment, or a generated
//!   `$DATA_DIR/encryption.key`, mode 0600);
//! - [`password`]: Argon2id hashing and the password rules;
//! - [`totp`]: RFC 6238 codes (SHA-1, 6 digits, 30 s, one step of skew);
//! - [`random`]: session and CSRF tokens, recovery codes, SHA-256 digests.
//!
//! Nothing here touches the store or HTTP; errors are [`CryptoError`].

pub mod cipher;
pub mod key_file;
pub mod password;
pub mod random;
pub mod totp;

pub use cipher::{Cipher, EncryptionKey};
pub use password::Passwords;
pub use totp::TotpSecret;

/// A cryptographic operation failed. Messages never contain key material.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    /// The configured or stored key is not 32 bytes of base64 or hex.
    #[error("{0}")]
    BadKey(String),
    /// A stored value could not be decrypted: wrong key, tampering, or a
    /// value moved from another row.
    #[error("a stored secret cannot be decrypted with this key")]
    Decrypt,
    /// A stored value is not in a format this build knows.
    #[error("a stored secret has an unknown format")]
    Format,
    /// Encryption failed (plaintext too long for AES-GCM).
    #[error("encryption failed")]
    Encrypt,
    /// Password hashing failed or a stored hash is malformed.
    #[error("password hashing: {0}")]
    Password(String),
    /// Reading or writing the key file.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}
