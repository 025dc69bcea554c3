//! Usage accounting of `/v1` in full deployment (spec 2.9), off the hot path.
//!
//! - The client-auth middleware opens a [`UsageTicket`] for every
//!   authenticated request (user, key, start time) and puts it in the
//!   request extensions; the pipeline notes on it the provider and model it
//!   chose ([`UsageTicket::route`]), the usage it saw
//!   ([`UsageTicket::add_usage`]) and how a stream ended
//!   ([`UsageTicket::stream_failed`], [`UsageTicket::client_gone`]); the
//!   middleware notes the HTTP status ([`UsageTicket::respond`]).
//! - In proxy mode a chat call gets an unrecorded ticket
//!   ([`UsageTicket::unrecorded`]): nothing is written, but the answer's
//!   metrics (duration to the stream's end, first token, tokens) come from
//!   tickets in both modes when they end.
//! - When the last clone of a ticket is dropped (the response is complete,
//!   or the task writing a stream has finished) it becomes one
//!   [`UsageRecord`] and goes into a bounded channel with `try_send`: the
//!   request never waits for the database, and when the writer falls behind
//!   by [`CHANNEL_CAPACITY`] records, records are dropped and counted rather
//!   than slowing clients.
//! - One writer task ([`writer`]) drains the channel in batches into few
//!   multi-row `INSERT`s, and records the last use of each key at most every
//!   [`writer::LAST_USED_EVERY`]; it costs each record at the model
//!   registry's prices ([`prices::PriceBook`]) as it takes it.
//! - Only chat calls (`/v1/chat/completions`, `/v1/messages`) are usage;
//!   other calls (`/v1/models`, count_tokens) only mark the key as used.

pub(crate) mod prices;
pub(crate) mod writer;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::mpsc;
use translate::Usage;

use crate::limits::{Charge, RateHeaders};
use crate::store::api_keys::KeyOwner;
use crate::store::clock;
use crate::store::ids::ApiKeyId;
use crate::store::usage::UsageRecord;
use crate::telemetry::{self, Endpoint};

/// Records waiting for the writer before new ones are dropped.
pub(crate) const CHANNEL_CAPACITY: usize = 20_000;
/// Status recorded when the client went away before the answer ended
/// (the common "client closed request" convention).
pub(crate) const CLIENT_GONE: u16 = 499;

/// What the writer receives.
#[derive(Debug)]
pub enum Message {
    /// A finished chat request (also a use of its key), with what it owes
    /// its rate windows and budgets.
    Record(UsageRecord, Option<Arc<Charge>>),
    /// Another authenticated call: the key was used at this time.
    Touch(ApiKeyId, i64),
}

/// The sending side, held by the application state.
#[derive(Debug)]
pub struct UsageSink {
    tx: mpsc::Sender<Message>,
    rx: Mutex<Option<mpsc::Receiver<Message>>>,
    dropped: Arc<AtomicU64>,
}

impl Default for UsageSink {
    fn default() -> Self {
        Self::new()
    }
}

impl UsageSink {
    pub fn new() -> Self {
        Self::with_capacity(CHANNEL_CAPACITY)
    }

