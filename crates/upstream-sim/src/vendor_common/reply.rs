//! The vendors' played responses: a streamed answer counted per vendor (a
//! JSON body played with the scenario's timing is `crate::body::json_body`).

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;

use crate::body::{EventStream, Step};
use crate::stats::{StreamCounters, StreamGuard};

/// `Content-Type` of streamed answers.
pub(crate) const SSE_CONTENT_TYPE: &str = "text/event-stream; charset=utf-8";

/// A 200 response whose body plays `steps`, counted as a stream in `counters`.
pub(crate) fn streamed(
    steps: VecDeque<Step>,
    counters: Arc<StreamCounters>,
    content_type: &'static str,
) -> Response {
    let guard = StreamGuard::start(counters);
    let mut res = Response::new(Body::from_stream(EventStream::new(steps, guard)));
    *res.status_mut() = StatusCode::OK;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}
