//! A read-mostly map with a time limit per entry and a size bound: the
//! caches a `/v1` request reads in full deployment (the API key's owner, the
//! user's direct providers, the user's `primary` token source).
//!
//! A hit is a shared lock, one seeded hash (`foldhash`) and a clone of the
//! value. `moka`, which these caches used before, also logs every read for
//! its admission policy and drains that log as it goes: about 1,600
//! instructions a request over two look-ups (`docs/benchmarks.md`, issue
//! 14). What this map gives up is that policy: when it is full, an insert
//! first drops the expired entries, then an arbitrary eighth of the others.
//! For these caches a dropped entry costs one store read at the next
//! request that needs it.
//!
//! An entry expires a fixed time after it was stored ([`Expiry::AfterWrite`])
//! or after it was last read ([`Expiry::AfterRead`]). Expired entries are
//! never returned; they are dropped by [`TtlCache::purge_expired`] (the
//! store re-check of `live::invalidation` calls it every 30 s), by
//! an insert into a full map, or when their key is stored again.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

/// When an entry stops being served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// This long after it was stored (a read does not extend it).
    AfterWrite(Duration),
    /// This long after it was last read or stored.
    AfterRead(Duration),
}

/// How much later than its recorded last read an [`Expiry::AfterRead`]
/// entry's stamp may be: reads closer together than this leave the stamp
/// alone, so a hot entry is not written on every read.
const READ_STAMP_STEP: Duration = Duration::from_secs(1);

/// A map hashed with `foldhash` (seeded per map): for the maps a request
/// looks up (these caches, the usage writer's per-key maps, the rate-limit
/// notes, the model gate's view), std's SipHash cost 150-300 instructions a
/// look-up.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

type Map<K, V> = FastMap<K, Entry<V>>;

struct Entry<V> {
    value: V,
    /// Nanoseconds from the cache's epoch to the entry's last write (or,
    /// with [`Expiry::AfterRead`], its last read).
    stamp: AtomicU64,
}

/// The map; share it behind an `Arc` (or inside a shared struct).
pub(crate) struct TtlCache<K, V> {
    entries: RwLock<Map<K, V>>,
    expiry: Expiry,
    capacity: usize,
    /// What stamps count from. `quanta`'s clock (the CPU's time-stamp
    /// counter, calibrated once per process; the metrics exporter uses it
    /// too): a read is a few instructions, `std`'s `Instant` a system
    /// clock read and a `timespec` subtraction, about 150.
    epoch: quanta::Instant,
}

