//! A chat-completions request body as the gateway reads it: JSON to the wire
//! type, the spec's validation, conversion to the canonical model, then every
//! conversion onwards. Nothing may panic; a parsed request serializes back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::openai::ChatCompletionRequest;

fuzz_target!(|data: &[u8]| {
    let Ok(req) = serde_json::from_slice::<ChatCompletionRequest>(data) else {
        return;
    };
    assert!(serde_json::to_vec(&req).is_ok());
    if wire::openai::validate(&req).is_err() {
        return;
    }
    if let Ok(chat) = translate::openai::into_chat_request(req) {
        gateway_fuzz::convert_onwards(&chat);
    }
});
