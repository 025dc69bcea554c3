//! Frames and timing of a streamed answer: events are framed with the
//! project's event-stream codec (`wire::eventstream`), faults are applied
//! (exception/error frames, a bad CRC, a cut connection), and the result is
//! played by [`EventStream`], the response body, which also tells the stream
//! counters whether the client stayed to the end.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use serde_json::json;
use tokio::time::Sleep;
use wire::eventstream;

use super::events::SimEvent;
use super::scenario::{Fault, Scenario};
use crate::stats::{Outcome, StreamGuard};

/// Pause before cutting a connection, so the bytes before the cut are flushed.
const FLUSH_BEFORE_ABORT: Duration = Duration::from_millis(20);

/// One step of playing a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Bytes(Bytes),
    Sleep(Duration),
    /// End the body with an error: the server aborts the connection.
    Abort,
}

/// The `message` of an exception frame of this type.
fn exception_message(exception_type: &str) -> &'static str {
    let t = exception_type.to_ascii_lowercase();
    if t.starts_with("throttling") {
        "Too many requests, please wait before trying again."
    } else if t.starts_with("validation") {
        "Improperly formed request."
    } else if t.starts_with("servicequotaexceeded") {
        "You have reached the limit for requests this month."
    } else {
        "Encountered an unexpected error when processing the request, please try again."
    }
}

/// Frame `events` with the scenario's fault applied; returns the buffer and the
/// end offset of each frame.
pub fn frames(scenario: &Scenario, mut events: Vec<SimEvent>) -> (Bytes, Vec<usize>) {
    let mut out = BytesMut::with_capacity(events.len() * 128);
    let mut ends = Vec::with_capacity(events.len() + 1);
    if let Some(
        Fault::Exception { after, .. } | Fault::Error { after, .. } | Fault::Disconnect { after },
    ) = &scenario.fault
    {
        events.truncate(*after);
    }
    for event in &events {
        eventstream::encode_event(event.event_type(), &event.payload(), &mut out);
        ends.push(out.len());
    }
    match &scenario.fault {
        Some(Fault::Exception { exception_type, .. }) => {
            let payload = json!({"message": exception_message(exception_type)}).to_string();
            eventstream::encode_exception(exception_type, payload.as_bytes(), &mut out);
            ends.push(out.len());
        }
        Some(Fault::Error { code, .. }) => {
            eventstream::encode_error(code, "upstream-sim: injected error frame", &mut out);
            ends.push(out.len());
        }
        Some(Fault::CorruptCrc { at }) => {
            let target = (*at).min(ends.len().saturating_sub(1));
            if let Some(end) = ends.get(target) {
                // The last byte of a frame belongs to its message CRC.
                if let Some(b) = out.get_mut(end - 1) {
                    *b ^= 0xFF;
                }
            }
        }
        Some(Fault::Disconnect { .. }) | None => {}
    }
    (out.freeze(), ends)
}

/// The steps that play `frames` with the scenario's timing.
pub fn steps(scenario: &Scenario, buf: Bytes, ends: &[usize]) -> VecDeque<Step> {
    let mut steps = VecDeque::new();
    let paced = !scenario.first_delay.is_zero() || !scenario.interval.is_zero();
    if !scenario.first_delay.is_zero() {
        steps.push_back(Step::Sleep(scenario.first_delay));
    }
    if paced {
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            if i > 0 && !scenario.interval.is_zero() {
                steps.push_back(Step::Sleep(scenario.interval));
            }
            steps.push_back(Step::Bytes(buf.slice(start..end)));
            start = end;
        }
    } else if !buf.is_empty() {
        steps.push_back(Step::Bytes(buf));
    }
    if matches!(scenario.fault, Some(Fault::Disconnect { .. })) {
        steps.push_back(Step::Sleep(FLUSH_BEFORE_ABORT));
        steps.push_back(Step::Abort);
    }
    steps
}

/// A response body that plays steps and reports how it ended.
pub struct EventStream {
    steps: VecDeque<Step>,
    sleep: Option<Pin<Box<Sleep>>>,
    guard: StreamGuard,
}

impl EventStream {
    pub(crate) fn new(steps: VecDeque<Step>, guard: StreamGuard) -> Self {
        EventStream {
            steps,
            sleep: None,
            guard,
        }
    }
}

impl Stream for EventStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(sleep) = this.sleep.as_mut() {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
            }
            match this.steps.pop_front() {
                None => {
                    this.guard.finish(Outcome::Completed);
                    return Poll::Ready(None);
                }
                Some(Step::Bytes(bytes)) => {
                    if this.steps.is_empty() {
                        // Every byte is handed over: the stream is complete.
                        this.guard.finish(Outcome::Completed);
                    }
                    return Poll::Ready(Some(Ok(bytes)));
                }
                Some(Step::Sleep(d)) => this.sleep = Some(Box::pin(tokio::time::sleep(d))),
                Some(Step::Abort) => {
                    this.guard.finish(Outcome::Aborted);
                    return Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "upstream-sim: disconnect fault",
                    ))));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
