//! The messages format's half of the native-stream watch ([`crate::watch`]):
//! `message_start` and `message_delta` carry usage; a stop reason or
//! `message_stop` completes the answer; `error` is an error, classified by
//! [`super::provider_error`] as the stream parser does; every other event
//! (deltas, `ping`, unknown ones) is not parsed at all.

use serde::Deserialize;
use wire::anthropic as w;
use wire::sse::SseEvent;

use super::{provider_error, usage_from_stream};
use crate::model::{StreamError, Usage};
use crate::watch::{Ending, Seen};

/// Side view of one messages-format stream.
#[derive(Debug, Default, Clone)]
pub struct StreamWatch {
    usage: Usage,
    stopped: bool,
}

/// The parts of the events the watch reads; everything else is skipped.
#[derive(Deserialize)]
struct StartEvent {
    message: StartMessage,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<w::StreamUsage>,
}

#[derive(Deserialize)]
struct DeltaEvent {
    #[serde(default)]
    delta: Option<DeltaBody>,
    #[serde(default)]
    usage: Option<w::StreamUsage>,
}

#[derive(Deserialize)]
struct DeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    error: w::ErrorDetail,
}

impl StreamWatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one event of the stream.
    pub fn observe(&mut self, ev: &SseEvent) -> Seen {
        let mut seen = Seen::default();
        match ev.event.as_deref() {
            Some("message_start") => {
                if let Ok(start) = serde_json::from_str::<StartEvent>(&ev.data) {
                    if let Some(u) = start.message.usage {
                        self.usage.merge(&usage_from_stream(&u));
                    }
                }
            }
            // Openings only: the first delta tells whether the answer really started.
            Some("ping" | "content_block_start") => {}
            Some("message_delta") => {
                seen.substantive = true;
                if let Ok(delta) = serde_json::from_str::<DeltaEvent>(&ev.data) {
                    if let Some(u) = delta.usage {
                        self.usage.merge(&usage_from_stream(&u));
                    }
                    if delta.delta.and_then(|d| d.stop_reason).is_some() {
                        self.stopped = true;
                    }
                }
            }
            Some("message_stop") => {
                seen.substantive = true;
                self.stopped = true;
            }
            Some("error") => {
                seen.substantive = true;
                seen.error = Some(match serde_json::from_str::<ErrorEvent>(&ev.data) {
                    Ok(e) => provider_error(&e.error),
                    Err(_) => StreamError::upstream(502, ev.data.clone()),
                });
            }
            _ => seen.substantive = true,
        }
        seen
    }

    /// Complete once a stop reason or `message_stop` arrived, else cut.
    pub fn ending(&self) -> Ending {
        if self.stopped {
            Ending::Complete
        } else {
            Ending::Cut
        }
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }
}
