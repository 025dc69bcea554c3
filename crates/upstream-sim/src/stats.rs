//! Counters of streamed response bodies, so tests can assert that a client
//! disconnect reached the upstream (the body was dropped before its end).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A snapshot of the stream counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamStats {
    /// Streams whose body started (HTTP 200 event streams).
    pub started: u64,
    /// Streams that sent every planned frame.
    pub completed: u64,
    /// Streams whose body was dropped before its end: the client went away.
    pub cancelled: u64,
    /// Streams the simulator cut on purpose (the `disconnect` fault).
    pub aborted: u64,
    /// Streams still being sent.
    pub in_flight: u64,
}

#[derive(Debug, Default)]
pub(crate) struct StreamCounters {
    started: AtomicU64,
    completed: AtomicU64,
    cancelled: AtomicU64,
    aborted: AtomicU64,
}

impl StreamCounters {
    pub fn snapshot(&self) -> StreamStats {
        let started = self.started.load(Ordering::SeqCst);
        let completed = self.completed.load(Ordering::SeqCst);
        let cancelled = self.cancelled.load(Ordering::SeqCst);
        let aborted = self.aborted.load(Ordering::SeqCst);
        StreamStats {
            started,
            completed,
            cancelled,
            aborted,
            in_flight: started.saturating_sub(completed + cancelled + aborted),
        }
    }

    pub fn reset(&self) {
        // Only finished counts are reset; live streams still account for themselves.
        let live = self.snapshot().in_flight;
        self.started.store(live, Ordering::SeqCst);
        self.completed.store(0, Ordering::SeqCst);
        self.cancelled.store(0, Ordering::SeqCst);
        self.aborted.store(0, Ordering::SeqCst);
    }
}

/// How a stream ended, as far as the guard knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Running,
    Completed,
    Aborted,
}

/// Lives inside a response body; counts the stream as cancelled if dropped while running.
#[derive(Debug)]
pub(crate) struct StreamGuard {
    counters: Arc<StreamCounters>,
    outcome: Outcome,
}

impl StreamGuard {
    pub fn start(counters: Arc<StreamCounters>) -> Self {
        counters.started.fetch_add(1, Ordering::SeqCst);
        StreamGuard {
            counters,
            outcome: Outcome::Running,
        }
    }

    pub fn finish(&mut self, outcome: Outcome) {
        if self.outcome == Outcome::Running {
            self.outcome = outcome;
            let counter = match outcome {
                Outcome::Completed => &self.counters.completed,
                Outcome::Aborted => &self.counters.aborted,
                Outcome::Running => return,
            };
            counter.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if self.outcome == Outcome::Running {
            self.counters.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_running_stream_counts_as_cancelled() {
        let counters = Arc::new(StreamCounters::default());
        let g = StreamGuard::start(counters.clone());
        assert_eq!(counters.snapshot().in_flight, 1);
        drop(g);
        let s = counters.snapshot();
        assert_eq!((s.cancelled, s.in_flight), (1, 0));
    }

    #[test]
    fn finished_streams_are_not_cancelled() {
        let counters = Arc::new(StreamCounters::default());
        let mut a = StreamGuard::start(counters.clone());
        let mut b = StreamGuard::start(counters.clone());
        a.finish(Outcome::Completed);
        b.finish(Outcome::Aborted);
        b.finish(Outcome::Completed); // first outcome wins
        drop((a, b));
        let s = counters.snapshot();
        assert_eq!(
            (s.started, s.completed, s.aborted, s.cancelled),
            (2, 1, 1, 0)
        );
    }

    #[test]
    fn reset_keeps_live_streams() {
        let counters = Arc::new(StreamCounters::default());
        let live = StreamGuard::start(counters.clone());
        drop(StreamGuard::start(counters.clone()));
        counters.reset();
        assert_eq!(counters.snapshot().cancelled, 0);
        assert_eq!(counters.snapshot().in_flight, 1);
        drop(live);
        assert_eq!(counters.snapshot().cancelled, 1);
    }
}
