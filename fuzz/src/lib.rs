//! What the fuzz targets share: cutting an input into network-like chunks,
//! and the canonical conversions every parsed request goes through.
//!
//! Input convention of the chunking targets: the first byte chooses the
//! chunking (a deterministic sequence of chunk sizes), the rest is the input
//! proper. Seeds are a chunking byte followed by a fixture (`fuzz/seeds.py`).

use translate::ChatRequest;

/// Splits `data` into (chunks, whole input): the first byte seeds the chunk
/// sizes (1 to 64 bytes, 0 meaning "one byte at a time"), the rest is cut.
pub fn split(data: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let Some((&seed, input)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let max = usize::from(seed % 64) + 1;
    let mut state = u32::from(seed) | 1;
    let mut pieces = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let size = if seed == 0 {
            1
        } else {
            (state >> 16) as usize % max + 1
        };
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    (pieces, input)
}

/// Cuts `text` at char boundaries near the byte cuts of [`split`].
pub fn split_str<'a>(seed: u8, text: &'a str) -> Vec<&'a str> {
    let mut data = vec![seed];
    data.extend_from_slice(text.as_bytes());
    let (pieces, _) = split(&data);
    let mut out = Vec::new();
    let (mut start, mut end) = (0, 0);
    for piece in pieces {
        end += piece.len();
        if text.is_char_boundary(end) {
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// What the gateway does with a converted request: relay it to a provider of
/// either format or to `primary`, and estimate its tokens. None may panic.
pub fn convert_onwards(chat: &ChatRequest) {
    let openai = translate::openai::from_chat_request(chat);
    let anthropic = translate::anthropic::from_chat_request(chat);
    // Relayed bodies are serialized: that must not fail either.
    assert!(serde_json::to_vec(&openai).is_ok());
    assert!(serde_json::to_vec(&anthropic).is_ok());
    let mut opts = translate::primary::RequestOptions::new("conv-1", "model-1");
    opts.fake_reasoning = Some(4000);
    opts.truncation_recovery = true;
    if let Ok(primary) = translate::primary::build_request(chat, &opts) {
        assert!(serde_json::to_vec(&primary).is_ok());
    }
    let _ = translate::tokens::estimate_request(chat);
}
