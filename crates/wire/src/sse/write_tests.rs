use bytes::BytesMut;

use super::*;

fn written(f: impl FnOnce(&mut BytesMut)) -> String {
    let mut out = BytesMut::new();
    f(&mut out);
    String::from_utf8(out.to_vec()).unwrap()
}

fn reparse(bytes: &str) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    parser.feed(bytes.as_bytes());
    let mut events = Vec::new();
    while let Some(event) = parser.next_event().unwrap() {
        events.push(event);
    }
    events
}

#[test]
fn data_frame_bytes() {
    assert_eq!(
        written(|o| write_data(o, br#"{"a":1}"#)),
        "data: {\"a\":1}\n\n"
    );
    assert_eq!(written(|o| write_data(o, b"")), "data: \n\n");
    assert_eq!(DONE, b"data: [DONE]\n\n");
    assert_eq!(
        reparse(std::str::from_utf8(DONE).unwrap())[0].data,
        "[DONE]"
    );
}

#[test]
fn event_frame_bytes() {
    assert_eq!(
        written(|o| write_event(o, "message_stop", br#"{"type":"message_stop"}"#)),
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
}

#[test]
fn comment_frame_bytes() {
    assert_eq!(
        written(|o| write_comment(o, "keep-alive")),
        ": keep-alive\n\n"
    );
    assert!(reparse(&written(|o| write_comment(o, "a\nb"))).is_empty());
}

#[test]
fn multi_line_data_round_trips() {
    let text = written(|o| write_data(o, b"a\nb\n\nc\n"));
    assert_eq!(text, "data: a\ndata: b\ndata: \ndata: c\ndata: \n\n");
    assert_eq!(reparse(&text)[0].data, "a\nb\n\nc\n");
    // CR and CR LF come back as LF.
    let text = written(|o| write_data(o, b"a\r\nb\rc"));
    assert_eq!(reparse(&text)[0].data, "a\nb\nc");
}

#[test]
fn event_name_line_breaks_cannot_break_framing() {
    let text = written(|o| write_event(o, "a\nb\r\nc", b"x"));
    assert_eq!(text, "event: a b  c\ndata: x\n\n");
    let events = reparse(&text);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event.as_deref(), Some("a b  c"));
}

#[test]
fn appends_to_existing_output() {
    let mut out = BytesMut::from(&b"data: 1\n\n"[..]);
    write_data(&mut out, b"2");
    assert_eq!(&out[..], b"data: 1\n\ndata: 2\n\n");
}
