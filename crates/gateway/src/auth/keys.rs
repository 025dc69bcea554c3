//! Per-user API keys of full deployment (spec 2.3, 5.2): generating them and
//! finding their owner on the hot path.
//!
//! A key is `sk-` followed by the URL-safe base64 of 32 random bytes (256
//! bits, 43 characters). Only its SHA-256 is stored; the first
//! [`DISPLAY_PREFIX_LEN`] characters are kept for display.
//!
//! [`KeyCache`] answers "whose key is this?" from memory: hash -> (user id,
//! key id), 5 minutes per entry, so a request with a cached key costs no
//! database round trip. A miss reads the store once and caches the answer;
//! a key that does not exist is remembered for [`NEGATIVE_TTL`] only (a
//! client retrying a dead key in a loop does not hammer the database; a
//! negative entry can never grant anything, so it needs no invalidation).
//!
//! Revocation: the replica that deletes a key drops the entry at once
//! ([`KeyCache::invalidate`]); the others hear of it through PostgreSQL
//! `NOTIFY` ([`super::invalidation`]) and, as a safety net, re-check every
//! cached hash against the store periodically ([`KeyCache::recheck`]).
//! A lookup that read the store just before a deletion committed must not
//! put a dead key back: every invalidation bumps an epoch first, and a
//! lookup whose epoch moved while it read removes what it inserted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::cache::{Expiry, TtlCache};
use crate::config::Secret;
use crate::crypto::random;
use crate::error::GatewayError;
use crate::limits::OwnerLimits;
use crate::store::api_keys::{FoundKey, KeyOwner};
use crate::store::ids::UserId;
use crate::store::{Store, StoreError};
use crate::telemetry::{self, CacheName};

/// Every key starts with this.
pub const KEY_PREFIX: &str = "sk-";
/// Random bytes in a key (256 bits).
const KEY_BYTES: usize = 32;
/// Length of a whole key: the prefix and 43 base64url characters.
pub const KEY_LEN: usize = 3 + 43;
/// Characters of a key kept for display (`sk-` and 7 more).
pub const DISPLAY_PREFIX_LEN: usize = 10;
/// How long a found key stays cached.
pub const POSITIVE_TTL: Duration = Duration::from_secs(300);
/// How long an unknown key is remembered as unknown.
pub const NEGATIVE_TTL: Duration = Duration::from_secs(10);
/// Most cached keys (found / unknown).
const POSITIVE_CAPACITY: usize = 100_000;
const NEGATIVE_CAPACITY: usize = 10_000;

/// The SHA-256 of an API key: the one form a key is kept, looked up and
/// compared in (proxy mode's `PROXY_API_KEY` and every per-user key alike;
/// the plaintext is never stored). Its `Debug` prints no bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ApiKeyHash([u8; 32]);

impl std::fmt::Debug for ApiKeyHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKeyHash(***)")
    }
}

impl ApiKeyHash {
    /// The hash of a key.
    pub fn of(key: &str) -> Self {
        ApiKeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// A hash in its stored form (64 hex digits); `None` when malformed.
    pub fn from_hex(text: &str) -> Option<Self> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text.trim(), &mut bytes).ok()?;
        Some(ApiKeyHash(bytes))
    }

    /// The stored form: lower-case hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Constant-time comparison of the hash of `presented` with this hash.
    pub fn matches(&self, presented: &str) -> bool {
        bool::from(self.0.ct_eq(&ApiKeyHash::of(presented).0))
    }
}

impl AsRef<[u8]> for ApiKeyHash {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// A key just generated: shown once, then only its hash and prefix remain.
#[derive(Debug)]
pub struct GeneratedKey {
    pub key: Secret,
    /// Lower-case hex SHA-256, as stored.
    pub hash_hex: String,
    pub display_prefix: String,
}

/// A new random key.
pub fn generate() -> GeneratedKey {
    let key = format!("{KEY_PREFIX}{}", random::token(KEY_BYTES));
    let hash_hex = ApiKeyHash::of(&key).to_hex();
    let display_prefix = key.chars().take(DISPLAY_PREFIX_LEN).collect();
    GeneratedKey {
        key: Secret::new(key),
        hash_hex,
        display_prefix,
    }
}

/// Whether `key` has the shape of a key this gateway issues (checked before
/// any lookup, so junk never reaches the store).
pub fn well_formed(key: &str) -> bool {
    key.len() == KEY_LEN
        && key.starts_with(KEY_PREFIX)
        && key[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| KEY_BYTES_ALLOWED[usize::from(b)])
}

/// The bytes of a key's random part (URL-safe base64: letters, digits, `-`,
/// `_`), as a table: one load a byte on every request, not a chain of range
/// tests.
static KEY_BYTES_ALLOWED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        b += 1;
    }
    table
};

