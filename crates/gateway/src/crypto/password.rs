//! Argon2id password hashes (PHC strings) and the password rules.
//!
//! Hashing runs on the blocking pool: one hash costs tens of milliseconds of
//! CPU and 19 MiB by default. [`Passwords::verify`] with no stored hash (an
//! unknown email, an SSO-only account) verifies against a fixed dummy hash of
//! the same cost, so the answer time does not tell whether an account exists.
//!
//! Rules for a new password: 12 to 128 characters, not only whitespace, and
//! not the account's email address, not a commonly used or breached
//! password. Length matters more than composition rules (NIST SP 800-63B),
//! so there are none of the latter.
//!
//! The breached-password check is offline: `data/common-passwords.txt` is
//! compiled into the binary. It holds the entries of zxcvbn's list of the
//! most common passwords (MIT, `data/LICENSE-zxcvbn.txt`) that the length
//! rule alone would let through (12 to 128 characters), lowercased, sorted
//! and unique; shorter ones are refused by length already. The check is
//! case-insensitive and ignores surrounding whitespace.

use std::sync::{Arc, LazyLock};

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

use super::CryptoError;
use crate::config::Secret;

/// Fewest characters of a new password.
pub const MIN_LEN: usize = 12;
/// Most characters of a new password (bounds the hashing work per request).
pub const MAX_LEN: usize = 128;

/// Hashes and verifies passwords; cheap to clone.
#[derive(Clone)]
pub struct Passwords {
    inner: Arc<Inner>,
}

struct Inner {
    argon: Argon2<'static>,
    /// A hash of a random password, made on first need with the same cost.
    dummy: tokio::sync::OnceCell<String>,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passwords").finish_non_exhaustive()
    }
}

impl Passwords {
    /// Argon2id v1.3 with `memory_kib` KiB (at least 8), `iterations`
    /// passes (at least 1) and one lane.
    pub fn new(memory_kib: u32, iterations: u32) -> Self {
        let params = Params::new(
            memory_kib.max(Params::MIN_M_COST),
            iterations.max(1),
            1,
            None,
        )
        .unwrap_or_default();
        Passwords {
            inner: Arc::new(Inner {
                argon: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
                dummy: tokio::sync::OnceCell::new(),
            }),
        }
    }

    /// The PHC string of `password` with a fresh random salt.
    pub async fn hash(&self, password: &Secret) -> Result<String, CryptoError> {
        let argon = self.inner.argon.clone();
        let password = password.clone();
        tokio::task::spawn_blocking(move || {
            let salt = SaltString::generate(&mut rand::rngs::OsRng);
            argon
                .hash_password(password.expose().as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| CryptoError::Password(e.to_string()))
        })
        .await
        .map_err(|e| CryptoError::Password(format!("hashing task failed: {e}")))?
    }

    /// Whether `password` matches `stored`; with `stored == None` the dummy
    /// hash is checked (same cost) and the answer is false.
    pub async fn verify(
        &self,
        password: &Secret,
        stored: Option<&str>,
    ) -> Result<bool, CryptoError> {
        let (phc, real) = match stored {
            Some(phc) => (phc.to_owned(), true),
            None => (self.dummy().await?.to_owned(), false),
        };
        let argon = self.inner.argon.clone();
        let password = password.clone();
        let matched = tokio::task::spawn_blocking(move || {
            let parsed =
                PasswordHash::new(&phc).map_err(|e| CryptoError::Password(e.to_string()))?;
            Ok::<_, CryptoError>(
                argon
                    .verify_password(password.expose().as_bytes(), &parsed)
                    .is_ok(),
            )
        })
        .await
        .map_err(|e| CryptoError::Password(format!("verification task failed: {e}")))??;
        Ok(matched && real)
    }

    /// Make the dummy hash now, so the first unknown-email sign-in is not slower.
    pub async fn warm_up(&self) -> Result<(), CryptoError> {
        self.dummy().await.map(|_| ())
    }

    async fn dummy(&self) -> Result<&str, CryptoError> {
        self.inner
            .dummy
            .get_or_try_init(|| async {
                let random = Secret::new(super::random::token(24));
                self.hash(&random).await
            })
            .await
            .map(String::as_str)
    }
}

