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
    let mut id = String::with_capacity(prefix.len() + 24);
    id.push_str(prefix);
    for b in raw {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    id
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
}
