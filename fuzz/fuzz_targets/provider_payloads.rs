//! The hand-written fast paths that read a provider's stream payloads (a
//! chat-completions chunk, a messages-stream event; `translate::json_scan`)
//! against serde_json, which they stand in for: wherever a fast path
//! answers, serde_json accepts the same text and reads the same value. Any
//! text: payloads as providers write them (the seeds), and broken ones.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(disagreement) = translate::fast_paths_agree(text) {
        panic!("{disagreement}");
    }
});
