//! SSE framing of vendor answers and how they are played: events are written
//! into one buffer (remembering where each ends), the scenario's fault cuts
//! or ends the list, and its timing turns it into the steps the shared
//! response body ([`crate::body::EventStream`]) plays.
//!
//! The framing is written here rather than with the project's SSE encoder, so
//! the simulator does not share the gateway's understanding of the format.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use serde::Serialize;

use super::scenario::{VendorFault, VendorScenario};
use crate::body::{cut, pace, Pacing, Step};

/// SSE events written into one buffer.
#[derive(Debug, Default)]
pub(crate) struct SseFrames {
    buf: BytesMut,
    ends: Vec<usize>,
}

impl SseFrames {
    pub fn new() -> Self {
        SseFrames {
            buf: BytesMut::with_capacity(4096),
            ends: Vec::new(),
        }
    }

    /// `event: NAME` / `data: DATA` and the blank line.
    pub fn event(&mut self, name: &str, data: &[u8]) {
        self.buf.extend_from_slice(b"event: ");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\n");
        self.data(data);
    }

    /// `data: DATA` and the blank line.
    pub fn data(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(b"data: ");
        self.buf.extend_from_slice(data);
        self.buf.extend_from_slice(b"\n\n");
        self.ends.push(self.buf.len());
    }

    /// A named event whose data is `value` as compact JSON.
    pub fn json_event(&mut self, name: &str, value: &impl Serialize) {
        self.event(name, &to_json(value));
    }

    /// A data-only event whose data is `value` as compact JSON.
    pub fn json_data(&mut self, value: &impl Serialize) {
        self.data(&to_json(value));
    }

    /// Number of events written.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The first `n` events and the rest of the buffer dropped.
    fn keep(&mut self, n: usize) {
        if n < self.ends.len() {
            let end = if n == 0 { 0 } else { self.ends[n - 1] };
            self.buf.truncate(end);
            self.ends.truncate(n);
        }
    }
}

/// Compact JSON; the simulator's own values always serialize.
pub(crate) fn to_json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec())
}

/// The steps that play `frames` with the scenario's fault and timing.
/// `error_event` writes the format's in-stream error (given the fault's type).
pub(crate) fn play(
    scenario: &VendorScenario,
    mut frames: SseFrames,
    error_event: impl FnOnce(&mut SseFrames, Option<&str>),
) -> VecDeque<Step> {
    let mut abort = false;
    match &scenario.fault {
        Some(VendorFault::Disconnect { after }) => {
            frames.keep(*after);
            abort = true;
        }
        Some(VendorFault::ErrorEvent { after, error_type }) => {
            frames.keep(*after);
            error_event(&mut frames, error_type.as_deref());
        }
        None => {}
    }
    let pacing = Pacing {
        first_delay: scenario.first_delay,
        interval: scenario.interval,
        abort,
    };
    pace(frames.buf.freeze(), &frames.ends, pacing)
}

/// The steps of a non-streaming body: the first delay, then the body; with
/// the disconnect fault, half of it and a cut connection.
pub(crate) fn play_body(scenario: &VendorScenario, body: Bytes) -> VecDeque<Step> {
    let mut steps = VecDeque::new();
    if !scenario.first_delay.is_zero() {
        steps.push_back(Step::Sleep(scenario.first_delay));
    }
    if matches!(scenario.fault, Some(VendorFault::Disconnect { .. })) {
        steps.push_back(Step::Bytes(body.slice(..body.len() / 2)));
        cut(&mut steps);
    } else {
        steps.push_back(Step::Bytes(body));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn three() -> SseFrames {
        let mut f = SseFrames::new();
        f.json_event("a", &json!({"n": 1}));
        f.data(b"two");
        f.json_data(&json!([3]));
        f
    }

    fn bytes(steps: &VecDeque<Step>) -> Vec<u8> {
        steps
            .iter()
            .filter_map(|s| match s {
                Step::Bytes(b) => Some(b.to_vec()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    #[test]
    fn frames_are_sse_and_unpaced_answers_are_one_write() {
        let steps = play(&VendorScenario::default_answer(), three(), |_, _| {});
        assert_eq!(steps.len(), 1);
        assert_eq!(
            bytes(&steps),
            b"event: a\ndata: {\"n\":1}\n\ndata: two\n\ndata: [3]\n\n"
        );
    }

    #[test]
    fn paced_answers_write_each_event() {
        let s = VendorScenario::default_answer()
            .with_first_delay(Duration::from_millis(7))
            .with_interval(Duration::from_millis(1));
        let steps = play(&s, three(), |_, _| {});
        assert_eq!(steps[0], Step::Sleep(Duration::from_millis(7)));
        let writes = steps.iter().filter(|s| matches!(s, Step::Bytes(_))).count();
        assert_eq!(writes, 3);
        assert_eq!(steps.len(), 6);
    }

    #[test]
    fn faults_cut_or_end_the_list() {
        let s = VendorScenario::default_answer().with_fault(VendorFault::Disconnect { after: 1 });
        let steps = play(&s, three(), |_, _| {});
        assert_eq!(bytes(&steps), b"event: a\ndata: {\"n\":1}\n\n");
        assert_eq!(steps.back(), Some(&Step::Abort));

        let s = VendorScenario::default_answer().with_fault(VendorFault::ErrorEvent {
            after: 2,
            error_type: Some("boom".into()),
        });
        let steps = play(&s, three(), |f, t| f.event("error", t.unwrap().as_bytes()));
        assert_eq!(
            bytes(&steps),
            b"event: a\ndata: {\"n\":1}\n\ndata: two\n\nevent: error\ndata: boom\n\n"
        );
        // A fault after more events than there are keeps everything.
        let s = VendorScenario::default_answer().with_fault(VendorFault::Disconnect { after: 9 });
        assert_eq!(bytes(&play(&s, three(), |_, _| {})).len(), 46);
    }

    #[test]
    fn bodies_are_cut_in_half_on_disconnect() {
        let body = Bytes::from_static(b"0123456789");
        let s = VendorScenario::default_answer().with_fault(VendorFault::Disconnect { after: 0 });
        let steps = play_body(&s, body.clone());
        assert_eq!(bytes(&steps), b"01234");
        assert_eq!(steps.back(), Some(&Step::Abort));
        assert_eq!(
            bytes(&play_body(&VendorScenario::echo(), body)),
            b"0123456789"
        );
    }
}