impl<K, V> std::fmt::Debug for TtlCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlCache")
            .field("entries", &self.read().len())
            .field("expiry", &self.expiry)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<K, V> TtlCache<K, V> {
    fn read(&self) -> RwLockReadGuard<'_, Map<K, V>> {
        // Plain data: a panic elsewhere while it was held leaves it usable.
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Map<K, V>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl<K: Hash + Eq + Clone, V: Clone> TtlCache<K, V> {
    /// An empty map holding at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize, expiry: Expiry) -> Self {
        TtlCache {
            entries: RwLock::new(HashMap::default()),
            expiry,
            capacity: capacity.max(1),
            epoch: quanta::Instant::now(),
        }
    }

    /// The value stored under `key`, unless it has expired.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let now = self.now();
        let entries = self.read();
        let entry = entries.get(key)?;
        let stamp = entry.stamp.load(Ordering::Relaxed);
        if self.expired(stamp, now) {
            return None;
        }
        if matches!(self.expiry, Expiry::AfterRead(_))
            && now.saturating_sub(stamp) >= nanos(READ_STAMP_STEP)
        {
            entry.stamp.store(now, Ordering::Relaxed);
        }
        Some(entry.value.clone())
    }

    /// Store `value` under `key` (replacing what was there), making room
    /// first when the map is full (see the module doc).
    pub(crate) fn insert(&self, key: K, value: V) {
        let now = self.now();
        let mut entries = self.write();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, e| !self.expired(e.stamp.load(Ordering::Relaxed), now));
            if entries.len() >= self.capacity {
                let victims: Vec<K> = entries
                    .keys()
                    .take((self.capacity / 8).max(1))
                    .cloned()
                    .collect();
                for victim in &victims {
                    entries.remove(victim);
                }
            }
        }
        entries.insert(
            key,
            Entry {
                value,
                stamp: AtomicU64::new(now),
            },
        );
    }

    /// Drop the entry of `key`, if any.
    pub(crate) fn remove(&self, key: &K) {
        self.write().remove(key);
    }

    /// Drop every entry.
    pub(crate) fn clear(&self) {
        self.write().clear();
    }

    /// Drop the expired entries (a periodic task may call it; nothing
    /// depends on it).
    pub(crate) fn purge_expired(&self) {
        let now = self.now();
        self.write()
            .retain(|_, e| !self.expired(e.stamp.load(Ordering::Relaxed), now));
    }

    /// Entries held, expired ones not yet dropped included.
    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }

    /// The keys of the live entries for which `pick` says yes.
    pub(crate) fn keys_where(&self, pick: impl Fn(&K, &V) -> bool) -> Vec<K> {
        let now = self.now();
        self.read()
            .iter()
            .filter(|(k, e)| {
                !self.expired(e.stamp.load(Ordering::Relaxed), now) && pick(k, &e.value)
            })
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn now(&self) -> u64 {
        nanos(quanta::Instant::now().saturating_duration_since(self.epoch))
    }

    fn expired(&self, stamp: u64, now: u64) -> bool {
        let limit = match self.expiry {
            Expiry::AfterWrite(d) | Expiry::AfterRead(d) => nanos(d),
        };
        now.saturating_sub(stamp) >= limit
    }
}

/// A duration in nanoseconds (saturating: 584 years fit).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_value_is_served_until_it_expires_after_write() {
        let cache = TtlCache::new(10, Expiry::AfterWrite(Duration::from_millis(60)));
        cache.insert("a", 1);
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"b"), None);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(cache.get(&"a"), Some(1), "a read does not extend it");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(cache.get(&"a"), None);
        assert_eq!(cache.len(), 1, "kept until purged");
        cache.purge_expired();
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn expiry_after_read_follows_the_last_read() {
        let cache = TtlCache::new(10, Expiry::AfterRead(Duration::from_secs(2)));
        cache.insert(1u8, "x");
        // Read 1.2 s in: the stamp moves (reads a second or more apart do).
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(cache.get(&1), Some("x"));
        // 2.4 s after the write, 1.2 s after the read: still served.
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(cache.get(&1), Some("x"));
    }

    #[test]
    fn a_full_map_makes_room_and_keeps_its_bound() {
        let cache = TtlCache::new(16, Expiry::AfterWrite(Duration::from_secs(60)));
        for i in 0..100u32 {
            cache.insert(i, i * 2);
            assert!(cache.len() <= 16);
            assert_eq!(cache.get(&i), Some(i * 2), "the new entry is kept");
        }
        // Replacing a present key in a full map drops nothing.
        let before = cache.len();
        cache.insert(99, 7);
        assert_eq!(cache.len(), before);
        assert_eq!(cache.get(&99), Some(7));
    }

    #[test]
    fn expired_entries_go_first_when_full() {
        let cache = TtlCache::new(4, Expiry::AfterWrite(Duration::from_millis(20)));
        for i in 0..4u8 {
            cache.insert(i, ());
        }
        std::thread::sleep(Duration::from_millis(30));
        cache.insert(10, ());
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn remove_clear_and_keys_where() {
        let cache = TtlCache::new(10, Expiry::AfterWrite(Duration::from_secs(60)));
        for i in 0..6u8 {
            cache.insert(i, i % 2 == 0);
        }
        let mut even = cache.keys_where(|_, v| *v);
        even.sort_unstable();
        assert_eq!(even, vec![0, 2, 4]);
        cache.remove(&0);
        assert_eq!(cache.get(&0), None);
        cache.clear();
        assert_eq!(cache.len(), 0);
    }
}
