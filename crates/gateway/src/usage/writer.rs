//! The one task that writes usage: it takes messages off the channel in
//! bulk (`recv_many` into a reused buffer), and flushes when
//! [`BATCH_ROWS`] records are waiting or every [`FLUSH_EVERY`], whichever
//! comes first; on shutdown it drains the channel and flushes once more.
//! After each take it lets the channel fill for [`GATHER`] before it looks
//! again: a writer always waiting on the channel was woken by nearly every
//! request, one scheduling of the task per record.
//!
//! Records of one batch that differ only in their counts (same user, key,
//! provider, model, stream, status and second) are merged into one row as
//! they are taken ([`Batch::add_record`]; `docs/decisions.md`, "Usage rows
//! merged per second"): a busy key writes a row a second, not a row a
//! request, and SQLite's insert (about 8,000 instructions a row) is paid
//! that much less often.
//!
//! A flush is one transaction of multi-row `INSERT`s
//! ([`crate::store::usage::UsageWriter::insert_batch`]; on SQLite through a
//! connection the writer keeps for itself), so a burst of a thousand
//! requests becomes a couple of statements, not a thousand. Key uses
//! (`last_used_at`) are folded per key and written at most once every
//! [`LAST_USED_EVERY`] per key. A failed flush is logged and retried with
//! the next one (the batch is kept, up to [`MAX_PENDING`] records).

use std::collections::hash_map::Entry;
use std::hash::BuildHasher as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::prices::PriceBook;
use super::Message;
use crate::cache::FastMap;
use crate::limits::{CounterKey, Limiter};
use crate::store::ids::ApiKeyId;
use crate::store::usage::{UsageRecord, UsageWriter};
use crate::store::Store;

/// Flush when this many rows wait.
pub(crate) const BATCH_ROWS: usize = 1000;
/// Flush at least this often while records wait.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// How long records gather in the channel after a take. Well under what
/// fills [`super::CHANNEL_CAPACITY`] (20,000 records) at any request rate
/// one process serves, and far under [`FLUSH_EVERY`], so no record waits
/// noticeably longer for its row.
pub(crate) const GATHER: Duration = Duration::from_millis(20);
/// A key's `last_used_at` is written at most this often.
pub(crate) const LAST_USED_EVERY: Duration = Duration::from_secs(30);
/// Records kept across failed flushes before the oldest are dropped.
const MAX_PENDING: usize = 50_000;

/// A map by API key ([`FastMap`]: std's SipHash cost about 300
/// instructions a record here).
type KeyMap<V> = FastMap<ApiKeyId, V>;

/// The writer's state between flushes.
struct Batch {
    /// Transactions that wrote usage rows (observed by tests).
    transactions: u64,
    /// The rows to write, merged records among them.
    records: Vec<UsageRecord>,
    /// Where in `records` the row of each merge key is (the key's hash;
    /// two keys of one hash merge only if [`UsageRecord::same_row`] says
    /// so). Emptied at every write: a row once written is not merged into.
    rows: FastMap<u64, usize>,
    /// Latest use per key not yet written.
    uses: KeyMap<i64>,
    /// When each key's use was last written.
    written: KeyMap<Instant>,
    /// What each record costs.
    prices: Arc<PriceBook>,
    /// Counter changes owed by the records taken (token corrections and
    /// costs), applied at the next flush.
    settlements: Vec<(CounterKey, i64)>,
    limiter: Arc<Limiter>,
}

impl Batch {
    fn take(&mut self, msg: Message) {
        let (key, at) = match msg {
            Message::Record(mut r, charge) => {
                r.cost_usd = self.prices.cost(&r);
                if let Some(charge) = charge {
                    let tokens = r.input_tokens + r.output_tokens;
                    charge.settle(tokens, r.cost_usd, &mut self.settlements);
                }
                let use_ = r.key_id.map(|k| (k, r.created_at));
                self.add_record(r);
                match use_ {
                    Some(u) => u,
                    None => return,
                }
            }
            Message::Touch(key, at) => (key, at),
        };
        let slot = self.uses.entry(key).or_insert(at);
        *slot = (*slot).max(at);
    }

    /// Add `r` to the batch: merged into the row of an earlier record it
    /// agrees with ([`UsageRecord::same_row`]), or as a row of its own.
    fn add_record(&mut self, r: UsageRecord) {
        let key = self.rows.hasher().hash_one(r.merge_key());
        match self.rows.entry(key) {
            Entry::Occupied(slot) => {
                if let Some(row) = self.records.get_mut(*slot.get()) {
                    if row.same_row(&r) {
                        row.absorb(&r);
                        return;
                    }
                }
                // Another row of the same hash: this one stays apart.
            }
            Entry::Vacant(slot) => {
                slot.insert(self.records.len());
            }
        }
        self.records.push(r);
    }

