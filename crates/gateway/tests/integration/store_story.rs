//! The store story: every repository used as the service uses it, run on
//! SQLite and (with `TEST_DATABASE_URL`) on PostgreSQL, through the same
//! public API.

use std::time::Duration;

use gateway::config::Secret;
use gateway::crypto::{EncryptionKey, TotpSecret};
use gateway::store::config::{ConfigChange, ConfigValue, HISTORY_LIMIT, MASK};
use gateway::store::ids::UserId;
use gateway::store::usage::UsageRecord;
use gateway::store::users::{AuthMethod, NewUser, Role, RoleChoice};
use gateway::store::{Pool, Store, StoreError};

use crate::common::TestDb;

fn password_user<'a>(email: &'a str, role: RoleChoice) -> NewUser<'a> {
    NewUser {
        email,
        role,
        auth_method: AuthMethod::Password,
        password_hash: Some("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA"),
        sso_subject: None,
        totp_secret: None,
        must_change_password: false,
    }
}

async fn users_and_roles(db: TestDb) {
    let store = db.store().await;
    let users = store.users();
    assert!(!users.has_admin().await.unwrap());
    assert_eq!(users.count().await.unwrap(), 0);

    // The first account without an admin becomes Admin; the next is User.
    let first = users
        .create(password_user(
            "  First@Example.COM ",
            RoleChoice::AdminIfNone,
        ))
        .await
        .unwrap();
    assert_eq!(first.email, "first@example.com");
    assert_eq!(first.role, Role::Admin);
    let second = users
        .create(password_user("second@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    assert_eq!(second.role, Role::User);
    assert!(users.has_admin().await.unwrap());
    assert!(matches!(
        users
            .create(password_user("x@example.com", RoleChoice::FirstAdmin))
            .await,
        Err(StoreError::Conflict(_))
    ));
    // Emails are unique after normalisation.
    assert!(matches!(
        users
            .create(password_user("SECOND@example.com", RoleChoice::AdminIfNone))
            .await,
        Err(StoreError::Conflict(_))
    ));

    // Lookups.
    let found = users
        .find_by_email("Second@Example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, second.id);
    assert_eq!(
        users.get(first.id).await.unwrap().unwrap().email,
        first.email
    );
    assert!(users.get(UserId::new()).await.unwrap().is_none());
    let list = users.list().await.unwrap();
    assert_eq!(list.len(), 2);
    assert!(format!("{:?}", list[0]).contains("password_hash: Some(***)"));

    // The last admin can be neither demoted nor deleted.
    assert!(matches!(
        users.set_role(first.id, Role::User).await,
        Err(StoreError::LastAdmin)
    ));
    assert!(matches!(
        users.delete(first.id).await,
        Err(StoreError::LastAdmin)
    ));
    users.set_role(second.id, Role::Admin).await.unwrap();
    let demoted = users.set_role(first.id, Role::User).await.unwrap();
    assert_eq!(demoted.role, Role::User);
    users.delete(first.id).await.unwrap();
    assert!(users.get(first.id).await.unwrap().is_none());
    assert!(matches!(
        users.delete(first.id).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        users.set_role(UserId::new(), Role::User).await,
        Err(StoreError::NotFound(_))
    ));

    // Passwords and the must-change flag.
    users
        .set_password(second.id, "$argon2id$new", true)
        .await
        .unwrap();
    let u = users.get(second.id).await.unwrap().unwrap();
    assert!(u.must_change_password);
    assert_eq!(u.password_hash.unwrap().expose(), "$argon2id$new");
    store.close().await;
}

async fn concurrent_first_sign_ins(db: TestDb) {
    let store = db.store().await;
    // Eight first sign-ins at once: exactly one becomes Admin.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .users()
                .upsert_sso(&format!("user{i}@example.com"), &format!("sub-{i}"))
                .await
                .unwrap()
        }));
    }
    let mut admins = 0;
    for t in tasks {
        let (user, created) = t.await.unwrap();
        assert!(created);
        admins += usize::from(user.role == Role::Admin);
    }
    assert_eq!(admins, 1);

    // Two admins demoting each other at once cannot leave none.
    let all = store.users().list().await.unwrap();
    let admin = all.iter().find(|u| u.role == Role::Admin).unwrap().id;
    let other = all.iter().find(|u| u.role == Role::User).unwrap().id;
    store.users().set_role(other, Role::Admin).await.unwrap();
    let (s1, s2) = (store.clone(), store.clone());
    let (a, b) = tokio::join!(
        async move { s1.users().set_role(admin, Role::User).await },
        async move { s2.users().set_role(other, Role::User).await }
    );
    assert!(a.is_ok() != b.is_ok(), "exactly one demotion succeeds");
    assert!(store.users().has_admin().await.unwrap());
    store.close().await;
}

