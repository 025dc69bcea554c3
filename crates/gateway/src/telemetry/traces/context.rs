//! W3C Trace Context: the `traceparent` header a client sends (its trace
//! and span) and the one the gateway sends upstream (the same trace, the
//! attempt's span).

use rand::RngCore as _;

/// A trace id (16 bytes) and a span id (8 bytes), never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpanContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The `sampled` flag: spans of an unsampled trace are not exported.
    pub sampled: bool,
}

impl SpanContext {
    /// The context of a `traceparent` value (version `00`), `None` when it
    /// is malformed: the request then starts a new trace.
    pub(crate) fn parse(header: &[u8]) -> Option<SpanContext> {
        // 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>
        if header.len() != 55 || &header[..3] != b"00-" || header[35] != b'-' || header[52] != b'-'
        {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        let mut flags = [0u8; 1];
        hex_into(&header[3..35], &mut trace_id)?;
        hex_into(&header[36..52], &mut span_id)?;
        hex_into(&header[53..55], &mut flags)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(SpanContext {
            trace_id,
            span_id,
            sampled: flags[0] & 1 == 1,
        })
    }

    /// A new span of the trace `trace_id`.
    pub(crate) fn child_of(parent: &SpanContext) -> SpanContext {
        SpanContext {
            trace_id: parent.trace_id,
            span_id: new_span_id(),
            sampled: parent.sampled,
        }
    }

    /// The first span of a new, sampled trace.
    pub(crate) fn new_root() -> SpanContext {
        let mut trace_id = [0u8; 16];
        while trace_id == [0; 16] {
            rand::thread_rng().fill_bytes(&mut trace_id);
        }
        SpanContext {
            trace_id,
            span_id: new_span_id(),
            sampled: true,
        }
    }

    /// This span as a `traceparent` value.
    pub(crate) fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        push_hex(&mut out, &self.trace_id);
        out.push('-');
        push_hex(&mut out, &self.span_id);
        out.push_str(if self.sampled { "-01" } else { "-00" });
        out
    }
}

fn new_span_id() -> [u8; 8] {
    let mut id = [0u8; 8];
    while id == [0; 8] {
        rand::thread_rng().fill_bytes(&mut id);
    }
    id
}

/// Lower-case hex only, as the W3C format wants.
fn hex_into(text: &[u8], out: &mut [u8]) -> Option<()> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    for (byte, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(())
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_header_round_trips() {
        let ctx = SpanContext::parse(VALID.as_bytes()).unwrap();
        assert!(ctx.sampled);
        assert_eq!(ctx.traceparent(), VALID);
        let child = SpanContext::child_of(&ctx);
        assert_eq!(child.trace_id, ctx.trace_id);
        assert_ne!(child.span_id, ctx.span_id);
        let unsampled = VALID.replace("-01", "-00");
        assert!(!SpanContext::parse(unsampled.as_bytes()).unwrap().sampled);
    }

    #[test]
    fn malformed_headers_are_ignored() {
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(SpanContext::parse(bad.as_bytes()).is_none(), "{bad}");
        }
        let root = SpanContext::new_root();
        assert_eq!(
            SpanContext::parse(root.traceparent().as_bytes()),
            Some(root)
        );
    }
}
