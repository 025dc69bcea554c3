//! Random identifiers in the shapes the vendors use: message, completion,
//! tool-call and request ids, tokens, thinking signatures. Randomness comes
//! from UUIDv4, so no other generator is needed.

use uuid::Uuid;

pub(crate) use crate::ids::base62;

/// `len` random lower-case hex characters.
pub(crate) fn hex(len: usize) -> String {
    let mut out = String::with_capacity(len + 32);
    while out.len() < len {
        out.push_str(&Uuid::new_v4().simple().to_string());
    }
    out.truncate(len);
    out
}

/// A messages-vendor message id, `msg_01` and 22 characters.
pub(crate) fn message_id() -> String {
    format!("msg_01{}", base62(22))
}

/// A messages-vendor tool-use id, `toolu_01` and 22 characters.
pub(crate) fn tool_use_id() -> String {
    format!("toolu_01{}", base62(22))
}

/// A messages-vendor request id, `req_01` and 22 characters.
pub(crate) fn anthropic_request_id() -> String {
    format!("req_01{}", base62(22))
}

/// A chat completion id, `chatcmpl-` and 29 characters.
pub(crate) fn completion_id() -> String {
    format!("chatcmpl-{}", base62(29))
}

/// An OpenAI-format tool-call id, `call_` and 24 characters.
pub(crate) fn call_id() -> String {
    format!("call_{}", base62(24))
}

/// An OpenAI-format request id, `req_` and 32 hex characters.
pub(crate) fn openai_request_id() -> String {
    format!("req_{}", hex(32))
}

/// A thinking-block signature (base64 alphabet, opaque to clients).
pub(crate) fn signature() -> String {
    format!("EqQBCkYIBxgCKkA{}", base62(96))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(message_id().len(), 28);
        assert!(message_id().starts_with("msg_01"));
        assert!(tool_use_id().starts_with("toolu_01"));
        assert_eq!(completion_id().len(), 38);
        assert_eq!(call_id().len(), 29);
        assert_eq!(openai_request_id().len(), 36);
        assert_eq!(hex(70).len(), 70);
        assert!(hex(10).bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(base62(40).bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(signature(), signature());
        assert!(anthropic_request_id().starts_with("req_01"));
    }
}
