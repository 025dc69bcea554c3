//! Client-facing response ids and timestamps (protocol doc 9.2):
//! `chatcmpl-<24 hex>` for chat completions, `msg_<24 hex>` for messages.

use rand::RngCore;
use translate::ClientFormat;

/// A fresh response id in the style of `format`.
pub fn response_id(format: ClientFormat) -> String {
    let mut raw = [0u8; 12];
    rand::thread_rng().fill_bytes(&mut raw);
    let prefix = match format {
        ClientFormat::OpenAi => "chatcmpl-",
        ClientFormat::Anthropic => "msg_",
    };
    let mut hex = [0u8; 24];
    // The lengths match (12 bytes, 24 digits): this cannot fail.
    let _ = hex::encode_to_slice(raw, &mut hex);
    let mut id = String::with_capacity(prefix.len() + hex.len());
    id.push_str(prefix);
    id.extend(hex.iter().map(|&b| char::from(b)));
    id
}

/// A random (version 4) UUID from the thread-local RNG: no system call per id,
/// unlike `Uuid::new_v4`, which reads the kernel's RNG each time. For
/// request, conversation and correlation ids, which need uniqueness, not
/// secrecy (session ids and keys keep using the OS RNG).
pub fn fast_uuid() -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// [`fast_uuid`] as hyphenated lowercase text, written into `buf` without
/// `fmt` (`to_string` goes through `Display`: about 450 instructions).
pub fn fast_uuid_text(buf: &mut [u8; uuid::fmt::Hyphenated::LENGTH]) -> &str {
    fast_uuid().hyphenated().encode_lower(buf)
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_vendor_shapes() {
        let a = response_id(ClientFormat::OpenAi);
        assert!(a.starts_with("chatcmpl-") && a.len() == 9 + 24, "{a}");
        let b = response_id(ClientFormat::Anthropic);
        assert!(b.starts_with("msg_") && b.len() == 4 + 24, "{b}");
        assert_ne!(response_id(ClientFormat::OpenAi), a);
    }

    #[test]
    fn fast_uuids_are_version_4() {
        let a = fast_uuid();
        assert_eq!(a.get_version_num(), 4);
        assert_ne!(a, fast_uuid());
    }

    #[test]
    fn fast_uuid_text_is_the_hyphenated_lowercase_form() {
        let mut buf = [0; 36];
        let text = fast_uuid_text(&mut buf).to_owned();
        let parsed = uuid::Uuid::parse_str(&text).unwrap();
        assert_eq!(parsed.to_string(), text);
        assert_eq!(parsed.get_version_num(), 4);
    }
}
