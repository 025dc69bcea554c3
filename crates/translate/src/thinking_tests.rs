use super::*;
use proptest::prelude::*;

/// Runs the chunks through a splitter; returns (thinking, text, events).
fn run(chunks: &[&str]) -> (String, String, Vec<ChatEvent>) {
    let mut s = ThinkingSplitter::new();
    let mut out = Vec::new();
    for c in chunks {
        s.push(*c, &mut out);
    }
    s.finish(&mut out);
    let (mut thinking, mut text) = (String::new(), String::new());
    for e in &out {
        match e {
            ChatEvent::ThinkingDelta(t) => thinking.push_str(t),
            ChatEvent::TextDelta(t) => text.push_str(t),
            other => panic!("unexpected event {other:?}"),
        }
    }
    (thinking, text, out)
}

/// Every way of cutting `input` in two and in three at char boundaries.
fn assert_split_invariant(input: &str) {
    let (want_thinking, want_text, _) = run(&[input]);
    let cuts: Vec<usize> = (0..=input.len())
        .filter(|&i| input.is_char_boundary(i))
        .collect();
    for &a in &cuts {
        for &b in cuts.iter().filter(|&&b| b >= a) {
            let (t, x, events) = run(&[&input[..a], &input[a..b], &input[b..]]);
            assert_eq!(
                (t.as_str(), x.as_str()),
                (want_thinking.as_str(), want_text.as_str()),
                "cuts at {a},{b} of {input:?}"
            );
            assert!(events.iter().all(|e| match e {
                ChatEvent::ThinkingDelta(s) | ChatEvent::TextDelta(s) => !s.is_empty(),
                _ => false,
            }));
        }
    }
}

#[test]
fn plain_text_passes_through_at_once() {
    let mut s = ThinkingSplitter::new();
    let mut out = Vec::new();
    s.push("Hello", &mut out);
    assert_eq!(out, vec![ChatEvent::TextDelta("Hello".into())]);
    s.push(" <thinking>x</thinking>", &mut out);
    assert_eq!(
        out[1],
        ChatEvent::TextDelta(" <thinking>x</thinking>".into())
    );
    assert!(!s.found_block());
}

#[test]
fn splits_a_block_and_trims_around_it() {
    let (thinking, text, events) = run(&["\n <thinking>\nLet me see.\n</thinking>\n\nThe answer."]);
    assert_eq!(thinking, "Let me see.");
    assert_eq!(text, "The answer.");
    assert_eq!(
        events,
        vec![
            ChatEvent::ThinkingDelta("Let me see.".into()),
            ChatEvent::TextDelta("The answer.".into())
        ]
    );
}

#[test]
fn every_tag_is_recognised_with_its_own_close() {
    for (open, close) in TAGS {
        let input = format!("{open}r</other>{close}t");
        let (thinking, text, _) = run(&[&input]);
        assert_eq!(
            (thinking.as_str(), text.as_str()),
            ("r</other>", "t"),
            "{open}"
        );
    }
    // A different close tag does not end the block.
    let (thinking, text, _) = run(&["<think>a</thinking>b</think>c"]);
    assert_eq!((thinking.as_str(), text.as_str()), ("a</thinking>b", "c"));
}

#[test]
fn text_before_the_tag_disables_extraction() {
    let (thinking, text, _) = run(&["Sure. <thinking>x</thinking> done"]);
    assert_eq!(thinking, "");
    assert_eq!(text, "Sure. <thinking>x</thinking> done");
    // A near miss of a tag is text too.
    let (thinking, text, _) = run(&["<thinkin", "g_mode>"]);
    assert_eq!((thinking.as_str(), text.as_str()), ("", "<thinking_mode>"));
}

