//! A batch of finished spans as an OTLP `ExportTraceServiceRequest` in
//! protobuf (opentelemetry-proto's `trace/v1/trace.proto`), written by hand:
//! the few messages and fields the gateway fills, nothing else.

use super::span::{AttrValue, SpanRecord};

// Field numbers of the messages written here.
const REQUEST_RESOURCE_SPANS: u32 = 1;
const RESOURCE_SPANS_RESOURCE: u32 = 1;
const RESOURCE_SPANS_SCOPE_SPANS: u32 = 2;
const RESOURCE_ATTRIBUTES: u32 = 1;
const SCOPE_SPANS_SCOPE: u32 = 1;
const SCOPE_SPANS_SPANS: u32 = 2;
const SCOPE_NAME: u32 = 1;
const SCOPE_VERSION: u32 = 2;
const SPAN_TRACE_ID: u32 = 1;
const SPAN_SPAN_ID: u32 = 2;
const SPAN_PARENT_SPAN_ID: u32 = 4;
const SPAN_NAME: u32 = 5;
const SPAN_KIND: u32 = 6;
const SPAN_START: u32 = 7;
const SPAN_END: u32 = 8;
const SPAN_ATTRIBUTES: u32 = 9;
const SPAN_STATUS: u32 = 15;
const SPAN_FLAGS: u32 = 16;
const STATUS_MESSAGE: u32 = 2;
const STATUS_CODE: u32 = 3;
const KEY_VALUE_KEY: u32 = 1;
const KEY_VALUE_VALUE: u32 = 2;
const ANY_STRING: u32 = 1;
const ANY_INT: u32 = 3;

// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// `STATUS_CODE_ERROR`.
const STATUS_ERROR: u64 = 2;
/// `SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`: the flags say whether the
/// parent is remote.
const FLAG_HAS_IS_REMOTE: u32 = 0x100;
const FLAG_IS_REMOTE: u32 = 0x200;

/// What the whole batch shares: the resource and the instrumentation scope.
#[derive(Debug)]
pub(crate) struct Origin {
    pub service_name: String,
    pub service_version: &'static str,
}

/// The request body of `POST /v1/traces`.
pub(crate) fn export_request(origin: &Origin, spans: &[SpanRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + spans.len() * 256);
    message(&mut out, REQUEST_RESOURCE_SPANS, |out| {
        message(out, RESOURCE_SPANS_RESOURCE, |out| {
            key_value(
                out,
                RESOURCE_ATTRIBUTES,
                "service.name",
                &AttrValue::Str(origin.service_name.clone()),
            );
            key_value(
                out,
                RESOURCE_ATTRIBUTES,
                "service.version",
                &AttrValue::Str(origin.service_version.to_owned()),
            );
        });
        message(out, RESOURCE_SPANS_SCOPE_SPANS, |out| {
            message(out, SCOPE_SPANS_SCOPE, |out| {
                bytes_field(out, SCOPE_NAME, b"gateway");
                bytes_field(out, SCOPE_VERSION, origin.service_version.as_bytes());
            });
            for span in spans {
                message(out, SCOPE_SPANS_SPANS, |out| encode_span(out, span));
            }
        });
    });
    out
}

fn encode_span(out: &mut Vec<u8>, span: &SpanRecord) {
    bytes_field(out, SPAN_TRACE_ID, &span.context.trace_id);
    bytes_field(out, SPAN_SPAN_ID, &span.context.span_id);
    if let Some(parent) = &span.parent {
        bytes_field(out, SPAN_PARENT_SPAN_ID, &parent.span_id);
    }
    bytes_field(out, SPAN_NAME, span.name.as_bytes());
    varint_field(out, SPAN_KIND, span.kind as u64);
    tag(out, SPAN_START, FIXED64);
    out.extend_from_slice(&span.start_unix_nanos.to_le_bytes());
    tag(out, SPAN_END, FIXED64);
    out.extend_from_slice(&span.end_unix_nanos.to_le_bytes());
    for (key, value) in &span.attributes {
        key_value(out, SPAN_ATTRIBUTES, key, value);
    }
    if let Some(error) = &span.error {
        message(out, SPAN_STATUS, |out| {
            bytes_field(out, STATUS_MESSAGE, error.as_bytes());
            varint_field(out, STATUS_CODE, STATUS_ERROR);
        });
    }
    let mut flags = u32::from(span.context.sampled);
    if let Some(parent) = &span.parent {
        flags |= FLAG_HAS_IS_REMOTE | if parent.remote { FLAG_IS_REMOTE } else { 0 };
    }
    tag(out, SPAN_FLAGS, FIXED32);
    out.extend_from_slice(&flags.to_le_bytes());
}

fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &AttrValue) {
    message(out, field, |out| {
        bytes_field(out, KEY_VALUE_KEY, key.as_bytes());
        message(out, KEY_VALUE_VALUE, |out| match value {
            AttrValue::Str(s) => bytes_field(out, ANY_STRING, s.as_bytes()),
            AttrValue::Int(i) => varint_field(out, ANY_INT, *i as u64),
        });
    });
}

/// A length-delimited field whose contents `write` appends: written in
/// place, then its length is inserted in front (one move of the contents).
fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, LEN);
    let start = out.len();
    write(out);
    let len = out.len() - start;
    let mut prefix = [0u8; 10];
    let n = varint_into(&mut prefix, len as u64);
    out.splice(start..start, prefix[..n].iter().copied());
}

fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(out, field, LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, VARINT);
    varint(out, value);
}

fn tag(out: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(out, u64::from(field << 3 | wire_type));
}

fn varint(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; 10];
    let n = varint_into(&mut buf, value);
    out.extend_from_slice(&buf[..n]);
}

fn varint_into(buf: &mut [u8; 10], mut value: u64) -> usize {
    let mut i = 0;
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            buf[i] = byte;
            return i + 1;
        }
        buf[i] = byte | 0x80;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_base_128() {
        let mut out = Vec::new();
        varint(&mut out, 1);
        varint(&mut out, 300);
        varint(&mut out, u64::MAX);
        assert_eq!(&out[..3], &[0x01, 0xac, 0x02]);
        assert_eq!(out.len(), 3 + 10);
    }

    #[test]
    fn a_message_is_prefixed_by_its_length() {
        let mut out = Vec::new();
        message(&mut out, 1, |out| out.extend_from_slice(&[7u8; 200]));
        assert_eq!(&out[..3], &[0x0a, 0xc8, 0x01]);
        assert_eq!(out.len(), 203);
    }
}
