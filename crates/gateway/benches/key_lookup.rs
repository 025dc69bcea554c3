//! The API-key lookup on the `/v1` hot path (full deployment).
//!
//! - `key_lookup/cached`: `KeyCache::lookup` of a key already in memory (the
//!   steady state: every request after a key's first within 5 minutes); no
//!   database round trip.
//! - `key_lookup/hash_and_cached`: the same with the SHA-256 of the presented
//!   key, i.e. everything the middleware does per request to find the owner.
//! - `key_lookup/store`: the store's indexed lookup by hash on SQLite (a
//!   local file: the cheapest database round trip there is; PostgreSQL adds
//!   a network hop), which the cache saves.
//!
//! Run: `cargo bench -p gateway --bench key_lookup`.

#![expect(
    clippy::print_stderr,
    reason = "a benchmark that cannot set up says why on stderr"
)]

use std::error::Error;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use gateway::auth::keys::{self, ApiKeyHash, KeyCache};
use gateway::crypto::EncryptionKey;
use gateway::store::api_keys::NewApiKey;
use gateway::store::users::{AuthMethod, NewUser, RoleChoice};
use gateway::store::Store;

struct Fixture {
    rt: tokio::runtime::Runtime,
    store: Store,
    cache: KeyCache,
    key: String,
    hash: ApiKeyHash,
    hash_hex: String,
    dir: std::path::PathBuf,
}

fn setup() -> Result<Fixture, Box<dyn Error>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let dir = std::env::temp_dir().join(format!("gw-bench-{}", gateway::ids::fast_uuid().simple()));
    std::fs::create_dir_all(&dir)?;
    let url = format!("sqlite://{}/bench.db", dir.display());
    let store = rt.block_on(Store::connect(&url, &EncryptionKey::generate()))?;
    let user = rt.block_on(store.users().create(NewUser {
        email: "bench@example.com",
        role: RoleChoice::Exactly(gateway::store::users::Role::User),
        auth_method: AuthMethod::Password,
        password_hash: Some("not a real hash"),
        sso_subject: None,
        totp_secret: None,
        must_change_password: false,
    }))?;
    let generated = keys::generate();
    rt.block_on(store.api_keys().create(NewApiKey {
        user_id: user.id,
        key_hash: &generated.hash_hex,
        key_prefix: &generated.display_prefix,
        label: "bench",
        expires_at: None,
        allowed_models: None,
        limits: &gateway::store::api_keys::LimitColumns::default(),
    }))?;
    let cache = KeyCache::new();
    let key = generated.key.expose().to_owned();
    let hash = ApiKeyHash::of(&key);
    // Warm the cache the way the first request does.
    if rt.block_on(cache.lookup(&store, hash))?.is_none() {
        return Err("the stored key was not found".into());
    }
    Ok(Fixture {
        rt,
        store,
        cache,
        key,
        hash,
        hash_hex: generated.hash_hex,
        dir,
    })
}

fn key_lookup(c: &mut Criterion) {
    let f = match setup() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("key_lookup bench setup failed: {e}");
            return;
        }
    };
    let mut group = c.benchmark_group("key_lookup");
    group.bench_function("cached", |b| {
        b.iter(|| f.rt.block_on(f.cache.lookup(&f.store, black_box(f.hash))))
    });
    group.bench_function("hash_and_cached", |b| {
        b.iter(|| {
            let hash = ApiKeyHash::of(black_box(&f.key));
            f.rt.block_on(f.cache.lookup(&f.store, hash))
        })
    });
    group.bench_function("store", |b| {
        b.iter(|| {
            f.rt.block_on(f.store.api_keys().find_by_hash(black_box(&f.hash_hex)))
        })
    });
    group.finish();
    f.rt.block_on(f.store.close());
    let _ = std::fs::remove_dir_all(&f.dir);
}

criterion_group!(benches, key_lookup);
criterion_main!(benches);
