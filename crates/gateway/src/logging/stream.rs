//! The live log stream's source (issue 18; interfaces-full.md 6): a
//! `tracing` layer that keeps the last [`RING_LINES`] lines in memory and
//! hands each new one to the subscribers of the admin log stream.
//!
//! Logging never waits for a reader: a line goes into the ring (a short
//! lock, no I/O) and into a bounded broadcast channel; a reader that falls
//! behind loses lines and is told how many. A line is kept compact (its
//! fields already written as one JSON object, the time as a number) and
//! turned into the wire event only when someone reads it. Secret-named
//! fields are masked here too, on top of the masking every call site does
//! before it logs a body or a header.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use tokio::sync::broadcast;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Lines kept for replay.
pub const RING_LINES: usize = 1000;
/// Lines a reader may fall behind before it loses some.
const CHANNEL_LINES: usize = 1024;

/// One log line as it was logged.
#[derive(Debug)]
pub struct LogLine {
    /// Order of logging, from 1.
    pub seq: u64,
    pub at: SystemTime,
    pub level: Level,
    pub target: &'static str,
    pub message: String,
    /// The line's other fields as one JSON object (UTF-8).
    pub fields_json: Vec<u8>,
    /// The `request_id` of the request span the line was logged in.
    pub request_id: Option<Arc<str>>,
}

/// The ring and the channel, one per process (the subscriber is global).
#[derive(Debug)]
pub struct LogHub {
    ring: Mutex<VecDeque<Arc<LogLine>>>,
    live: broadcast::Sender<Arc<LogLine>>,
    next: AtomicU64,
}

/// The process's hub.
pub fn hub() -> &'static LogHub {
    static HUB: OnceLock<LogHub> = OnceLock::new();
    HUB.get_or_init(|| LogHub {
        ring: Mutex::new(VecDeque::with_capacity(RING_LINES)),
        live: broadcast::channel(CHANNEL_LINES).0,
        next: AtomicU64::new(1),
    })
}

impl LogHub {
    fn push(&self, mut line: LogLine) {
        let Ok(mut ring) = self.ring.lock() else {
            return;
        };
        // Numbered under the lock: the ring is in order.
        line.seq = self.next.fetch_add(1, Ordering::Relaxed);
        let line = Arc::new(line);
        if ring.len() == RING_LINES {
            ring.pop_front();
        }
        ring.push_back(line.clone());
        drop(ring);
        // No reader: the line is dropped here, nothing waits.
        let _ = self.live.send(line);
    }

    /// A reader: the lines kept now (oldest first) and the live lines
    /// after them.
    pub fn subscribe(&self) -> (Vec<Arc<LogLine>>, broadcast::Receiver<Arc<LogLine>>) {
        // Subscribed under the ring's lock, so no line falls between the two.
        let ring = self
            .ring
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default();
        let live = self.live.subscribe();
        (ring, live)
    }
}

/// The `tracing` layer that feeds [`hub`].
#[derive(Debug, Default)]
pub struct StreamLayer;

/// The `request_id` of a `request` span, kept in its extensions.
struct RequestIdOf(Arc<str>);

impl<S> Layer<S> for StreamLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "request" {
            return;
        }
        let mut visitor = RequestIdVisitor(None);
        attrs.record(&mut visitor);
        if let (Some(request_id), Some(span)) = (visitor.0, ctx.span(id)) {
            span.extensions_mut().insert(RequestIdOf(request_id));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        // Room for an access line's fields (about 250 bytes in full mode):
        // from 64 bytes the buffer grew twice a line.
        let mut fields = FieldsVisitor {
            message: String::new(),
            json: Vec::with_capacity(320),
        };
        event.record(&mut fields);
        fields.json.push(b'}');
        if fields.json.len() == 1 {
            fields.json.insert(0, b'{');
        } else {
            fields.json[0] = b'{';
        }
        let request_id = ctx.event_scope(event).and_then(|mut scope| {
            scope.find_map(|span| span.extensions().get::<RequestIdOf>().map(|r| r.0.clone()))
        });
        hub().push(LogLine {
            seq: 0,
            at: SystemTime::now(),
            level: *meta.level(),
            target: meta.target(),
            message: fields.message,
            fields_json: fields.json,
            request_id,
        });
    }
}

struct RequestIdVisitor(Option<Arc<str>>);