async fn sso_upsert_and_linking(db: TestDb) {
    let store = db.store().await;
    let users = store.users();
    let (a, created) = users
        .upsert_sso("Ann@Example.com", "sub-ann")
        .await
        .unwrap();
    assert!(created);
    assert_eq!((a.role, a.auth_method), (Role::Admin, AuthMethod::Sso));
    assert_eq!(a.sso_subject.as_deref(), Some("sub-ann"));
    // Same subject again: the same account.
    let (again, created) = users
        .upsert_sso("ann@example.com", "sub-ann")
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(again.id, a.id);
    // A password account is linked on its first SSO sign-in.
    let bob = users
        .create(password_user("bob@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    let (linked, created) = users
        .upsert_sso("bob@example.com", "sub-bob")
        .await
        .unwrap();
    assert!(!created);
    assert_eq!(linked.id, bob.id);
    assert_eq!(linked.role, Role::User);
    // An email linked to another subject is refused.
    assert!(matches!(
        users.upsert_sso("bob@example.com", "sub-mallory").await,
        Err(StoreError::Conflict(_))
    ));
    // Explicit linking: a subject of another account is refused.
    let carol = users
        .create(password_user("carol@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    assert!(matches!(
        users.set_sso_subject(carol.id, "sub-ann").await,
        Err(StoreError::Conflict(_))
    ));
    users.set_sso_subject(carol.id, "sub-carol").await.unwrap();
    assert!(matches!(
        users.set_sso_subject(UserId::new(), "sub-x").await,
        Err(StoreError::NotFound(_))
    ));
    store.close().await;
}

async fn totp_and_recovery_codes(db: TestDb) {
    let store = db.store().await;
    let users = store.users();
    let u = users
        .create(password_user("t@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    assert!(users.pending_totp(u.id).await.unwrap().is_none());
    let secret = TotpSecret::generate();
    users.set_pending_totp(u.id, &secret).await.unwrap();
    assert_eq!(
        users.pending_totp(u.id).await.unwrap(),
        Some(secret.clone())
    );
    assert!(users.totp_secret(u.id).await.unwrap().is_none());
    // A step cannot be claimed while 2FA is off.
    assert!(!users.claim_totp_step(u.id, 10).await.unwrap());

    let hashes: Vec<String> = ["AAAAAAAAAA", "BBBBBBBBBB"]
        .iter()
        .map(|c| gateway::crypto::random::sha256_hex(c))
        .collect();
    users
        .enable_totp(u.id, &secret, 100, &hashes)
        .await
        .unwrap();
    assert!(users.get(u.id).await.unwrap().unwrap().totp_enabled);
    assert_eq!(users.totp_secret(u.id).await.unwrap(), Some(secret.clone()));
    assert!(users.pending_totp(u.id).await.unwrap().is_none());
    assert!(matches!(
        users.enable_totp(u.id, &secret, 101, &hashes).await,
        Err(StoreError::Conflict(_))
    ));
    // Steps: the enrollment step and earlier ones are spent; each later one works once.
    assert!(!users.claim_totp_step(u.id, 100).await.unwrap());
    assert!(!users.claim_totp_step(u.id, 99).await.unwrap());
    assert!(users.claim_totp_step(u.id, 101).await.unwrap());
    assert!(!users.claim_totp_step(u.id, 101).await.unwrap());

    // Recovery codes: single use, typed loosely.
    let codes = store.recovery_codes();
    assert_eq!(codes.remaining(u.id).await.unwrap(), 2);
    assert!(codes.redeem(u.id, "aaaaa-aaaaa").await.unwrap());
    assert!(!codes.redeem(u.id, "AAAAAAAAAA").await.unwrap());
    assert!(!codes.redeem(u.id, "CCCCCCCCCC").await.unwrap());
    assert_eq!(codes.remaining(u.id).await.unwrap(), 1);

    store.close().await;
}

async fn sessions(db: TestDb) {
    let store = db.store().await;
    let u = store
        .users()
        .create(password_user("s@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    let s1 = store
        .sessions()
        .create(u.id, AuthMethod::Password, 3600)
        .await
        .unwrap();
    let s2 = store
        .sessions()
        .create(u.id, AuthMethod::Sso, 3600)
        .await
        .unwrap();
    assert_ne!(s1.id, s2.id);
    assert_ne!(s1.csrf_token, s2.csrf_token);
    assert_eq!(s1.csrf_token.expose().len(), 43);

    let (got, user) = store.sessions().get_active(s1.id).await.unwrap().unwrap();
    assert_eq!(got, s1);
    assert_eq!(user.id, u.id);

    // Sliding: only a session refreshed at or before the threshold moves, once.
    let future = gateway::store::clock::now() + 10;
    let moved = store.sessions().extend(s1.id, future, 7200).await.unwrap();
    assert!(moved.is_some());
    let (got, _) = store.sessions().get_active(s1.id).await.unwrap().unwrap();
    assert_eq!(Some(got.expires_at), moved);
    assert!(store
        .sessions()
        .extend(s1.id, got.refreshed_at - 1, 7200)
        .await
        .unwrap()
        .is_none());

    // Ending sessions.
    assert_eq!(
        store
            .sessions()
            .delete_for_user(u.id, Some(s1.id))
            .await
            .unwrap(),
        1
    );
    assert!(store.sessions().get_active(s2.id).await.unwrap().is_none());
    store.sessions().delete(s1.id).await.unwrap();
    assert!(store.sessions().get_active(s1.id).await.unwrap().is_none());

    // Expiry and clean-up.
    let short = store
        .sessions()
        .create(u.id, AuthMethod::Password, 1)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(store
        .sessions()
        .get_active(short.id)
        .await
        .unwrap()
        .is_none());
    assert_eq!(store.sessions().delete_expired().await.unwrap(), 1);

    // Deleting the user deletes the sessions (cascade).
    let s3 = store
        .sessions()
        .create(u.id, AuthMethod::Password, 3600)
        .await
        .unwrap();
    let admin2 = store
        .users()
        .create(password_user(
            "s2@example.com",
            RoleChoice::Exactly(Role::Admin),
        ))
        .await
        .unwrap();
    store.users().delete(u.id).await.unwrap();
    assert!(store.sessions().get_active(s3.id).await.unwrap().is_none());
    assert_eq!(
        store.sessions().delete_for_user(u.id, None).await.unwrap(),
        0
    );
    drop(admin2);
    store.close().await;
}

async fn pending_logins(db: TestDb) {
    let store = db.store().await;
    let u = store
        .users()
        .create(password_user("p@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    let p = store.pending_logins();
    let token = p.create(u.id, 300).await.unwrap();
    let found = p.find(token).await.unwrap().unwrap();
    assert_eq!((found.user_id, found.attempts), (u.id, 0));
    // Wrong codes count; the fifth drops the token.
    for _ in 0..4 {
        assert!(p.record_failure(token, 5).await.unwrap());
    }
    assert!(!p.record_failure(token, 5).await.unwrap());
    assert!(p.find(token).await.unwrap().is_none());
    // Single use.
    let token = p.create(u.id, 300).await.unwrap();
    assert_eq!(p.consume(token).await.unwrap(), Some(u.id));
    assert_eq!(p.consume(token).await.unwrap(), None);
    // Expiry.
    let token = p.create(u.id, 1).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(p.find(token).await.unwrap().is_none());
    assert_eq!(p.consume(token).await.unwrap(), None);
    assert_eq!(p.delete_expired().await.unwrap(), 1);
    store.close().await;
}

async fn login_failures(db: TestDb) {
    let store = db.store().await;
    let f = store.login_failures();
    for _ in 0..4 {
        assert_eq!(f.record("a@example.com", 5, 900).await.unwrap(), None);
    }
    assert_eq!(f.locked_for("a@example.com", 5, 900).await.unwrap(), None);
    let locked = f.record("a@example.com", 5, 900).await.unwrap().unwrap();
    assert!((899..=900).contains(&locked), "{locked}");
    assert!(f
        .locked_for("a@example.com", 5, 900)
        .await
        .unwrap()
        .is_some());
    // Other emails are not affected.
    assert_eq!(f.locked_for("b@example.com", 5, 900).await.unwrap(), None);
    f.clear("a@example.com").await.unwrap();
    assert_eq!(f.locked_for("a@example.com", 5, 900).await.unwrap(), None);

    // With a 1 s window: a failure after a quiet window starts again at 1.
    for _ in 0..5 {
        f.record("c@example.com", 5, 1).await.unwrap();
    }
    assert!(f.locked_for("c@example.com", 5, 1).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(f.locked_for("c@example.com", 5, 1).await.unwrap(), None);
    assert_eq!(f.record("c@example.com", 5, 1).await.unwrap(), None);
    // Concurrent failures all count.
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .login_failures()
                .record("d@example.com", 5, 900)
                .await
                .unwrap()
        }));
    }
    let mut locks = 0;
    for t in tasks {
        locks += usize::from(t.await.unwrap().is_some());
    }
    assert_eq!(locks, 1, "exactly the fifth failure locks");
    assert!(f.delete_stale(0).await.unwrap() >= 2);
    store.close().await;
}

async fn domains(db: TestDb) {
    let store = db.store().await;
    let d = store.domains();
    // Empty list, no admin: the first sign-in of setup is allowed.
    assert!(d.is_allowed("anything.example").await.unwrap());
    store
        .users()
        .create(password_user("admin@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    // Empty list with an admin: nobody.
    assert!(!d.is_allowed("example.com").await.unwrap());
    assert!(d.add("example.com", None).await.unwrap());
    assert!(!d.add("example.com", None).await.unwrap());
    assert!(d.add("corp.example", None).await.unwrap());
    assert!(d.is_allowed("Example.COM").await.unwrap());
    assert!(!d.is_allowed("sub.example.com").await.unwrap());
    assert!(!d.is_allowed("other.org").await.unwrap());
    let list: Vec<String> = d
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|x| x.domain)
        .collect();
    assert_eq!(list, ["corp.example", "example.com"]);
    assert!(d.remove("example.com").await.unwrap());
    assert!(!d.remove("example.com").await.unwrap());
    assert!(!d.is_allowed("example.com").await.unwrap());
    store.close().await;
}

async fn config_and_history(db: TestDb) {
    let store = db.store().await;
    let admin = store
        .users()
        .create(password_user("cfg@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap();
    let c = store.config();
    assert_eq!(c.get("http_max_retries").await.unwrap(), None);
    assert!(c
        .set("http_max_retries", "5", false, Some(admin.id))
        .await
        .unwrap());
    // Setting the same value is not a change.
    assert!(!c
        .set("http_max_retries", "5", false, Some(admin.id))
        .await
        .unwrap());
    assert!(c
        .set("sso_client_secret", "s3cret", true, None)
        .await
        .unwrap());
    assert_eq!(
        c.get("http_max_retries").await.unwrap(),
        Some(ConfigValue::Plain("5".into()))
    );
    let secret = c.get("sso_client_secret").await.unwrap().unwrap();
    assert_eq!(secret, ConfigValue::Secret(Secret::new("s3cret")));
    assert_eq!(secret.display(), MASK);
    assert!(!format!("{secret:?}").contains("s3cret"));

    let list = c.list().await.unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].key, "http_max_retries");
    assert_eq!(list[0].updated_by, Some(admin.id));

    // A batch counts its changes.
    let changes = [
        ConfigChange {
            key: "a",
            value: Some("1"),
            secret: false,
        },
        ConfigChange {
            key: "b",
            value: Some("2"),
            secret: false,
        },
    ];
    assert_eq!(c.set_many(&changes, Some(admin.id)).await.unwrap(), 2);
    assert!(c.delete("a", None).await.unwrap());
    assert!(!c.delete("a", None).await.unwrap());

    let history = c.history(10).await.unwrap();
    let keys: Vec<&str> = history.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(
        keys,
        ["a", "b", "a", "sso_client_secret", "http_max_retries"]
    );
    assert_eq!(history[0].new_value, None);
    assert_eq!(history[0].old_value.as_deref(), Some("1"));
    assert_eq!(
        history[3].new_value.as_deref(),
        Some(MASK),
        "secrets are masked"
    );
    assert!(history[3].secret);
    assert_eq!(
        history[4].changed_by_email.as_deref(),
        Some("cfg@example.com")
    );
    assert_eq!(history[4].old_value, None);

    // Pruned to the last 1000 entries, in one transaction per write.
    let values: Vec<String> = (0..1005).map(|i| i.to_string()).collect();
    for chunk in values.chunks(201) {
        let changes: Vec<ConfigChange<'_>> = chunk
            .iter()
            .map(|v| ConfigChange {
                key: v.as_str(),
                value: Some(v.as_str()),
                secret: false,
            })
            .collect();
        c.set_many(&changes, None).await.unwrap();
    }
    let all = c.history(5000).await.unwrap();
    assert_eq!(all.len() as i64, HISTORY_LIMIT);
    assert_eq!(all[0].key, "1004");
    // 5 + 1005 entries: the 10 oldest (5 + "0".."4") are gone.
    assert_eq!(all.last().unwrap().key, "5");
    store.close().await;
}

/// Statements cached on every connection of `pool`, once all are idle (a
/// connection goes back to the pool a moment after its transaction).
async fn cached_statements<DB: sqlx::Database + sqlx::database::HasStatementCache>(
    pool: &sqlx::Pool<DB>,
) -> usize {
    use sqlx::Connection as _;
    for _ in 0..200 {
        if pool.num_idle() == pool.size() as usize {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let held: Vec<_> = std::iter::from_fn(|| pool.try_acquire()).collect();
    held.iter().map(|c| c.cached_statements_size()).sum()
}

/// Usage batches of many lengths leave no prepared statement per length
/// behind: each length would be another statement text, and a cached
/// statement per length grew the gateway's memory with its traffic
/// (docs/reliability.md, "Soak").
async fn usage_batches_of_any_length_are_not_cached(db: TestDb) {
    let store = db.store().await;
    let user = store
        .users()
        .create(password_user("usage@example.com", RoleChoice::AdminIfNone))
        .await
        .unwrap()
        .id;
    let record = |i: usize| UsageRecord {
        user_id: user,
        key_id: None,
        provider: "primary".into(),
        model: "m".into(),
        stream: false,
        status: 200,
        input_tokens: 1,
        output_tokens: 1,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        latency_ms: 1,
        created_at: 1_700_000_000 + i64::try_from(i).unwrap(),
        cost_usd: None,
        requests: 1,
    };
    // One batch first, so the connection's other statements are cached.
    store.usage().insert_batch(&[record(0)]).await.unwrap();
    let cached = || async {
        match store.pool() {
            Pool::Sqlite(p) => cached_statements(p).await,
            Pool::Postgres(p) => cached_statements(p).await,
        }
    };
    let before = cached().await;
    let mut written = 1;
    for len in 2..=100 {
        let batch: Vec<UsageRecord> = (written..written + len).map(record).collect();
        store.usage().insert_batch(&batch).await.unwrap();
        written += len;
    }
    // A constant few, not one per length: PostgreSQL's batches are not
    // kept; SQLite's are written in statements of four fixed sizes, so each
    // of its (at most 4) connections keeps at most those four.
    let after = cached().await;
    assert!(
        after <= before + 16,
        "99 batch lengths left {} more cached statements",
        after - before
    );
    assert_eq!(store.usage().records_of(user).await.unwrap().len(), written);
}

async fn key_check_and_reopen(db: TestDb) {
    let store = db.store().await;
    store.config().set("k", "v", true, None).await.unwrap();
    store.close().await;
    // The same key opens it again and reads the secret.
    let store = db.store().await;
    assert_eq!(
        store.config().get("k").await.unwrap().unwrap().expose(),
        "v"
    );
    store.close().await;
    // Another key is refused at connect, before any secret is read.
    let other = EncryptionKey::generate();
    let err = Store::connect(&db.url, &other).await.unwrap_err();
    assert!(matches!(err, StoreError::WrongKey), "{err}");
    assert!(err.to_string().contains("CONFIG_ENCRYPTION_KEY"));
}

crate::both_stores!(
    users_and_roles,
    concurrent_first_sign_ins,
    sso_upsert_and_linking,
    totp_and_recovery_codes,
    sessions,
    pending_logins,
    login_failures,
    domains,
    config_and_history,
    key_check_and_reopen,
    usage_batches_of_any_length_are_not_cached,
);
