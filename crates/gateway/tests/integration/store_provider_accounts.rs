//! Provider accounts in the store (spec 2.5), on SQLite and PostgreSQL:
//! several per provider in priority order, secrets encrypted and bound to
//! their row, each user confined to their own, the per-provider limit, the
//! provider order.

use gateway::config::Secret;
use gateway::store::ids::UserId;
use gateway::store::provider_accounts::{AccountChange, NewAccount, MAX_ACCOUNTS_PER_PROVIDER};
use gateway::store::users::{AuthMethod, NewUser, RoleChoice};
use gateway::store::Store;

use crate::common::TestDb;

async fn user(store: &Store, email: &str) -> UserId {
    store
        .users()
        .create(NewUser {
            email,
            role: RoleChoice::AdminIfNone,
            auth_method: AuthMethod::Password,
            password_hash: Some("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA"),
            sso_subject: None,
            totp_secret: None,
            must_change_password: false,
        })
        .await
        .unwrap()
        .id
}

fn api_key<'a>(user: UserId, provider: &'a str, key: &'a Secret, priority: i64) -> NewAccount<'a> {
    NewAccount {
        user_id: user,
        provider,
        label: "",
        auth_kind: "api_key",
        access_token: key,
        refresh_token: None,
        expires_at: None,
        base_url: None,
        priority,
    }
}