impl Visit for RequestIdVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "request_id" {
            self.0 = Some(Arc::from(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "request_id" {
            self.0 = Some(Arc::from(format!("{value:?}").as_str()));
        }
    }
}

/// Writes `message` apart and every other field as `,"name":value` (the
/// first comma becomes the object's `{`).
struct FieldsVisitor {
    message: String,
    json: Vec<u8>,
}

impl FieldsVisitor {
    fn name(&mut self, field: &Field) -> bool {
        let name = field.name();
        if name.starts_with("log.") {
            return false;
        }
        let name = name.strip_prefix("r#").unwrap_or(name);
        // Field names are identifiers, which need no escaping: written
        // as they are (the escaper's scan was about 175 instructions a
        // name, six names an access line).
        self.json.push(b',');
        if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.json.push(b'"');
            self.json.extend_from_slice(name.as_bytes());
            self.json.push(b'"');
        } else {
            wire::json::write_str(&mut self.json, name);
        }
        self.json.push(b':');
        true
    }

    fn text(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            value.clone_into(&mut self.message);
        } else if self.name(field) {
            let shown = if secret_name(field.name()) {
                super::MASK
            } else {
                value
            };
            wire::json::write_str(&mut self.json, shown);
        }
    }
}

/// [`super::is_secret_key`] of a field name, remembered per name: field
/// names are `'static` and few, and the check itself allocates.
fn secret_name(name: &'static str) -> bool {
    thread_local! {
        static KNOWN: std::cell::RefCell<Vec<(usize, bool)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = name.as_ptr() as usize ^ name.len();
    KNOWN.with(|known| {
        let Ok(mut known) = known.try_borrow_mut() else {
            return super::is_secret_key(name);
        };
        if let Some(&(_, secret)) = known.iter().find(|(k, _)| *k == key) {
            return secret;
        }
        let secret = super::is_secret_key(name);
        if known.len() < 256 {
            known.push((key, secret));
        }
        secret
    })
}

impl Visit for FieldsVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // Written into a buffer kept per thread: no allocation per field.
        thread_local! {
            static SCRATCH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.clear();
                let _ = std::fmt::Write::write_fmt(&mut *scratch, format_args!("{value:?}"));
                self.text(field, &scratch);
            }
            // A value whose formatting logs (re-entered): a buffer of its own.
            Err(_) => self.text(field, &format!("{value:?}")),
        });
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.name(field) {
            self.json
                .extend_from_slice(if value { b"true" } else { b"false" });
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.name(field) {
            wire::json::write_uint(&mut self.json, value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.name(field) {
            self.json
                .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if !self.name(field) {
            return;
        }
        if let Some(text) = super::tenths::text(value, &mut [0; 24]) {
            self.json.extend_from_slice(text.as_bytes());
            return;
        }
        // serde_json's number, written in place (`null` when not finite).
        if serde_json::to_writer(&mut self.json, &value).is_err() {
            self.json.extend_from_slice(b"null");
        }
    }
}

/// The numeric rank of a level, most severe lowest (`error` 1 ... `trace` 5).
pub fn rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// The hub is the process's: these tests take turns.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    #[test]
    fn lines_carry_fields_masked_and_their_request() {
        let _turn = ONE_AT_A_TIME.lock();
        let subscriber = tracing_subscriber::registry().with(StreamLayer);
        let (_, mut live) = hub().subscribe();
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request", request_id = %"req-7");
            let _guard = span.enter();
            tracing::info!(
                status = 200u64,
                ok = true,
                api_key = "sk-secret",
                path = "/v1/x\"y",
                r#type = "t",
                "dotted.name" = 1u64,
                "request done"
            );
        });
        let line = loop {
            let line = live.try_recv().unwrap();
            if line.message == "request done" {
                break line;
            }
        };
        assert_eq!(line.level, Level::INFO);
        assert_eq!(line.request_id.as_deref(), Some("req-7"));
        let fields: serde_json::Value = serde_json::from_slice(&line.fields_json).unwrap();
        assert_eq!(
            fields,
            serde_json::json!({"status": 200, "ok": true, "api_key": "***", "path": "/v1/x\"y",
                "type": "t", "dotted.name": 1})
        );
        let (ring, _) = hub().subscribe();
        assert!(ring.iter().any(|l| l.seq == line.seq));
    }

    #[test]
    fn a_reader_that_falls_behind_loses_lines_and_logging_goes_on() {
        let _turn = ONE_AT_A_TIME.lock();
        let subscriber = tracing_subscriber::registry().with(StreamLayer);
        let (_, mut slow) = hub().subscribe();
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..(CHANNEL_LINES + 100) {
                tracing::info!(i, "line");
            }
        });
        match slow.try_recv() {
            Err(broadcast::error::TryRecvError::Lagged(n)) => assert!(n >= 100, "{n}"),
            other => panic!("expected lagged, got {other:?}"),
        }
        let (ring, _) = hub().subscribe();
        assert_eq!(ring.len(), RING_LINES);
    }
}