    /// The key uses due for writing now.
    fn due_uses(&mut self, now: Instant, force: bool) -> Vec<(ApiKeyId, i64)> {
        let written = &self.written;
        let due: Vec<(ApiKeyId, i64)> = self
            .uses
            .iter()
            .filter(|(k, _)| {
                force
                    || written
                        .get(*k)
                        .is_none_or(|t| now.duration_since(*t) >= LAST_USED_EVERY)
            })
            .map(|(k, at)| (*k, *at))
            .collect();
        for (k, _) in &due {
            self.uses.remove(k);
        }
        due
    }

    async fn flush(&mut self, store: &Store, writer: &mut UsageWriter, force: bool) {
        if !self.records.is_empty() {
            self.write_records(writer).await;
        }
        // After the rows: a budget seeded from the store meanwhile already
        // counts them only in rare races (see crate::limits).
        if !self.settlements.is_empty() {
            self.limiter.settle(&self.settlements).await;
            self.settlements.clear();
        }
        self.write_uses(store, force).await;
    }

    async fn write_records(&mut self, writer: &mut UsageWriter) {
        // Written or kept for the next try (and then perhaps trimmed, which
        // moves the rows): no later record merges into them.
        self.rows.clear();
        match writer.insert_batch(&self.records).await {
            Ok(()) => {
                tracing::debug!(rows = self.records.len(), "usage written");
                self.transactions += 1;
                self.records.clear();
            }
            Err(e) => {
                tracing::error!(rows = self.records.len(), "writing usage failed: {e}");
                if self.records.len() > MAX_PENDING {
                    let excess = self.records.len() - MAX_PENDING;
                    self.records.drain(..excess);
                    tracing::warn!(
                        dropped = excess,
                        "usage records dropped after failed writes"
                    );
                }
            }
        }
    }

    async fn write_uses(&mut self, store: &Store, force: bool) {
        let now = Instant::now();
        let due = self.due_uses(now, force);
        if due.is_empty() {
            return;
        }
        match store.api_keys().touch_many(&due).await {
            Ok(()) => {
                for (k, _) in due {
                    self.written.insert(k, now);
                }
                // Forget keys idle for long, so the map does not grow forever.
                self.written
                    .retain(|_, t| now.duration_since(*t) < LAST_USED_EVERY * 10);
            }
            Err(e) => {
                tracing::warn!("recording key use failed: {e}");
                for (k, at) in due {
                    let slot = self.uses.entry(k).or_insert(at);
                    *slot = (*slot).max(at);
                }
            }
        }
    }
}

/// Run the writer on `rx` until `cancel` fires (then drain and flush) or
/// every sender is gone.
pub(crate) fn spawn(
    store: Store,
    rx: mpsc::Receiver<Message>,
    prices: Arc<PriceBook>,
    limiter: Arc<Limiter>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "tracked: serve() awaits this handle at shutdown"
    )]
    tokio::spawn(async move {
        run(store, rx, prices, limiter, cancel).await;
    })
}