#[test]
fn reasoning_streams_before_the_close_tag_arrives() {
    let mut s = ThinkingSplitter::new();
    let mut out = Vec::new();
    s.push("<thinking>first part", &mut out);
    assert_eq!(out, vec![ChatEvent::ThinkingDelta("first part".into())]);
    assert!(s.found_block());
    out.clear();
    s.push(" and more</thi", &mut out);
    // " and more" is emitted; "</thi" is held as a possible close tag.
    assert_eq!(out, vec![ChatEvent::ThinkingDelta(" and more".into())]);
    out.clear();
    s.push("nk", &mut out);
    assert!(out.is_empty());
    s.push("ing>\n\nDone", &mut out);
    assert_eq!(out, vec![ChatEvent::TextDelta("Done".into())]);
}

#[test]
fn a_held_partial_close_that_is_not_a_close_is_released() {
    let (thinking, text, _) = run(&["<thinking>a </thin", "g> b", "</thinking>c"]);
    assert_eq!(thinking, "a </thing> b");
    assert_eq!(text, "c");
}

#[test]
fn finish_flushes_held_text() {
    // A partial open tag is text.
    assert_eq!(run(&["  <thin"]).1, "  <thin");
    // An unclosed block is thinking, held tail included.
    let (thinking, text, _) = run(&["<thinking>cut off mid </think"]);
    assert_eq!(thinking, "cut off mid </think");
    assert_eq!(text, "");
    // Whitespace-only answers are kept.
    assert_eq!(run(&["\n", "\n"]).1, "\n\n");
    // Nothing at all gives nothing.
    assert!(run(&[]).2.is_empty());
}

#[test]
fn empty_block_and_empty_answer() {
    let (thinking, text, events) = run(&["<thinking></thinking>Hi"]);
    assert_eq!((thinking.as_str(), text.as_str()), ("", "Hi"));
    assert_eq!(events.len(), 1);
    let (thinking, text, _) = run(&["<think>only thoughts</think>\n\n"]);
    assert_eq!((thinking.as_str(), text.as_str()), ("only thoughts", ""));
}

#[test]
fn whitespace_inside_reasoning_is_kept() {
    let (thinking, _, _) = run(&["<thinking>a", " ", "\n", " b \n", "</thinking>x"]);
    assert_eq!(thinking, "a \n b");
}

#[test]
fn every_split_gives_the_same_result() {
    for input in [
        "<thinking>\nStep 1.\nStep 2.\n</thinking>\n\nAnswer <b>bold</b>",
        "  <think>日本語の推論 🤔</think>\n答え ✅",
        "<reasoning>a</reasoning",
        "<thought></thought>",
        "no tags <thinking>here</thinking>",
        "\n\n<thinking>x</thinking></thinking>tail",
        "<thinkin",
    ] {
        assert_split_invariant(input);
    }
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("<thinking>".to_owned()),
        Just("</thinking>".to_owned()),
        Just("<think>".to_owned()),
        Just("</think>".to_owned()),
        Just("<reasoning>".to_owned()),
        Just("</thought>".to_owned()),
        Just("</thin".to_owned()),
        Just("<".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("é".to_owned()),
        Just("🤔".to_owned()),
        "[a-z <>/]{0,6}",
        ".{0,4}",
    ]
}

/// `input` cut at char boundaries picked by `cuts` (any number of pieces,
/// empty ones included).
fn cut_at<'a>(input: &'a str, cuts: &[prop::sample::Index]) -> Vec<&'a str> {
    let boundaries: Vec<usize> = (0..=input.len())
        .filter(|&i| input.is_char_boundary(i))
        .collect();
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|ix| boundaries[ix.index(boundaries.len())])
        .collect();
    points.sort_unstable();
    let mut chunks = Vec::with_capacity(points.len() + 1);
    let mut from = 0;
    for p in points {
        chunks.push(&input[from..p]);
        from = p;
    }
    chunks.push(&input[from..]);
    chunks
}

