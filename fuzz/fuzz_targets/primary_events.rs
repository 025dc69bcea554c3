//! `primary` event payloads, one per line as `eventType payload` (the
//! conformance `.frames` format): the borrowed views read exactly what the
//! owned types read, errors included; then the whole answer goes through the
//! stream parser (with and without the thinking splitter) and the collector.
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::primary::{ParserOptions, StreamParser};
use translate::Collector;
use wire::eventstream::Message;
use wire::primary::{event_type as t, Event, EventView};

/// How the owned types read a payload on their own.
fn owned(name: &str, payload: &[u8]) -> Result<Event, serde_json::Error> {
    use serde_json::from_slice as f;
    Ok(match name {
        t::ASSISTANT_RESPONSE => Event::AssistantResponse(f(payload)?),
        t::TOOL_USE => Event::ToolUse(f(payload)?),
        t::REASONING_CONTENT => Event::ReasoningContent(f(payload)?),
        t::METERING => Event::Metering(f(payload)?),
        t::CONTEXT_USAGE => Event::ContextUsage(f(payload)?),
        t::METADATA => Event::Metadata(f(payload)?),
        t::MESSAGE_METADATA => Event::MessageMetadata(f(payload)?),
        t::INVALID_STATE => Event::InvalidState(f(payload)?),
        _ => Event::Other,
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut messages = Vec::new();
    for line in rest.split(|&b| b == b'\n') {
        if line.first() == Some(&b'#') {
            continue;
        }
        let at = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
        let (name, payload) = line.split_at(at);
        let payload = payload.get(1..).unwrap_or_default();
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let view = EventView::parse(name, payload).map(EventView::into_owned);
        match (view, owned(name, payload)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("view {a:?} vs owned {b:?}"),
        }
        // Lines starting with `!` are exceptions, as the upstream sends them.
        messages.push(match name.strip_prefix('!') {
            Some(exception_type) => Message::Exception {
                exception_type,
                payload,
            },
            None => Message::Event {
                event_type: name,
                payload,
            },
        });
    }
    let opts = ParserOptions {
        extract_thinking: flags & 1 == 1,
        context_window: (flags & 2 == 2).then_some(200_000),
        claude_tokens: flags & 4 == 4,
    };
    let mut parser = StreamParser::new(opts);
    let mut events = Vec::new();
    for msg in &messages {
        parser.push(msg, &mut events);
    }
    let summary = parser.finish(&mut events);
    let mut collector = Collector::new();
    for event in events {
        collector.push(event);
    }
    let collected = collector.finish();
    assert_eq!(collected.is_err(), summary.error.is_some());
});
