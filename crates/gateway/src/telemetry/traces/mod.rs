//! OpenTelemetry traces over OTLP/HTTP (interfaces-full.md 6), when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is
//! set.
//!
//! - Each `/v1` request gets a server span ([`ServerSpan`]), child of the
//!   client's `traceparent` when it sent a valid one ([`context`]). It is
//!   current for the request's handling through a task-local; the usage
//!   ticket of a chat call keeps a clone, so the span ends with the answer
//!   (a stream's too) and carries its tokens.
//! - Each upstream attempt is a client span ([`ClientSpan`]) whose context
//!   goes upstream in `traceparent`; a guardrail check is an internal span.
//! - Finished spans are encoded by hand ([`encode`]) and posted in batches
//!   by one background task ([`export`]); a request never waits for it, and
//!   a full queue drops spans.
//! - Off (no endpoint), nothing is created: every hook first reads one
//!   static flag ([`active`]) and returns.
//!
//! These spans are not `tracing` spans: the log's formatter never sees them,
//! and the log's `request` span keeps its one field.

pub(crate) mod context;
pub(crate) mod encode;
pub(crate) mod export;
pub(crate) mod span;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use export::Exporter;
pub(crate) use span::{AttrValue, ClientSpan, ServerSpan};

/// The status of an answer whose client went away (not the gateway's
/// failure).
pub(crate) const CLIENT_GONE: u16 = 499;

/// Whether some gateway of this process exports traces.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported at all (one relaxed load: the whole cost of
/// tracing when it is off).
#[inline]
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Start exporting with `settings` (on the current Tokio runtime).
pub(crate) fn start(settings: crate::config::TraceExport, http: reqwest::Client) -> Exporter {
    let exporter = Exporter::start(settings, http);
    ACTIVE.store(true, Ordering::Relaxed);
    exporter
}

tokio::task_local! {
    static CURRENT: ServerSpan;
}

/// Run `fut` with `span` as the request's current server span.
pub(crate) async fn scoped<F: Future>(span: ServerSpan, fut: F) -> F::Output {
    CURRENT.scope(span, fut).await
}

/// The current request's server span, when traces are exported and the
/// caller runs inside a request.
#[inline]
pub(crate) fn current() -> Option<ServerSpan> {
    if !active() {
        return None;
    }
    CURRENT.try_with(ServerSpan::clone).ok()
}
