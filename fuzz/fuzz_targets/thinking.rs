//! The `<thinking>` splitter: any chunking of a text gives the same
//! reasoning, the same answer and the same verdict as one push; no delta is
//! empty; a push emits at most one thinking delta then at most one text delta.
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::thinking::ThinkingSplitter;
use translate::ChatEvent;

fn run(pieces: &[&str]) -> (String, String, bool) {
    let mut splitter = ThinkingSplitter::new();
    let (mut thinking, mut text) = (String::new(), String::new());
    let mut out = Vec::new();
    let mut take = |out: &mut Vec<ChatEvent>, push: bool| {
        let mut seen_text = false;
        let mut thinking_deltas = 0;
        for event in out.drain(..) {
            match event {
                ChatEvent::ThinkingDelta(s) => {
                    assert!(!s.is_empty() && !seen_text);
                    thinking_deltas += 1;
                    thinking.push_str(&s);
                }
                ChatEvent::TextDelta(s) => {
                    assert!(!s.is_empty() && !seen_text);
                    seen_text = true;
                    text.push_str(&s);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        if push {
            assert!(thinking_deltas <= 1);
        }
    };
    for piece in pieces {
        splitter.push(*piece, &mut out);
        take(&mut out, true);
    }
    splitter.finish(&mut out);
    take(&mut out, false);
    (thinking, text, splitter.found_block())
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let whole = run(&[&text]);
    let chunked = run(&gateway_fuzz::split_str(seed, &text));
    assert_eq!(whole, chunked);
});
