//! The client side of a request: which format it speaks, its streaming encoder
//! and how a collected answer is rendered. One enum so the pipeline is written once.

use bytes::BytesMut;
use translate::{ChatEvent, ChatResponse, ClientFormat, ResponseMeta, Usage};

/// The streaming encoder of the client's format.
pub(crate) enum ClientEncoder {
    OpenAi(translate::openai::StreamEncoder),
    Anthropic(translate::anthropic::StreamEncoder),
}

impl ClientEncoder {
    /// An encoder for `format`; `usage_hint` carries the input-token estimate
    /// known before the provider answers.
    pub(crate) fn new(
        format: ClientFormat,
        meta: ResponseMeta,
        include_usage: bool,
        usage_hint: Usage,
    ) -> Self {
        match format {
            ClientFormat::OpenAi => {
                let mut enc = translate::openai::StreamEncoder::new(meta, include_usage);
                let mut scratch = BytesMut::new();
                enc.push(&ChatEvent::Usage(usage_hint), &mut scratch);
                debug_assert!(scratch.is_empty(), "usage is never written early");
                ClientEncoder::OpenAi(enc)
            }
            ClientFormat::Anthropic => {
                ClientEncoder::Anthropic(translate::anthropic::StreamEncoder::new(meta, usage_hint))
            }
        }
    }

    /// Write the opening of the stream now (OpenAI role chunk / Anthropic
    /// `message_start`), so the client sees bytes as soon as the upstream answered.
    pub(crate) fn begin(&mut self, out: &mut BytesMut) {
        match self {
            ClientEncoder::OpenAi(enc) => enc.begin(out),
            ClientEncoder::Anthropic(enc) => enc.begin(out),
        }
    }

    pub(crate) fn push(&mut self, event: &ChatEvent, out: &mut BytesMut) {
        match self {
            ClientEncoder::OpenAi(enc) => enc.push(event, out),
            ClientEncoder::Anthropic(enc) => enc.push(event, out),
        }
    }

    pub(crate) fn finish(&mut self, out: &mut BytesMut) {
        match self {
            ClientEncoder::OpenAi(enc) => enc.finish(out),
            ClientEncoder::Anthropic(enc) => enc.finish(out),
        }
    }
}

/// Render a collected answer as the client's JSON body.
pub(crate) fn render(
    format: ClientFormat,
    resp: &ChatResponse,
    meta: &ResponseMeta,
) -> bytes::Bytes {
    // Sized for the content and the envelope around it (ids, usage, the
    // field names), with room for some escapes: grown from empty, the
    // buffer was reallocated and copied several times an answer.
    let mut body = Vec::with_capacity(resp.content_len() + resp.content_len() / 8 + 512);
    match format {
        ClientFormat::OpenAi => translate::openai::write_response(resp, meta, &mut body),
        ClientFormat::Anthropic => translate::anthropic::write_response(resp, meta, &mut body),
    }
    bytes::Bytes::from(body)
}
