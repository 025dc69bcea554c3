//! Hand-written JSON for the streaming hot path: string literals (the shared
//! [`wire::json::write_str`], byte-identical to `serde_json`) and numbers
//! appended straight to the output buffer.

use bytes::{BufMut, BytesMut};

pub(crate) use wire::json::write_str;

/// Appends `n` in decimal.
pub(crate) fn write_u32(out: &mut BytesMut, n: u32) {
    out.put_slice(itoa::Buffer::new().format(n).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_numbers() {
        let mut out = BytesMut::new();
        write_u32(&mut out, 0);
        out.put_u8(b',');
        write_u32(&mut out, u32::MAX);
        assert_eq!(&out[..], b"0,4294967295");
    }
}