/// A key as a request needs it: its owner and its rules.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedKey {
    pub owner: KeyOwner,
    /// Unix seconds from which the key is refused.
    pub expires_at: Option<i64>,
    /// The only models the key may call; `None`: any.
    pub allowed_models: Option<AllowedModels>,
    /// The key's and its user's budgets and rate limits; `None`: neither
    /// is limited.
    pub limits: Option<Arc<OwnerLimits>>,
}

impl From<FoundKey> for CachedKey {
    fn from(k: FoundKey) -> Self {
        let u = &k.user_limits;
        let user = crate::limits::policy::Limits::from_columns(
            u.user_budget_usd,
            u.user_budget_period.as_deref(),
            u.user_rpm_limit,
            u.user_tpm_limit,
        );
        CachedKey {
            owner: k.owner,
            expires_at: k.expires_at,
            allowed_models: k.allowed_models.map(|m| AllowedModels(m.into())),
            limits: OwnerLimits::of(crate::limits::policy::Limits::of(&k.limits), user),
        }
    }
}

impl CachedKey {
    /// Whether the key has expired at `now` (Unix seconds).
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// The models a key may call, by the names a client sends on `/v1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedModels(Arc<[String]>);

impl AllowedModels {
    /// Whether `model` (as the client named it) is allowed.
    pub fn allows(&self, model: &str) -> bool {
        self.0.iter().any(|m| m == model)
    }

    /// 403 `forbidden` unless `model` is allowed.
    pub fn check(&self, model: &str) -> Result<(), GatewayError> {
        if self.allows(model) {
            return Ok(());
        }
        let shown: String = model.chars().take(100).collect();
        Err(GatewayError::Forbidden(format!(
            "this API key may not call model '{shown}': it may call {}",
            self.0.join(", ")
        )))
    }
}

/// The lookup cache described in the module doc; cheap to clone.
#[derive(Clone)]
pub struct KeyCache {
    inner: Arc<Inner>,
}

struct Inner {
    found: TtlCache<ApiKeyHash, CachedKey>,
    unknown: TtlCache<ApiKeyHash, ()>,
    /// Bumped by every invalidation, before the entries are dropped.
    epoch: AtomicU64,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("entries", &self.inner.found.len())
            .finish()
    }
}

impl Default for KeyCache {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyCache {
    pub fn new() -> Self {
        KeyCache {
            inner: Arc::new(Inner {
                found: TtlCache::new(POSITIVE_CAPACITY, Expiry::AfterWrite(POSITIVE_TTL)),
                unknown: TtlCache::new(NEGATIVE_CAPACITY, Expiry::AfterWrite(NEGATIVE_TTL)),
                epoch: AtomicU64::new(0),
            }),
        }
    }

    /// The owner of the key with hash `hash`: from memory, else the store.
    pub async fn lookup(
        &self,
        store: &Store,
        hash: ApiKeyHash,
    ) -> Result<Option<CachedKey>, StoreError> {
        if let Some(key) = self.inner.found.get(&hash) {
            telemetry::meters().cache_lookup(CacheName::ApiKey, true);
            return Ok(Some(key));
        }
        if self.inner.unknown.get(&hash).is_some() {
            telemetry::meters().cache_lookup(CacheName::ApiKey, true);
            return Ok(None);
        }
        telemetry::meters().cache_lookup(CacheName::ApiKey, false);
        let epoch = self.inner.epoch.load(Ordering::SeqCst);
        // Boxed: a miss is rare, and the store's future inline would size
        // (and be copied with) every request's authentication future.
        match Box::pin(store.api_keys().find_by_hash(&hash.to_hex())).await? {
            Some(found) => {
                let key = CachedKey::from(found);
                self.inner.found.insert(hash, key.clone());
                if self.inner.epoch.load(Ordering::SeqCst) != epoch {
                    // An invalidation ran while we read: our answer may be
                    // older than it, so do not keep it.
                    self.inner.found.remove(&hash);
                }
                Ok(Some(key))
            }
            None => {
                self.inner.unknown.insert(hash, ());
                Ok(None)
            }
        }
    }

    /// The cached owner of `hash`, without touching the store.
    pub fn cached(&self, hash: &ApiKeyHash) -> Option<CachedKey> {
        self.inner.found.get(hash)
    }

