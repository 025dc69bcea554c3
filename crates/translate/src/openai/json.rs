//! Hand-written JSON pieces for the streaming hot path: string literals
//! escaped exactly as `serde_json` escapes them (the shared
//! [`wire::json::write_str`]), and integers via `itoa`.

use bytes::{BufMut, BytesMut};

pub(crate) use wire::json::write_str;

/// Appends an unsigned integer.
pub(crate) fn write_u64(out: &mut BytesMut, n: u64) {
    let mut buf = itoa::Buffer::new();
    out.put_slice(buf.format(n).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_numbers() {
        let mut out = BytesMut::new();
        write_u64(&mut out, 0);
        out.put_u8(b',');
        write_u64(&mut out, u64::MAX);
        assert_eq!(&out[..], b"0,18446744073709551615");
    }
}