async fn accounts_per_user(db: TestDb) {
    let store = db.store().await;
    let accounts = store.provider_accounts();
    let alice = user(&store, "alice@example.com").await;
    let bob = user(&store, "bob@example.com").await;
    let (k1, k2, k3) = (
        Secret::new("sk-first-0001"),
        Secret::new("sk-second-0002"),
        Secret::new("sk-bob-0003"),
    );
    let low = accounts
        .create(api_key(alice, "completions_vendor", &k1, 100))
        .await
        .unwrap();
    let high = accounts
        .create(NewAccount {
            label: "team",
            base_url: Some("https://llm.example.com/v1"),
            ..api_key(alice, "custom", &k2, 10)
        })
        .await
        .unwrap();
    accounts
        .create(api_key(bob, "completions_vendor", &k3, 100))
        .await
        .unwrap();

    // Priority first; each user sees only their own.
    let mine = accounts.list_for_user(alice, None).await.unwrap();
    assert_eq!(
        mine.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![high.id, low.id]
    );
    assert_eq!(mine[0].label, "team");
    assert_eq!(
        mine[0].base_url.as_deref(),
        Some("https://llm.example.com/v1")
    );
    let custom_only = accounts.list_for_user(alice, Some("custom")).await.unwrap();
    assert_eq!(custom_only.len(), 1);
    let usable = accounts.usable(alice).await.unwrap();
    assert_eq!(usable[0].access_token.expose(), "sk-second-0002");
    assert_eq!(usable[1].access_token.expose(), "sk-first-0001");
    assert!(accounts.get(bob, low.id).await.unwrap().is_none());

    // The key is encrypted at rest and bound to its row.
    let (stored,): (String,) = match store.pool() {
        gateway::store::Pool::Sqlite(p) => sqlx::query_as(&format!(
            "SELECT access_token FROM user_provider_tokens WHERE id = '{}'",
            low.id
        ))
        .fetch_one(p)
        .await
        .unwrap(),
        gateway::store::Pool::Postgres(p) => sqlx::query_as(&format!(
            "SELECT access_token FROM user_provider_tokens WHERE id = '{}'",
            low.id
        ))
        .fetch_one(p)
        .await
        .unwrap(),
    };
    assert!(!stored.contains("sk-first"));
    assert!(store
        .cipher()
        .decrypt_secret(
            &stored,
            &format!("user_provider_tokens.access_token:{}", high.id)
        )
        .is_err());

    // Changes: only the owner's, and a new key replaces the old one.
    let none = accounts
        .update(bob, low.id, AccountChange::default())
        .await
        .unwrap();
    assert!(none.is_none());
    let changed = accounts
        .update(
            alice,
            low.id,
            AccountChange {
                priority: Some(1),
                access_token: Some(Secret::new("sk-rotated-0004")),
                ..AccountChange::default()
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.priority, 1);
    let usable = accounts.usable(alice).await.unwrap();
    assert_eq!(usable[0].access_token.expose(), "sk-rotated-0004");

    // Deleting: another user's account is not found; one, then all.
    assert_eq!(
        accounts
            .delete(bob, "completions_vendor", Some(low.id))
            .await
            .unwrap(),
        0
    );
    assert_eq!(accounts.delete(alice, "custom", None).await.unwrap(), 1);
    assert_eq!(accounts.list_for_user(alice, None).await.unwrap().len(), 1);
    assert_eq!(accounts.list_for_user(bob, None).await.unwrap().len(), 1);

    // The user's deletion takes their accounts along.
    store.users().delete(bob).await.unwrap();
    assert!(accounts.usable(bob).await.unwrap().is_empty());
}

async fn limit_and_order(db: TestDb) {
    let store = db.store().await;
    let accounts = store.provider_accounts();
    let alice = user(&store, "alice@example.com").await;
    let key = Secret::new("sk-many");
    for _ in 0..MAX_ACCOUNTS_PER_PROVIDER {
        accounts
            .create(api_key(alice, "custom", &key, 100))
            .await
            .unwrap();
    }
    let refused = accounts.create(api_key(alice, "custom", &key, 100)).await;
    assert!(
        refused.is_err(),
        "the {}th account",
        MAX_ACCOUNTS_PER_PROVIDER + 1
    );
    // Another provider is not counted.
    accounts
        .create(api_key(alice, "completions_vendor", &key, 100))
        .await
        .unwrap();

    assert!(accounts.order(alice).await.unwrap().is_empty());
    accounts
        .set_order(alice, &["custom", "completions_vendor"])
        .await
        .unwrap();
    accounts
        .set_order(alice, &["custom", "primary"])
        .await
        .unwrap();
    assert_eq!(accounts.order(alice).await.unwrap(), ["custom", "primary"]);
}

/// Rotated OAuth tokens replace the stored pair (the refresh token only
/// when a new one is given), an error is recorded and cleared by the next
/// tokens, and `last_used` only moves forward.
async fn tokens_errors_and_last_use(db: TestDb) {
    let store = db.store().await;
    let accounts = store.provider_accounts();
    let alice = user(&store, "alice@example.com").await;
    let (access, refresh) = (Secret::new("sk-ant-oat-1"), Secret::new("refresh-1"));
    let created = accounts
        .create(NewAccount {
            auth_kind: "oauth_pkce",
            refresh_token: Some(&refresh),
            expires_at: Some(100),
            ..api_key(alice, "messages_vendor", &access, 100)
        })
        .await
        .unwrap();
    let id = created.id;
    assert!(accounts.record_error(id, "refresh refused").await.unwrap());
    let got = accounts.get(alice, id).await.unwrap().unwrap();
    assert_eq!(got.last_error.as_deref(), Some("refresh refused"));

    let renewed = Secret::new("sk-ant-oat-2");
    assert!(accounts
        .store_tokens(id, &renewed, None, Some(200))
        .await
        .unwrap());
    let usable = accounts.usable(alice).await.unwrap();
    assert_eq!(usable[0].access_token.expose(), "sk-ant-oat-2");
    assert_eq!(
        usable[0].refresh_token.as_ref().unwrap().expose(),
        "refresh-1"
    );
    assert_eq!(usable[0].account.expires_at, Some(200));
    assert!(usable[0].account.last_error.is_none());
    let rotated = Secret::new("refresh-2");
    accounts
        .store_tokens(id, &renewed, Some(&rotated), Some(300))
        .await
        .unwrap();
    let usable = accounts.usable(alice).await.unwrap();
    assert_eq!(
        usable[0].refresh_token.as_ref().unwrap().expose(),
        "refresh-2"
    );

    accounts.mark_used(&[(id, 50)]).await.unwrap();
    accounts.mark_used(&[(id, 40)]).await.unwrap();
    let got = accounts.get(alice, id).await.unwrap().unwrap();
    assert_eq!(got.last_used_at, Some(50));
    assert!(!accounts
        .store_tokens(
            gateway::store::ids::ProviderAccountId::new(),
            &renewed,
            None,
            None
        )
        .await
        .unwrap());
}

crate::both_stores!(
    accounts_per_user,
    limit_and_order,
    tokens_errors_and_last_use
);