    fn bump(&self) {
        self.inner.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Drop the entry of one key (it was deleted).
    pub fn invalidate(&self, hash: &ApiKeyHash) {
        self.bump();
        self.inner.found.remove(hash);
    }

    /// [`KeyCache::invalidate`] with the stored (hex) form of the hash;
    /// malformed text is ignored.
    pub fn invalidate_hex(&self, hash_hex: &str) {
        if let Some(hash) = ApiKeyHash::from_hex(hash_hex) {
            self.invalidate(&hash);
        }
    }

    /// Drop every key of `user` (the user was deleted).
    pub fn invalidate_user(&self, user: UserId) {
        self.bump();
        for h in self
            .inner
            .found
            .keys_where(|_, key| key.owner.user_id == user)
        {
            self.inner.found.remove(&h);
        }
    }

    /// Drop everything (notifications may have been missed).
    pub fn invalidate_all(&self) {
        self.bump();
        self.inner.found.clear();
    }

    /// How many keys are cached (approximate, for logs and tests).
    pub fn len(&self) -> usize {
        self.inner.found.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The safety net: drop every cached key the store no longer has.
    /// Returns how many were dropped.
    pub async fn recheck(&self, store: &Store) -> Result<usize, StoreError> {
        self.inner.found.purge_expired();
        self.inner.unknown.purge_expired();
        let cached: Vec<String> = self
            .inner
            .found
            .keys_where(|_, _| true)
            .iter()
            .map(ApiKeyHash::to_hex)
            .collect();
        if cached.is_empty() {
            return Ok(0);
        }
        let existing: std::collections::HashSet<String> = store
            .api_keys()
            .existing_hashes(&cached)
            .await?
            .into_iter()
            .collect();
        let mut dropped = 0;
        for h in cached.iter().filter(|h| !existing.contains(*h)) {
            self.invalidate_hex(h);
            dropped += 1;
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_shape() {
        let a = generate();
        let b = generate();
        assert_ne!(a.key.expose(), b.key.expose());
        let key = a.key.expose();
        assert!(key.starts_with("sk-"), "{key}");
        assert_eq!(key.len(), KEY_LEN);
        assert!(well_formed(key));
        assert_eq!(a.display_prefix, &key[..DISPLAY_PREFIX_LEN]);
        assert_eq!(a.hash_hex, hex::encode(Sha256::digest(key.as_bytes())));
        assert_eq!(a.hash_hex.len(), 64);
        assert!(!a.hash_hex.contains(&key[3..]));
    }

    #[test]
    fn junk_is_not_well_formed() {
        let good = generate().key.expose().to_owned();
        assert!(!well_formed(&good[1..]));
        assert!(!well_formed(&format!("{good}x")));
        assert!(!well_formed(&good.replacen("sk-", "pk-", 1)));
        let mut bad = good.clone();
        bad.replace_range(10..11, "+");
        assert!(!well_formed(&bad));
        assert!(!well_formed(""));
    }

    #[test]
    fn the_random_part_takes_exactly_url_safe_base64() {
        let good = generate().key.expose().to_owned();
        for b in 0..=127u8 {
            let mut key = good.clone().into_bytes();
            key[KEY_PREFIX.len() + 5] = b;
            let key = String::from_utf8(key).unwrap();
            let allowed = b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
            assert_eq!(well_formed(&key), allowed, "{b:#x}");
        }
        // A non-ASCII character never is (and changes the length besides).
        let key = format!("{}é{}", &good[..10], &good[12..]);
        assert!(!well_formed(&key));
    }

    #[tokio::test]
    async fn invalidation_drops_entries_by_hash_and_by_user() {
        let cache = KeyCache::new();
        let alice = UserId::new();
        let bob = UserId::new();
        let owner = |user| CachedKey {
            owner: KeyOwner {
                key_id: crate::store::ids::ApiKeyId::new(),
                user_id: user,
            },
            expires_at: None,
            allowed_models: None,
            limits: None,
        };
        let (h1, h2, h3) = (
            ApiKeyHash::of("a"),
            ApiKeyHash::of("b"),
            ApiKeyHash::of("c"),
        );
        cache.inner.found.insert(h1, owner(alice));
        cache.inner.found.insert(h2, owner(alice));
        cache.inner.found.insert(h3, owner(bob));
        cache.invalidate_hex(&hex::encode(h1));
        assert!(cache.cached(&h1).is_none());
        assert!(cache.cached(&h2).is_some());
        cache.invalidate_user(alice);
        assert!(cache.cached(&h2).is_none());
        assert_eq!(cache.cached(&h3).map(|k| k.owner.user_id), Some(bob));
        cache.invalidate_hex("not hex");
        cache.invalidate_all();
        assert!(cache.cached(&h3).is_none());
        assert_eq!(cache.inner.epoch.load(Ordering::SeqCst), 3);
    }
}