proptest! {
    #[test]
    fn any_chunking_equals_one_push(
        pieces in prop::collection::vec(piece(), 0..12),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let input: String = pieces.concat();
        let chunks = cut_at(&input, &cuts);
        let (t1, x1, _) = run(&[&input]);
        let (t2, x2, events) = run(&chunks);
        prop_assert_eq!(t1, t2);
        prop_assert_eq!(x1, x2);
        for e in events {
            match e {
                ChatEvent::ThinkingDelta(s) | ChatEvent::TextDelta(s) => prop_assert!(!s.is_empty()),
                _ => prop_assert!(false),
            }
        }
    }

    #[test]
    fn without_a_leading_tag_everything_is_text(text in "[^<\\s].{0,40}", cuts in 0usize..5) {
        let chunks: Vec<&str> = split_evenly(&text, cuts + 1);
        let (thinking, out, _) = run(&chunks);
        prop_assert_eq!(thinking, "");
        prop_assert_eq!(out, text);
    }
}

fn split_evenly(s: &str, parts: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    for i in 1..parts {
        let mut at = s.len() * i / parts;
        while !s.is_char_boundary(at) {
            at += 1;
        }
        if at >= from {
            out.push(&s[from..at]);
            from = at;
        }
    }
    out.push(&s[from..]);
    out
}

/// The splitter as it was before it scanned deltas in place (commit
/// 86feeba): the oracle that the rewrite emits exactly the same events.
mod reference {
    use super::super::TAGS;
    use crate::model::ChatEvent;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum State {
        Start,
        Thinking { close: &'static str, started: bool },
        Text { trim: bool },
    }

    #[derive(Debug, Clone)]
    pub struct OldSplitter {
        state: State,
        buf: String,
        found: bool,
    }

    impl OldSplitter {
        pub fn new() -> Self {
            Self {
                state: State::Start,
                buf: String::new(),
                found: false,
            }
        }

        pub fn found_block(&self) -> bool {
            self.found
        }

        pub fn push(&mut self, text: &str, out: &mut Vec<ChatEvent>) {
            match self.state {
                State::Start => {
                    self.buf.push_str(text);
                    self.decide_start(out);
                }
                State::Thinking { .. } => {
                    self.buf.push_str(text);
                    self.scan_thinking(out);
                }
                State::Text { .. } => self.emit_text(text, out),
            }
        }

        pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
            let held = std::mem::take(&mut self.buf);
            match self.state {
                State::Start => emit(out, ChatEvent::TextDelta, &held),
                State::Thinking { .. } => emit(out, ChatEvent::ThinkingDelta, held.trim_end()),
                State::Text { .. } => {}
            }
            self.state = State::Text { trim: false };
        }

        fn decide_start(&mut self, out: &mut Vec<ChatEvent>) {
            let rest = self.buf.trim_start();
            if rest.is_empty() {
                return;
            }
            for (open, close) in TAGS {
                if let Some(after) = rest.strip_prefix(open) {
                    let after = after.to_owned();
                    self.found = true;
                    self.state = State::Thinking {
                        close,
                        started: false,
                    };
                    self.buf = after;
                    self.scan_thinking(out);
                    return;
                }
            }
            if TAGS.iter().any(|(open, _)| open.starts_with(rest)) {
                return; // still possibly an open tag
            }
            let text = std::mem::take(&mut self.buf);
            self.state = State::Text { trim: false };
            emit(out, ChatEvent::TextDelta, &text);
        }

        fn scan_thinking(&mut self, out: &mut Vec<ChatEvent>) {
            let State::Thinking { close, started } = self.state else {
                return;
            };
            if !started {
                let ws = self.buf.len() - self.buf.trim_start().len();
                self.buf.drain(..ws);
                if self.buf.is_empty() {
                    return;
                }
                self.state = State::Thinking {
                    close,
                    started: true,
                };
            }
            if let Some(at) = self.buf.find(close) {
                emit(out, ChatEvent::ThinkingDelta, self.buf[..at].trim_end());
                let after = self.buf[at + close.len()..].to_owned();
                self.buf.clear();
                self.state = State::Text { trim: true };
                self.emit_text(&after, out);
                return;
            }
            let keep_from = hold_point(&self.buf, close);
            if keep_from > 0 {
                emit(out, ChatEvent::ThinkingDelta, &self.buf[..keep_from]);
                self.buf.drain(..keep_from);
            }
        }

        fn emit_text(&mut self, text: &str, out: &mut Vec<ChatEvent>) {
            let State::Text { trim } = self.state else {
                return;
            };
            if trim {
                let rest = text.trim_start();
                if rest.is_empty() {
                    return;
                }
                self.state = State::Text { trim: false };
                emit(out, ChatEvent::TextDelta, rest);
            } else {
                emit(out, ChatEvent::TextDelta, text);
            }
        }
    }

