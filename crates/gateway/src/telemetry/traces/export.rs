//! The export of finished spans: a bounded queue that a request only ever
//! `try_send`s into (a full queue drops the span and counts it), and one
//! background task that posts the queue in batches to the OTLP/HTTP
//! endpoint, every `schedule_delay` or as soon as a batch is full.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::encode::{self, Origin};
use super::span::SpanRecord;
use crate::config::TraceExport;

/// Spans waiting for the exporter before new ones are dropped
/// (`OTEL_BSP_MAX_QUEUE_SIZE`'s default).
const QUEUE_CAPACITY: usize = 2048;
/// Spans in one export request (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`'s default).
const MAX_BATCH: usize = 512;
/// Time allowed for one export request (`OTEL_EXPORTER_OTLP_TIMEOUT`'s default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The sending side; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Exporter {
    tx: mpsc::Sender<SpanRecord>,
    dropped: Arc<AtomicU64>,
}

impl Exporter {
    /// Start the export task on the current runtime.
    pub(crate) fn start(settings: TraceExport, http: reqwest::Client) -> Exporter {
        let (tx, rx) = mpsc::channel(QUEUE_CAPACITY);
        let dropped = Arc::new(AtomicU64::new(0));
        #[expect(
            clippy::disallowed_methods,
            reason = "the export task ends by itself, after posting what is queued, when the state and the last span holding an Exporter are gone"
        )]
        tokio::spawn(run(settings, http, rx, dropped.clone()));
        Exporter { tx, dropped }
    }

    /// Queue a finished span; never waits.
    pub(crate) fn send(&self, span: SpanRecord) {
        if self.tx.try_send(span).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n % 1000 == 1 {
                tracing::warn!(dropped = n, "trace export is behind; spans dropped");
            }
        }
    }
}

async fn run(
    settings: TraceExport,
    http: reqwest::Client,
    mut rx: mpsc::Receiver<SpanRecord>,
    dropped: Arc<AtomicU64>,
) {
    let origin = Origin {
        service_name: settings.service_name.clone(),
        service_version: env!("CARGO_PKG_VERSION"),
    };
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // Wait for a first span, then gather until the delay passes or
        // the batch is full.
        let Some(first) = rx.recv().await else {
            return;
        };
        batch.push(first);
        let deadline = tokio::time::Instant::now() + settings.schedule_delay;
        let mut open = true;
        while batch.len() < MAX_BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(span)) => batch.push(span),
                Ok(None) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        post(&http, &settings.endpoint, &origin, &batch, &dropped).await;
        batch.clear();
        if !open {
            return;
        }
    }
}

async fn post(
    http: &reqwest::Client,
    endpoint: &str,
    origin: &Origin,
    batch: &[SpanRecord],
    dropped: &AtomicU64,
) {
    let body = encode::export_request(origin, batch);
    let sent = http
        .post(endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
        .timeout(EXPORT_TIMEOUT)
        .body(body)
        .send()
        .await;
    let problem = match sent {
        Ok(resp) if resp.status().is_success() => return,
        Ok(resp) => format!("the collector answered {}", resp.status().as_u16()),
        Err(e) => format!("the collector is unreachable ({})", e.without_url()),
    };
    dropped.fetch_add(batch.len() as u64, Ordering::Relaxed);
    tracing::warn!(spans = batch.len(), "trace export failed: {problem}");
}
