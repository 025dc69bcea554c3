//! Random identifiers in the shapes the real services use (tokens, codes,
//! request ids, tool-use ids). Randomness comes from UUIDv4.

use uuid::Uuid;

/// An opaque token: `prefix` followed by 64 random hex characters.
pub(crate) fn token(prefix: &str) -> String {
    let a = Uuid::new_v4().simple();
    let b = Uuid::new_v4().simple();
    format!("{prefix}{a}{b}")
}

/// A client id: 22 URL-safe characters, like the real RegisterClient output.
pub(crate) fn client_id() -> String {
    base62(22)
}

/// A device-flow user code, `XXXX-XXXX` from an alphabet without look-alikes.
pub(crate) fn user_code() -> String {
    const ALPHABET: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";
    let bytes = Uuid::new_v4().into_bytes();
    let mut out = String::with_capacity(9);
    for (i, b) in bytes.iter().take(8).enumerate() {
        if i == 4 {
            out.push('-');
        }
        out.push(char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]));
    }
    out
}

/// A request id for `x-amzn-RequestId`.
pub(crate) fn request_id() -> String {
    Uuid::new_v4().hyphenated().to_string()
}

/// A tool-use id, `tooluse_` plus 22 characters.
pub(crate) fn tool_use_id() -> String {
    format!("tooluse_{}", base62(22))
}

/// `len` random characters of `[0-9A-Za-z]`.
pub(crate) fn base62(len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = String::with_capacity(len);
    while out.len() < len {
        for b in Uuid::new_v4().into_bytes() {
            if out.len() == len {
                break;
            }
            out.push(char::from(ALPHABET[usize::from(b) % ALPHABET.len()]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let code = user_code();
        assert_eq!(code.len(), 9);
        assert_eq!(&code[4..5], "-");
        assert_eq!(client_id().len(), 22);
        assert!(tool_use_id().starts_with("tooluse_"));
        assert_eq!(tool_use_id().len(), 30);
        let t = token("aoa");
        assert_eq!(t.len(), 67);
        assert_ne!(token("aoa"), t);
        assert_eq!(request_id().len(), 36);
    }
}