    fn hold_point(buf: &str, close: &str) -> usize {
        let bytes = buf.as_bytes();
        let close = close.as_bytes();
        let longest = (close.len() - 1).min(bytes.len());
        let mut end = bytes.len();
        for k in (1..=longest).rev() {
            if bytes.ends_with(&close[..k]) {
                // close[0] is `<` (ASCII), so `end` is a char boundary.
                end = bytes.len() - k;
                break;
            }
        }
        buf.get(..end).map_or(0, |head| head.trim_end().len())
    }

    fn emit(out: &mut Vec<ChatEvent>, make: fn(String) -> ChatEvent, text: &str) {
        if !text.is_empty() {
            out.push(make(text.to_owned()));
        }
    }
}

/// Both splitters over the same chunks; `owned` pushes owned strings.
fn both(chunks: &[&str], owned: bool) -> (Vec<ChatEvent>, Vec<ChatEvent>) {
    let (mut new, mut old) = (ThinkingSplitter::new(), reference::OldSplitter::new());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for c in chunks {
        if owned {
            new.push(c.to_string(), &mut a);
        } else {
            new.push(*c, &mut a);
        }
        old.push(c, &mut b);
        assert_eq!(new.found_block(), old.found_block());
    }
    new.finish(&mut a);
    old.finish(&mut b);
    // Pushes after the end are plain text in both.
    new.push("<thinking>late", &mut a);
    old.push("<thinking>late", &mut b);
    (a, b)
}

#[test]
fn every_close_tag_has_one_lt_in_front() {
    for (open, close) in TAGS {
        assert!(open.starts_with('<') && close.starts_with("</"), "{open}");
        assert_eq!(close.matches('<').count(), 1, "{close}");
    }
}

#[test]
fn same_events_as_before_on_the_edge_cases() {
    for input in [
        "<thinking>\nStep 1.\nStep 2.\n</thinking>\n\nAnswer <b>bold</b>",
        "  <think>日本語の推論 🤔</think>\n答え ✅",
        "<thinking>a </thin",
        "<thinking>a <<</</thi</thinking \t</thinking> \n x",
        "\n\n<thinking>x</thinking></thinking>tail",
        "<thinking>   \n   ",
        "<reasoning>r</reasoning>",
    ] {
        let cuts: Vec<usize> = (0..=input.len())
            .filter(|&i| input.is_char_boundary(i))
            .collect();
        for &a in &cuts {
            for &b in cuts.iter().filter(|&&b| b >= a) {
                let chunks = [&input[..a], &input[a..b], &input[b..]];
                for owned in [false, true] {
                    let (new, old) = both(&chunks, owned);
                    assert_eq!(new, old, "cuts at {a},{b} of {input:?}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn same_events_as_before_for_any_chunking(
        pieces in prop::collection::vec(piece(), 0..16),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        owned in any::<bool>(),
    ) {
        let input: String = pieces.concat();
        let chunks = cut_at(&input, &cuts);
        let (new, old) = both(&chunks, owned);
        prop_assert_eq!(new, old);
    }
}
