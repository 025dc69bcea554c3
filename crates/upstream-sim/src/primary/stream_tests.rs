use super::*;
use crate::stats::{StreamCounters, StreamGuard};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use wire::eventstream::{Decoder, EventStreamError, Message};

fn events(n: usize) -> Vec<SimEvent> {
    (0..n)
        .map(|i| SimEvent::Text(format!("part {i}")))
        .collect()
}

/// Decode every frame; returns (kind, name, payload) triples and the first error.
fn decode(buf: &[u8]) -> (Vec<(String, String, String)>, Option<EventStreamError>) {
    let mut dec = Decoder::new();
    let mut bytes = BytesMut::from(buf);
    let mut out = Vec::new();
    loop {
        match dec.decode(&mut bytes) {
            Ok(Some(frame)) => {
                let entry = match frame.message().unwrap() {
                    Message::Event {
                        event_type,
                        payload,
                    } => (
                        "event".to_owned(),
                        event_type.to_owned(),
                        String::from_utf8(payload.to_vec()).unwrap(),
                    ),
                    Message::Exception {
                        exception_type,
                        payload,
                    } => (
                        "exception".to_owned(),
                        exception_type.to_owned(),
                        String::from_utf8(payload.to_vec()).unwrap(),
                    ),
                    Message::Error { code, message } => {
                        ("error".to_owned(), code.to_owned(), message.to_owned())
                    }
                };
                out.push(entry);
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

#[test]
fn plain_frames_decode_in_order() {
    let (buf, ends) = frames(&Scenario::text(1, 1), events(3));
    assert_eq!(ends.len(), 3);
    assert_eq!(*ends.last().unwrap(), buf.len());
    let (decoded, err) = decode(&buf);
    assert!(err.is_none());
    assert_eq!(
        decoded[2],
        (
            "event".into(),
            "assistantResponseEvent".into(),
            r#"{"content":"part 2"}"#.into()
        )
    );
}

#[test]
fn exception_and_error_faults_replace_the_rest() {
    let s: Scenario = "text exception_after=2 exception=throttlingException"
        .parse()
        .unwrap();
    let (buf, ends) = frames(&s, events(5));
    assert_eq!(ends.len(), 3);
    let (decoded, err) = decode(&buf);
    assert!(err.is_none());
    assert_eq!(decoded.len(), 3);
    assert_eq!(decoded[2].0, "exception");
    assert_eq!(decoded[2].1, "throttlingException");
    assert!(decoded[2].2.contains("Too many requests"));

    let s: Scenario = "text error_after=0".parse().unwrap();
    let (buf, _) = frames(&s, events(5));
    let (decoded, _) = decode(&buf);
    assert_eq!(
        decoded,
        vec![(
            "error".into(),
            "InternalError".into(),
            "upstream-sim: injected error frame".into()
        )]
    );
}

#[test]
fn corrupt_crc_stops_the_decoder_at_that_frame() {
    let s: Scenario = "text corrupt_at=1".parse().unwrap();
    let (buf, ends) = frames(&s, events(3));
    assert_eq!(ends.len(), 3, "later frames are still sent");
    let (decoded, err) = decode(&buf);
    assert_eq!(decoded.len(), 1);
    assert!(matches!(err, Some(EventStreamError::MessageCrc { .. })));
    // Past the end: the last frame is the corrupt one.
    let s: Scenario = "text corrupt_at=99".parse().unwrap();
    let (buf, _) = frames(&s, events(2));
    let (decoded, err) = decode(&buf);
    assert_eq!(decoded.len(), 1);
    assert!(err.is_some());
}

#[test]
fn steps_coalesce_unless_paced() {
    let s = Scenario::text(1, 1);
    let (buf, ends) = frames(&s, events(3));
    let plain = steps(&s, buf.clone(), &ends);
    assert_eq!(plain, VecDeque::from([Step::Bytes(buf.clone())]));

    let paced: Scenario = "text delay=50 interval=10".parse().unwrap();
    let st: Vec<_> = steps(&paced, buf.clone(), &ends).into_iter().collect();
    assert_eq!(st.len(), 1 + 3 + 2);
    assert_eq!(st[0], Step::Sleep(Duration::from_millis(50)));
    assert_eq!(st[1], Step::Bytes(buf.slice(0..ends[0])));
    assert_eq!(st[2], Step::Sleep(Duration::from_millis(10)));

    let cut: Scenario = "text disconnect_after=2".parse().unwrap();
    let (buf, ends) = frames(&cut, events(3));
    assert_eq!(ends.len(), 2);
    let st: Vec<_> = steps(&cut, buf, &ends).into_iter().collect();
    assert_eq!(st.last(), Some(&Step::Abort));
}

#[tokio::test]
async fn event_stream_plays_steps_and_counts() {
    let counters = Arc::new(StreamCounters::default());
    let st = VecDeque::from([
        Step::Bytes(Bytes::from_static(b"a")),
        Step::Sleep(Duration::from_millis(1)),
        Step::Bytes(Bytes::from_static(b"b")),
    ]);
    let mut body = EventStream::new(st, StreamGuard::start(counters.clone()));
    assert_eq!(body.next().await.unwrap().unwrap(), "a");
    assert_eq!(body.next().await.unwrap().unwrap(), "b");
    assert_eq!(counters.snapshot().completed, 1);
    assert!(body.next().await.is_none());
    drop(body);
    assert_eq!(counters.snapshot().cancelled, 0);

    let st = VecDeque::from([Step::Bytes(Bytes::from_static(b"a")), Step::Abort]);
    let mut body = EventStream::new(st, StreamGuard::start(counters.clone()));
    assert!(body.next().await.unwrap().is_ok());
    assert!(body.next().await.unwrap().is_err());
    drop(body);
    let s = counters.snapshot();
    assert_eq!((s.aborted, s.cancelled), (1, 0));

    let st = VecDeque::from([
        Step::Bytes(Bytes::from_static(b"a")),
        Step::Sleep(Duration::from_secs(60)),
    ]);
    let mut body = EventStream::new(st, StreamGuard::start(counters.clone()));
    assert!(body.next().await.is_some());
    drop(body);
    assert_eq!(counters.snapshot().cancelled, 1);
}