    pub fn with_capacity(capacity: usize) -> Self {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        UsageSink {
            tx,
            rx: Mutex::new(Some(rx)),
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The receiving side, once (for the writer task).
    pub fn take_receiver(&self) -> Option<mpsc::Receiver<Message>> {
        self.rx
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    /// Records dropped because the channel was full or closed.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Open the ticket of a request by `owner` to `endpoint`: a chat call
    /// is recorded, another call is only a use of the key.
    pub(crate) fn open(&self, owner: KeyOwner, endpoint: Endpoint) -> UsageTicket {
        UsageTicket::new(
            endpoint,
            Some(Recording {
                tx: self.tx.clone(),
                dropped: self.dropped.clone(),
                owner,
            }),
        )
    }

    /// Records waiting for the writer now.
    pub fn queued(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }
}

/// The running account of one request; clones share it. See the module
/// doc. In proxy mode a chat call has one too, without a recording: its
/// answer's metrics are taken from it.
#[derive(Debug, Clone)]
pub struct UsageTicket(Arc<Ticket>);

#[derive(Debug)]
struct Ticket {
    endpoint: Endpoint,
    /// Where the usage record goes (full deployment).
    recording: Option<Recording>,
    started: Instant,
    created_at: i64,
    /// Nanoseconds from `started` to the answer's first content, plus one
    /// (0: none yet).
    first_token_nanos: AtomicU64,
    observed: Mutex<Observed>,
    /// The request's server span (traces on): it ends with the ticket and
    /// carries the answer's tokens.
    trace: Option<telemetry::traces::ServerSpan>,
}

/// The writer's side of a full-deployment ticket.
#[derive(Debug)]
struct Recording {
    tx: mpsc::Sender<Message>,
    dropped: Arc<AtomicU64>,
    owner: KeyOwner,
}

#[derive(Debug, Default)]
struct Observed {
    provider: Option<&'static str>,
    model: String,
    stream: bool,
    usage: Usage,
    http_status: Option<u16>,
    /// How a stream ended badly, after its 200 was sent.
    stream_status: Option<u16>,
    /// What the request owes its limits, once its usage is known.
    charge: Option<Arc<Charge>>,
    /// The rate-limit headers of the answer.
    rate_headers: Option<RateHeaders>,
}

impl Ticket {
    fn observed(&self) -> MutexGuard<'_, Observed> {
        // Plain data: a panic elsewhere mid-update leaves it usable.
        self.observed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl UsageTicket {
    fn new(endpoint: Endpoint, recording: Option<Recording>) -> UsageTicket {
        if endpoint.is_chat() {
            // The answer's duration is recorded when the ticket ends, with
            // the stream; the access line's middleware leaves it alone.
            crate::logging::access_note::note_answer_metered();
        }
        // Only a record needs the wall-clock time (one clock read less per
        // proxy-mode request).
        let created_at = if recording.is_some() { clock::now() } else { 0 };
        UsageTicket(Arc::new(Ticket {
            endpoint,
            recording,
            started: Instant::now(),
            created_at,
            first_token_nanos: AtomicU64::new(0),
            observed: Mutex::new(Observed::default()),
            trace: telemetry::traces::current(),
        }))
    }

    /// The ticket of a chat call in proxy mode: metrics only, no record.
    pub(crate) fn unrecorded(endpoint: Endpoint) -> UsageTicket {
        UsageTicket::new(endpoint, None)
    }

    /// The provider and model the request was sent to.
    pub fn route(&self, provider: &'static str, model: &str, stream: bool) {
        let mut o = self.0.observed();
        o.provider = Some(provider);
        model.clone_into(&mut o.model);
        o.stream = stream;
        if let Some(trace) = &self.0.trace {
            trace.route(provider, model);
        }
    }

    /// The request's server span, when traces are exported.
    pub(crate) fn trace(&self) -> Option<&telemetry::traces::ServerSpan> {
        self.0.trace.as_ref()
    }

    /// The answer's first content is on its way to the client (the first
    /// call counts).
    pub fn first_token(&self) {
        let nanos = u64::try_from(self.0.started.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        let _ = self.0.first_token_nanos.compare_exchange(
            0,
            nanos + 1,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Usage reported (or estimated) so far; known fields replace earlier ones.
    pub fn add_usage(&self, usage: &Usage) {
        self.0.observed().usage.merge(usage);
    }

    /// The HTTP status of the response.
    pub fn respond(&self, status: u16) {
        self.0.observed().http_status = Some(status);
    }

    /// A stream already answered 200 ended with an error of this status.
    pub fn stream_failed(&self, status: u16) {
        self.0.observed().stream_status.get_or_insert(status);
    }

    /// The client went away before the answer ended.
    pub fn client_gone(&self) {
        self.stream_failed(CLIENT_GONE);
    }

    /// What the admission decided: the answer's rate-limit headers, and
    /// what the request owes once its usage is known.
    pub fn admitted(&self, headers: Option<RateHeaders>, charge: Option<Arc<Charge>>) {
        let mut o = self.0.observed();
        o.rate_headers = headers;
        o.charge = charge;
    }

    /// The rate-limit headers for the answer, if the key is limited.
    pub fn rate_headers(&self) -> Option<RateHeaders> {
        self.0.observed().rate_headers
    }

    /// Who the request is attributed to (full deployment).
    pub fn owner(&self) -> Option<KeyOwner> {
        self.0.recording.as_ref().map(|r| r.owner)
    }
}

impl Ticket {
    /// The answer's metrics: duration to its end, first token, tokens, and
    /// a stream that failed after it began.
    fn record_metrics(&self, o: &Observed, elapsed: f64) {
        let tokens = |n: Option<u32>| u64::from(n.unwrap_or(0));
        let first = self.first_token_nanos.load(Ordering::Relaxed);
        telemetry::series::record_answer(&telemetry::series::AnswerDone {
            endpoint: self.endpoint,
            provider: o.provider,
            model: Some(o.model.as_str()),
            duration_secs: elapsed,
            first_token_secs: (first > 0).then(|| (first - 1) as f64 / 1e9),
            tokens: [
                tokens(o.usage.input_tokens),
                tokens(o.usage.output_tokens),
                tokens(o.usage.cache_read_tokens),
                tokens(o.usage.cache_write_tokens),
            ],
        });
        if let (Some(provider), Some(status)) = (o.provider, o.stream_status) {
            if status != CLIENT_GONE {
                telemetry::meters().upstream_error(
                    telemetry::provider_index(provider),
                    telemetry::UpstreamFailure::Stream,
                );
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let chat = self.endpoint.is_chat();
        let elapsed = self.started.elapsed();
        // The last clone is gone: the data is ours without a lock, and
        // taken once for the metrics, the trace and the record.
        let o = std::mem::take(
            self.observed
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        if chat {
            self.record_metrics(&o, elapsed.as_secs_f64());
            if let Some(trace) = &self.trace {
                trace.usage(o.usage.input_tokens, o.usage.output_tokens);
                if let Some(status) = o.stream_status {
                    trace.stream_failed(status);
                }
            }
        }
        let Some(recording) = &self.recording else {
            return;
        };
        let message = if chat {
            let tokens = |n: Option<u32>| i64::from(n.unwrap_or(0));
            Message::Record(
                UsageRecord {
                    user_id: recording.owner.user_id,
                    key_id: Some(recording.owner.key_id),
                    provider: o.provider.unwrap_or_default().to_owned(),
                    model: o.model,
                    stream: o.stream,
                    // No status at all: the handler's future was dropped
                    // (the client disconnected before the answer began).
                    status: o.stream_status.or(o.http_status).unwrap_or(CLIENT_GONE),
                    input_tokens: tokens(o.usage.input_tokens),
                    output_tokens: tokens(o.usage.output_tokens),
                    cache_read_tokens: tokens(o.usage.cache_read_tokens),
                    cache_write_tokens: tokens(o.usage.cache_write_tokens),
                    latency_ms: i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX),
                    created_at: self.created_at,
                    // Costed by the writer, off the request's path.
                    cost_usd: None,
                    requests: 1,
                },
                o.charge,
            )
        } else {
            Message::Touch(recording.owner.key_id, self.created_at)
        };
        if recording.tx.try_send(message).is_err() {
            let n = recording.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            // One line per thousand, not one per record.
            if n % 1000 == 1 {
                tracing::warn!(
                    dropped = n,
                    "usage writer is behind or stopped; usage records dropped"
                );
            }
        }
    }
}

/// Counts the stream among `gateway_open_streams` while it lives, and notes,
/// when an answer's stream is dropped before it ended, that the
/// client went away: the body is dropped by the server when the client
/// disconnects, and with it the upstream request.
#[derive(Debug)]
pub(crate) struct Unfinished {
    usage: Option<UsageTicket>,
    finished: bool,
}

impl Unfinished {
    pub(crate) fn new(usage: Option<UsageTicket>) -> Self {
        telemetry::meters().open_streams.increment(1.0);
        Unfinished {
            usage,
            finished: false,
        }
    }

    pub(crate) fn usage(&self) -> Option<&UsageTicket> {
        self.usage.as_ref()
    }

    /// The answer ended (completely or with its error event).
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        telemetry::meters().open_streams.decrement(1.0);
        if !self.finished {
            tracing::info!("client went away; upstream request cancelled");
            if let Some(ticket) = &self.usage {
                ticket.client_gone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ids::UserId;

    fn owner() -> KeyOwner {
        KeyOwner {
            key_id: ApiKeyId::new(),
            user_id: UserId::new(),
        }
    }

    #[tokio::test]
    async fn a_ticket_becomes_one_record_when_its_last_clone_goes() {
        let sink = UsageSink::with_capacity(8);
        let mut rx = sink.take_receiver().unwrap();
        assert!(sink.take_receiver().is_none());
        let who = owner();
        let ticket = sink.open(who, Endpoint::ChatCompletions);
        let stream_side = ticket.clone();
        ticket.route("primary", "claude-sonnet-4.5", true);
        ticket.add_usage(&Usage {
            input_tokens: Some(12),
            ..Usage::default()
        });
        ticket.respond(200);
        drop(ticket);
        assert!(rx.try_recv().is_err(), "the stream still holds it");
        stream_side.add_usage(&Usage {
            output_tokens: Some(34),
            cache_read_tokens: Some(5),
            ..Usage::default()
        });
        stream_side.stream_failed(502);
        stream_side.client_gone(); // the first ending wins
        drop(stream_side);
        let Message::Record(r, _) = rx.try_recv().unwrap() else {
            panic!("a record")
        };
        assert_eq!(r.user_id, who.user_id);
        assert_eq!(r.key_id, Some(who.key_id));
        assert_eq!(
            (r.provider.as_str(), r.model.as_str()),
            ("primary", "claude-sonnet-4.5")
        );
        assert!(r.stream);
        assert_eq!(r.status, 502);
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.cache_read_tokens),
            (12, 34, 5)
        );
        assert!(r.latency_ms >= 0);
    }

    #[tokio::test]
    async fn other_calls_only_touch_the_key_and_a_full_channel_drops() {
        let sink = UsageSink::with_capacity(1);
        let mut rx = sink.take_receiver().unwrap();
        let who = owner();
        drop(sink.open(who, Endpoint::Models));
        drop(sink.open(who, Endpoint::ChatCompletions)); // channel full: dropped, counted
        assert_eq!(sink.dropped(), 1);
        match rx.try_recv().unwrap() {
            Message::Touch(key, at) => {
                assert_eq!(key, who.key_id);
                assert!(at > 0);
            }
            other => panic!("{other:?}"),
        }
        // A chat ticket dropped without any status: the client left first.
        drop(sink.open(who, Endpoint::ChatCompletions));
        let Message::Record(r, _) = rx.try_recv().unwrap() else {
            panic!("a record")
        };
        assert_eq!(r.status, CLIENT_GONE);
        assert_eq!(r.provider, "");
    }
}