/// Check a new password against the rules; the error says which rule failed.
pub fn check_rules(password: &str, email: &str) -> Result<(), String> {
    let chars = password.chars().count();
    if chars < MIN_LEN {
        return Err(format!("password must have at least {MIN_LEN} characters"));
    }
    if chars > MAX_LEN {
        return Err(format!("password must have at most {MAX_LEN} characters"));
    }
    if password.trim().is_empty() {
        return Err("password must not be only whitespace".into());
    }
    if password.trim().eq_ignore_ascii_case(email.trim()) {
        return Err("password must not be the email address".into());
    }
    if is_common(password) {
        return Err("password is on a list of common or breached passwords; choose another".into());
    }
    Ok(())
}

/// The common-password list, sorted (checked by a test), one entry a line.
static COMMON: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    include_str!("../../data/common-passwords.txt")
        .lines()
        .collect()
});

/// Whether `password` (trimmed, any case) is on the common-password list.
pub fn is_common(password: &str) -> bool {
    let wanted = password.trim().to_lowercase();
    COMMON.binary_search(&wanted.as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cheap() -> Passwords {
        Passwords::new(64, 1)
    }

    #[tokio::test]
    async fn hash_and_verify() {
        let p = cheap();
        let h = p.hash(&Secret::new("correct horse battery")).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=64,t=1,p=1$"), "{h}");
        assert!(p
            .verify(&Secret::new("correct horse battery"), Some(&h))
            .await
            .unwrap());
        assert!(!p
            .verify(&Secret::new("correct horse batterY"), Some(&h))
            .await
            .unwrap());
        let h2 = p.hash(&Secret::new("correct horse battery")).await.unwrap();
        assert_ne!(h, h2, "salts differ");
    }

    #[tokio::test]
    async fn no_stored_hash_is_false_after_the_same_work() {
        let p = cheap();
        p.warm_up().await.unwrap();
        assert!(!p.verify(&Secret::new("anything"), None).await.unwrap());
        let dummy = p.dummy().await.unwrap().to_owned();
        // The dummy has the configured cost.
        assert!(dummy.starts_with("$argon2id$v=19$m=64,t=1,p=1$"));
    }

    #[tokio::test]
    async fn a_malformed_stored_hash_is_an_error() {
        assert!(cheap()
            .verify(&Secret::new("x"), Some("not-a-phc"))
            .await
            .is_err());
    }

    #[test]
    fn rules() {
        assert!(check_rules("short", "a@b.c").is_err());
        assert!(check_rules(&"x".repeat(11), "a@b.c").is_err());
        assert!(check_rules(&"x".repeat(12), "a@b.c").is_ok());
        assert!(
            check_rules(&"é".repeat(12), "a@b.c").is_ok(),
            "characters, not bytes"
        );
        assert!(check_rules(&"x".repeat(129), "a@b.c").is_err());
        assert!(check_rules(&" ".repeat(20), "a@b.c").is_err());
        assert!(check_rules("Alice@Example.com", "alice@example.com").is_err());
        assert_eq!(
            check_rules("short", "a@b.c").unwrap_err(),
            "password must have at least 12 characters"
        );
    }

    #[test]
    fn common_passwords_are_refused_in_any_case() {
        for listed in [
            "123456qwerty",
            "1qaz2wsx3edc",
            "QAZWSXEDCRFV",
            " LeaveMeAlone ",
        ] {
            assert!(is_common(listed), "{listed}");
            assert_eq!(
                check_rules(listed, "a@b.c").unwrap_err(),
                "password is on a list of common or breached passwords; choose another"
            );
        }
        assert!(!is_common("correct horse battery staple"));
        assert!(check_rules("correct horse battery staple", "a@b.c").is_ok());
    }

    #[test]
    fn the_list_is_sorted_unique_lowercase_and_passes_the_length_rule() {
        let list = include_str!("../../data/common-passwords.txt");
        let entries: Vec<&str> = list.lines().collect();
        assert!(entries.len() > 250, "{}", entries.len());
        assert!(entries.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
        for e in &entries {
            assert_eq!(*e, e.to_lowercase().trim());
            assert!((MIN_LEN..=MAX_LEN).contains(&e.chars().count()), "{e}");
        }
        // every entry is found (binary search over the same order)
        assert!(entries.iter().all(|e| is_common(e)));
    }
}