/// The writer's loop; returns how many transactions wrote usage rows.
async fn run(
    store: Store,
    mut rx: mpsc::Receiver<Message>,
    prices: Arc<PriceBook>,
    limiter: Arc<Limiter>,
    cancel: CancellationToken,
) -> u64 {
    let mut batch = Batch {
        transactions: 0,
        // `records` and `incoming` (below) grow with the batches they hold
        // and keep what they grew to. Reserved for a full batch up front
        // (about 200 KB each), they cost a lightly loaded gateway some 4 MB
        // of resident memory (the soak on SQLite: 35.7 MB, 28.3 MB grown on
        // demand).
        records: Vec::new(),
        rows: FastMap::default(),
        uses: KeyMap::default(),
        written: KeyMap::default(),
        prices,
        settlements: Vec::new(),
        limiter,
    };
    let mut incoming: Vec<Message> = Vec::new();
    // On SQLite, a connection of its own (see `UsageWriter`).
    let mut writer = store.usage().writer();
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut incoming, BATCH_ROWS) => {
                if n == 0 {
                    // Every sender is gone.
                    batch.flush(&store, &mut writer, true).await;
                    writer.close().await;
                    return batch.transactions;
                }
                for msg in incoming.drain(..) {
                    batch.take(msg);
                }
                if batch.records.len() >= BATCH_ROWS {
                    batch.flush(&store, &mut writer, false).await;
                }
                tokio::select! {
                    () = tokio::time::sleep(GATHER) => {}
                    () = cancel.cancelled() => {}
                }
            }
            _ = tick.tick() => batch.flush(&store, &mut writer, false).await,
            () = cancel.cancelled() => {
                while let Ok(msg) = rx.try_recv() {
                    batch.take(msg);
                }
                batch.flush(&store, &mut writer, true).await;
                writer.close().await;
                tracing::debug!("usage writer stopped");
                return batch.transactions;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ids::UserId;

    fn record(key: ApiKeyId, at: i64) -> UsageRecord {
        UsageRecord {
            user_id: UserId::new(),
            key_id: Some(key),
            provider: "primary".into(),
            model: "m".into(),
            stream: false,
            status: 200,
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            latency_ms: 3,
            created_at: at,
            cost_usd: None,
            requests: 1,
        }
    }

    #[tokio::test]
    async fn a_burst_becomes_a_few_transactions_and_shutdown_drains() {
        let dir =
            std::env::temp_dir().join(format!("gw-usage-{}", crate::ids::fast_uuid().simple()));
        let url = format!("sqlite://{}/usage.db", dir.display());
        let store = Store::connect(&url, &crate::crypto::EncryptionKey::generate())
            .await
            .unwrap();
        let (tx, rx) = mpsc::channel(10_000);
        let user = UserId::new();
        let key = ApiKeyId::new();
        for i in 0..2_500 {
            let mut r = record(key, 1_700_000_000 + i);
            r.user_id = user;
            tx.try_send(Message::Record(r, None)).unwrap();
        }
        let cancel = CancellationToken::new();
        #[expect(clippy::disallowed_methods, reason = "the test awaits the writer")]
        let writer = tokio::spawn(run(
            store.clone(),
            rx,
            Arc::default(),
            Arc::new(Limiter::local()),
            cancel.clone(),
        ));
        // More arrive while it runs; shutdown must drain them too.
        tokio::time::sleep(Duration::from_millis(50)).await;
        for i in 0..10 {
            let mut r = record(key, 1_800_000_000 + i);
            r.user_id = user;
            tx.try_send(Message::Record(r, None)).unwrap();
        }
        cancel.cancel();
        let transactions = writer.await.unwrap();
        let rows = store.usage().records_of(user).await.unwrap();
        assert_eq!(rows.len(), 2_510);
        assert!(
            rows.windows(2).all(|w| w[0].created_at < w[1].created_at),
            "in order"
        );
        assert!(
            transactions <= 4,
            "{transactions} transactions for 2,510 rows"
        );
        store.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn batch() -> Batch {
        Batch {
            transactions: 0,
            records: Vec::new(),
            rows: FastMap::default(),
            uses: KeyMap::default(),
            written: KeyMap::default(),
            prices: Arc::default(),
            settlements: Vec::new(),
            limiter: Arc::new(Limiter::local()),
        }
    }

    #[test]
    fn records_that_differ_only_in_counts_share_a_row() {
        let mut b = batch();
        let key = ApiKeyId::new();
        let first = record(key, 100);
        let user = first.user_id;
        let at = |at: i64| {
            let mut r = record(key, at);
            r.user_id = user;
            r
        };
        b.add_record(first);
        let mut second = at(100);
        second.input_tokens = 10;
        second.latency_ms = 7;
        second.cost_usd = Some(0.5);
        b.add_record(second);
        // Each differs from the first in one thing that is grouped or
        // filtered by: a row of its own.
        let mut apart = vec![at(101)];
        apart.push(UsageRecord {
            user_id: UserId::new(),
            ..at(100)
        });
        apart.push(UsageRecord {
            key_id: None,
            ..at(100)
        });
        apart.push(UsageRecord {
            provider: "custom".into(),
            ..at(100)
        });
        apart.push(UsageRecord {
            model: "n".into(),
            ..at(100)
        });
        apart.push(UsageRecord {
            stream: true,
            ..at(100)
        });
        apart.push(UsageRecord {
            status: 500,
            ..at(100)
        });
        for r in apart {
            b.add_record(r);
        }
        let mut third = at(100);
        third.cost_usd = Some(0.25);
        b.add_record(third);
        assert_eq!(b.records.len(), 8);
        let merged = &b.records[0];
        assert_eq!(merged.requests, 3);
        assert_eq!(merged.input_tokens, 1 + 10 + 1);
        assert_eq!(merged.output_tokens, 6);
        assert_eq!(merged.latency_ms, 3 + 7 + 3);
        assert_eq!(merged.cost_usd, Some(0.75), "the known costs summed");
        assert!(b.records[1..].iter().all(|r| r.requests == 1));
    }

    #[test]
    fn key_uses_fold_to_the_latest_and_wait_their_turn() {
        let mut b = batch();
        let (k1, k2) = (ApiKeyId::new(), ApiKeyId::new());
        b.take(Message::Record(record(k1, 100), None));
        b.take(Message::Touch(k1, 90));
        b.take(Message::Touch(k2, 95));
        b.take(Message::Record(record(k1, 105), None));
        assert_eq!(b.records.len(), 2);
        let now = Instant::now();
        let mut due = b.due_uses(now, false);
        due.sort_by_key(|(_, at)| *at);
        assert_eq!(due, vec![(k2, 95), (k1, 105)]);
        // Written just now: the next use of k1 waits, unless forced.
        b.written.insert(k1, now);
        b.take(Message::Touch(k1, 110));
        assert!(b.due_uses(now, false).is_empty());
        assert_eq!(b.due_uses(now, true), vec![(k1, 110)]);
        assert!(b.uses.is_empty());
    }
}
