//! A played response body: the [`Step`]s of an answer (bytes, pauses, a cut
//! connection), how an answer's frames are paced into steps ([`pace`]), and
//! [`EventStream`], the body that plays them and tells the stream counters
//! whether the client stayed to the end, and a JSON answer played so
//! (`json_body`). Every simulated service streams through it, whatever its
//! framing.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use futures::Stream;
use tokio::time::Sleep;

use crate::stats::{Outcome, StreamCounters, StreamGuard};

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

/// How an answer is paced: a wait before the first frame, a wait between
/// frames (each frame is then its own write), and whether the connection is
/// cut after the last frame.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pacing {
    pub first_delay: Duration,
    pub interval: Duration,
    pub abort: bool,
}

/// The steps that play `buf` (frames ending at `ends`) with `pacing`: one
/// write when nothing paces it.
pub(crate) fn pace(buf: Bytes, ends: &[usize], pacing: Pacing) -> VecDeque<Step> {
    let mut steps = VecDeque::new();
    let paced = !pacing.first_delay.is_zero() || !pacing.interval.is_zero();
    if !pacing.first_delay.is_zero() {
        steps.push_back(Step::Sleep(pacing.first_delay));
    }
    if paced {
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            if i > 0 && !pacing.interval.is_zero() {
                steps.push_back(Step::Sleep(pacing.interval));
            }
            steps.push_back(Step::Bytes(buf.slice(start..end)));
            start = end;
        }
    } else if !buf.is_empty() {
        steps.push_back(Step::Bytes(buf));
    }
    if pacing.abort {
        cut(&mut steps);
    }
    steps
}

/// End `steps` with a cut connection (after a pause that flushes what came before).
pub(crate) fn cut(steps: &mut VecDeque<Step>) {
    steps.push_back(Step::Sleep(FLUSH_BEFORE_ABORT));
    steps.push_back(Step::Abort);
}

/// A 200 JSON response whose body plays `steps` (not counted as a stream).
pub(crate) fn json_body(steps: VecDeque<Step>) -> Response {
    let guard = StreamGuard::start(Arc::new(StreamCounters::default()));
    let mut res = Response::new(Body::from_stream(EventStream::new(steps, guard)));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
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
