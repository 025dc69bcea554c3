//! Frames and timing of a streamed answer: events are framed with the
//! project's event-stream codec (`wire::eventstream`), faults are applied
//! (exception/error frames, a bad CRC, a cut connection), and the result is
//! paced into the steps that [`EventStream`] (`crate::body`) plays.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use serde_json::json;
use wire::eventstream;

use super::events::SimEvent;
use super::scenario::{Fault, Scenario};
use crate::body::{self, Pacing};
pub use crate::body::{EventStream, Step};

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
    let pacing = Pacing {
        first_delay: scenario.first_delay,
        interval: scenario.interval,
        abort: matches!(scenario.fault, Some(Fault::Disconnect { .. })),
    };
    body::pace(buf, ends, pacing)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
