//! Full deployment reaches the direct providers through each user's own
//! accounts (spec 2.5, 4.4.3; interfaces-full.md 2), against the simulator,
//! on SQLite and PostgreSQL: a provider not connected is 403
//! `provider_not_connected`; a refused key or an internal base URL is not
//! stored; a connected account serves the user's next request with the
//! user's key; another user sees none of it; disconnecting stops it.

use serde_json::{json, Value};
use upstream_sim::Vendor;

use crate::accounts_support::{chat, connect_assistant, error_type, v1_key};
use crate::common::{admin_env, client, start_sim, FullEnv, TestDb, UiClient};
use crate::relay_support::vendor_chats;

async fn users_connect_their_own_providers(db: TestDb) {
    let sim = start_sim().await;
    let completions_base = format!("{}/v1", sim.completions_vendor_url());
    let mut extra = admin_env();
    extra.push(("COMPLETIONS_VENDOR_BASE_URL", completions_base.as_str()));
    let env = FullEnv::start(db, &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let bob = env.new_user(&admin, "bob@example.com", "User").await;
    let alice_key = v1_key(&alice.client).await;
    let bob_key = v1_key(&bob.client).await;

    // Nothing connected: the registry lists all five, none connected.
    let status: Value = alice
        .client
        .get("/_ui/api/providers/status")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(status["providers"].as_array().unwrap().len(), 5);
    assert!(status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["connected"] == false));
    let (status, kind, message) = error_type(chat(&env, &alice_key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_not_connected"));
    assert!(
        message.contains("/_ui/api/providers/custom/accounts"),
        "{message}"
    );

    // A base URL on this machine is internal: refused until the admin
    // allows private networks (a hot setting).
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");
    let account =
        json!({"api_key": "sk-alice-custom", "base_url": sim.custom_url(), "label": "lab"});
    let resp = alice
        .client
        .post("/_ui/api/providers/custom/accounts", account.clone())
        .await;
    let (status, kind, message) = error_type(resp).await;
    assert_eq!((status, kind.as_str()), (400, "validation_error"));
    assert!(message.contains("internal address"), "{message}");
    let resp = admin
        .put(
            "/_ui/api/config",
            json!({"custom_allow_private_networks": true}),
        )
        .await;
    assert_eq!(resp.status(), 200);

    // A key the provider refuses is not stored.
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-wrong", "base_url": sim.custom_url()}),
        )
        .await;
    let (status, kind, _) = error_type(resp).await;
    assert_eq!((status, kind.as_str()), (400, "validation_error"));
    // custom needs its base URL.
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-alice-custom"}),
        )
        .await;
    assert_eq!(resp.status(), 400);

    let resp = alice
        .client
        .post("/_ui/api/providers/custom/accounts", account)
        .await;
    assert_eq!(resp.status(), 201);
    let created: Value = resp.json().await.unwrap();
    assert_eq!(created["provider"], "custom");
    assert_eq!(created["label"], "lab");
    assert_eq!(created["status"], "active");
    assert_eq!(created["source"], "user");
    assert!(!created.to_string().contains("sk-alice-custom"));
    let account_id = created["id"].as_str().unwrap().to_owned();

    // Alice's next request goes to her server with her key; Bob still has none.
    let resp = chat(&env, &alice_key, "custom/llama3").await;
    assert_eq!(resp.status(), 200);
    let sent = vendor_chats(&sim, Vendor::Custom).pop().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer sk-alice-custom"));
    let (status, kind, _) = error_type(chat(&env, &bob_key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_not_connected"));
    let listed: Value = bob
        .client
        .get("/_ui/api/providers/custom/accounts")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["accounts"], json!([]));
    let resp = bob
        .client
        .delete(&format!(
            "/_ui/api/providers/custom?account_id={account_id}"
        ))
        .await;
    assert_eq!(resp.status(), 404);

    // A second provider: a bare model of its family goes to it.
    sim.add_vendor_api_key(Vendor::Completions, "sk-alice-openai");
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/completions_vendor/accounts",
            json!({"api_key": "sk-alice-openai"}),
        )
        .await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let resp = chat(&env, &alice_key, "gpt-4o").await;
    assert_eq!(resp.status(), 200);
    let sent = vendor_chats(&sim, Vendor::Completions).pop().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer sk-alice-openai"));

    // Renaming and reprioritising; the order of providers.
    let resp = alice
        .client
        .http
        .patch(env.url(&format!("/_ui/api/providers/custom/accounts/{account_id}")))
        .header("x-csrf-token", alice.client.csrf().unwrap())
        .json(&json!({"label": "renamed", "priority": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let patched: Value = resp.json().await.unwrap();
    assert_eq!(
        (patched["label"].as_str(), patched["priority"].as_i64()),
        (Some("renamed"), Some(5))
    );
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/priority",
            json!({"order": ["custom", "nope"]}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let order: Value = alice
        .client
        .post("/_ui/api/providers/priority", json!({"order": ["custom"]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(order["order"][0], "custom");
    assert_eq!(order["order"].as_array().unwrap().len(), 5);

    // Disconnecting stops it at once.
    let removed: Value = alice
        .client
        .delete("/_ui/api/providers/custom")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(removed, json!({"ok": true, "removed": 1}));
    let (status, kind, _) = error_type(chat(&env, &alice_key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_not_connected"));
}

async fn patch(ui: &UiClient, env: &FullEnv, path: &str, body: Value) -> reqwest::Response {
    ui.http
        .patch(env.url(path))
        .header("x-csrf-token", ui.csrf().unwrap())
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// `PATCH /_ui/api/admin/providers/{provider}` as `ui`.
async fn switch(ui: &UiClient, env: &FullEnv, provider: &str, enabled: bool) -> reqwest::Response {
    patch(
        ui,
        env,
        &format!("/_ui/api/admin/providers/{provider}"),
        json!({ "enabled": enabled }),
    )
    .await
}

/// An administrator's switch turns a provider off for everyone at once.
async fn admins_switch_providers_off(db: TestDb) {
    let sim = start_sim().await;
    let mut extra = admin_env();
    extra.push(("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true"));
    let env = FullEnv::start(db, &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-alice-custom", "base_url": sim.custom_url()}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);

    // Only an admin switches, and primary stays on.
    let resp = switch(&alice.client, &env, "custom", false).await;
    assert_eq!(resp.status(), 403);
    let resp = switch(&admin, &env, "primary", false).await;
    assert_eq!(resp.status(), 400);
    let resp = switch(&admin, &env, "custom", false).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"id": "custom", "enabled": false})
    );

    let (status, kind, _) = error_type(chat(&env, &key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_disabled"));
    let registry: Value = alice
        .client
        .get("/_ui/api/providers/registry")
        .await
        .json()
        .await
        .unwrap();
    let custom = registry["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "custom")
        .unwrap()
        .clone();
    assert_eq!(custom["enabled"], false);
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-alice-custom", "base_url": sim.custom_url()}),
        )
        .await;
    let (status, kind, _) = error_type(resp).await;
    assert_eq!((status, kind.as_str()), (403, "provider_disabled"));
    let listed: Value = admin
        .get("/_ui/api/admin/providers")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["providers"].as_array().unwrap().len(), 5);

    let resp = switch(&admin, &env, "custom", true).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);
}

/// The shared pool: an admin's account every user reaches after their own.
async fn the_pool_serves_users_without_their_own_account(db: TestDb) {
    let sim = start_sim().await;
    let mut extra = admin_env();
    extra.push(("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true"));
    let env = FullEnv::start(db, &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    sim.add_vendor_api_key(Vendor::Custom, "sk-pool-custom");
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");

    // Only admins manage the pool.
    assert_eq!(alice.client.get("/_ui/api/admin/pool").await.status(), 403);
    let resp = admin
        .post(
            "/_ui/api/admin/pool",
            json!({"provider": "custom", "label": "team", "api_key": "sk-pool-custom", "base_url": sim.custom_url()}),
        )
        .await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let pooled: Value = resp.json().await.unwrap();
    assert_eq!(
        (pooled["source"].as_str(), pooled["enabled"].as_bool()),
        (Some("pool"), Some(true))
    );
    let pool_id = pooled["id"].as_str().unwrap().to_owned();

    // Alice has no account of her own: the pool's serves her.
    let status: Value = alice
        .client
        .get("/_ui/api/providers/status")
        .await
        .json()
        .await
        .unwrap();
    let custom = status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "custom")
        .unwrap()
        .clone();
    assert_eq!(
        (
            custom["connected"].as_bool(),
            custom["pool_available"].as_bool()
        ),
        (Some(false), Some(true))
    );
    assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);
    let sent = vendor_chats(&sim, Vendor::Custom).pop().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer sk-pool-custom"));

    // Her own account comes first.
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-alice-custom", "base_url": sim.custom_url()}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);
    let sent = vendor_chats(&sim, Vendor::Custom).pop().unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer sk-alice-custom"));
    assert_eq!(
        alice
            .client
            .delete("/_ui/api/providers/custom")
            .await
            .status(),
        200
    );

    // Switched off, the pool account serves nobody; removed, it is gone.
    let path = format!("/_ui/api/admin/pool/{pool_id}");
    let resp = patch(
        &admin,
        &env,
        &path,
        json!({"enabled": false, "label": "paused"}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let (status, kind, _) = error_type(chat(&env, &key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_not_connected"));
    let resp = patch(&admin, &env, &path, json!({"enabled": true})).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);
    let listed: Value = admin.get("/_ui/api/admin/pool").await.json().await.unwrap();
    assert_eq!(listed["accounts"][0]["label"], "paused");
    assert!(!listed.to_string().contains("sk-pool-custom"));
    assert_eq!(admin.delete(&path).await.status(), 200);
    assert_eq!(admin.delete(&path).await.status(), 404);
    let (status, kind, _) = error_type(chat(&env, &key, "custom/llama3").await).await;
    assert_eq!((status, kind.as_str()), (403, "provider_not_connected"));
}

crate::both_stores!(
    users_connect_their_own_providers,
    admins_switch_providers_off,
    the_pool_serves_users_without_their_own_account
);

/// With PostgreSQL, a second replica follows an account connected, a
/// provider switched off and an account removed on the first within a
/// second (`accounts:<user>` and `switches` announcements), though it had
/// cached the user's providers.
#[tokio::test]
async fn a_second_replica_follows_within_a_second() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the two-replica test is skipped");
        return;
    };
    let sim = start_sim().await;
    let mut extra = admin_env();
    extra.push(("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true"));
    let env = FullEnv::start(db, &extra).await;
    let two = env.replica().await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    let chat_two = |model: &'static str| {
        let url = two.url("/v1/chat/completions");
        let key = key.clone();
        async move {
            client()
                .post(url)
                .bearer_auth(key)
                .json(&json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    let within_a_second = |want: u16| {
        let chat_two = &chat_two;
        async move {
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(1) {
                if chat_two("custom/llama3").await == want {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            false
        }
    };
    // Replica two caches "nothing connected".
    assert_eq!(chat_two("custom/llama3").await, 403);
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/custom/accounts",
            json!({"api_key": "sk-alice-custom", "base_url": sim.custom_url()}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    assert!(within_a_second(200).await, "the new account on replica two");
    let resp = switch(&admin, &env, "custom", false).await;
    assert_eq!(resp.status(), 200);
    assert!(within_a_second(403).await, "the switch on replica two");
    let resp = switch(&admin, &env, "custom", true).await;
    assert_eq!(resp.status(), 200);
    assert!(
        within_a_second(200).await,
        "switched on again on replica two"
    );
    assert_eq!(
        alice
            .client
            .delete("/_ui/api/providers/custom")
            .await
            .status(),
        200
    );
    assert!(within_a_second(403).await, "the removal on replica two");
}

/// Two accounts of one provider: a 429 from the preferred one rests it and
/// the next one answers the same request; while it rests, requests go
/// straight to the next one.
#[tokio::test]
async fn a_429_rests_the_account_and_the_next_one_answers() {
    use crate::fault_proxy::{Fault, FaultProxy};
    let sim = start_sim().await;
    let proxy = FaultProxy::start(&sim.base_url()).await;
    let mut extra = admin_env();
    extra.push(("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true"));
    extra.push(("HTTP_MAX_RETRIES", "0"));
    let env = FullEnv::start(TestDb::sqlite(), &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");
    let behind_proxy = sim.custom_url().replace(&sim.base_url(), &proxy.url());
    for (base, priority) in [(behind_proxy, 1), (sim.custom_url(), 2)] {
        let resp = alice
            .client
            .post(
                "/_ui/api/providers/custom/accounts",
                json!({"api_key": "sk-alice-custom", "base_url": base, "priority": priority}),
            )
            .await;
        assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    }
    proxy.clear();
    let direct_before = vendor_chats(&sim, Vendor::Custom).len();

    proxy.push(
        Fault::Status {
            code: 429,
            retry_after: None,
        },
        1,
    );
    let resp = chat(&env, &key, "custom/llama3").await;
    assert_eq!(resp.status(), 200, "the second account answers");
    assert_eq!(
        proxy.applied().len(),
        1,
        "the preferred account was asked first"
    );
    assert_eq!(vendor_chats(&sim, Vendor::Custom).len(), direct_before + 1);

    // Resting: the preferred account is not asked again.
    let resp = chat(&env, &key, "custom/llama3").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(proxy.applied().len(), 1);
    assert_eq!(vendor_chats(&sim, Vendor::Custom).len(), direct_before + 2);

    // The rate-limit view: the resting account with its 429; the custom
    // server sends no rate-limit headers, so no windows are known.
    let limits: Value = alice
        .client
        .get("/_ui/api/providers/rate-limits")
        .await
        .json()
        .await
        .unwrap();
    let limits = limits["accounts"].as_array().unwrap();
    assert_eq!(limits.len(), 2, "{limits:?}");
    let resting = limits.iter().find(|a| a["recent_429"] == 1).unwrap();
    assert!(resting["cooldown_until"].is_string());
    let answering = limits.iter().find(|a| a["recent_429"] == 0).unwrap();
    assert!(answering["cooldown_until"].is_null());
    assert!(answering["remaining_requests"].is_null(), "{answering}");
    let accounts: Value = alice
        .client
        .get("/_ui/api/providers/custom/accounts")
        .await
        .json()
        .await
        .unwrap();
    let statuses: Vec<&str> = accounts["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"cooldown"), "{statuses:?}");
}

/// The SSRF guard again when the gateway connects (interfaces-full.md 2.3):
/// an account saved while private networks were allowed stops reaching an
/// internal address once the administrator withdraws that, whether its host
/// is an address (refused before any connection) or a name that resolves
/// to one (refused by the resolver); the simulator receives nothing.
#[tokio::test]
async fn internal_addresses_are_refused_again_at_connect_time() {
    let sim = start_sim().await;
    let env = FullEnv::start(TestDb::sqlite(), &admin_env()).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;
    sim.add_vendor_api_key(Vendor::Custom, "sk-alice-custom");
    let allow = |on: bool| {
        let admin = &admin;
        async move {
            let resp = admin
                .put(
                    "/_ui/api/config",
                    json!({"custom_allow_private_networks": on}),
                )
                .await;
            assert_eq!(resp.status(), 200);
        }
    };
    let by_name = sim.custom_url().replace("127.0.0.1", "localhost");
    for (base, refused) in [
        (sim.custom_url(), (403, "forbidden")),
        (by_name, (502, "upstream_api_error")),
    ] {
        allow(true).await;
        let resp = alice
            .client
            .post(
                "/_ui/api/providers/custom/accounts",
                json!({"api_key": "sk-alice-custom", "base_url": base}),
            )
            .await;
        assert_eq!(resp.status(), 201, "{base}: {:?}", resp.text().await);
        assert_eq!(chat(&env, &key, "custom/llama3").await.status(), 200);

        allow(false).await;
        let before = vendor_chats(&sim, Vendor::Custom).len();
        let (status, kind, message) = error_type(chat(&env, &key, "custom/llama3").await).await;
        assert_eq!((status, kind.as_str()), refused, "{base}: {message}");
        assert_eq!(vendor_chats(&sim, Vendor::Custom).len(), before, "{base}");
        let resp = alice.client.delete("/_ui/api/providers/custom").await;
        assert_eq!(resp.status(), 200);
    }
}

/// Falling over to the next provider (interfaces-full.md 2, selection step
/// 3): when every account of the first provider that takes a bare model
/// answered 429 (or rests after one), the next provider that takes it
/// answers; under an explicit `provider/model` the 429 is the answer.
#[tokio::test]
async fn a_bare_model_falls_over_to_the_next_provider() {
    use crate::fault_proxy::{Fault, FaultProxy};
    let sim = start_sim().await;
    let proxy = FaultProxy::start(&sim.base_url()).await;
    let code_host = sim.assistant_vendor_code_host_url();
    let token_url = sim.assistant_vendor_token_url();
    let mut extra = admin_env();
    extra.push(("CUSTOM_ALLOW_PRIVATE_NETWORKS", "true"));
    extra.push(("HTTP_MAX_RETRIES", "0"));
    extra.push(("ASSISTANT_VENDOR_CODE_HOST_URL", code_host.as_str()));
    extra.push(("ASSISTANT_VENDOR_TOKEN_URL", token_url.as_str()));
    let env = FullEnv::start(TestDb::sqlite(), &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let key = v1_key(&alice.client).await;

    // completions_vendor first (behind the fault proxy), assistant_vendor next.
    sim.add_vendor_api_key(Vendor::Completions, "sk-alice-openai");
    let completions =
        format!("{}/v1", sim.completions_vendor_url()).replace(&sim.base_url(), &proxy.url());
    let resp = alice
        .client
        .post(
            "/_ui/api/providers/completions_vendor/accounts",
            json!({"api_key": "sk-alice-openai", "base_url": completions}),
        )
        .await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    connect_assistant(&alice.client, &sim).await;
    let order = json!({"order": ["completions_vendor", "assistant_vendor"]});
    let resp = alice
        .client
        .post("/_ui/api/providers/priority", order)
        .await;
    assert_eq!(resp.status(), 200);

    assert_eq!(chat(&env, &key, "gpt-4o").await.status(), 200);
    let assistant_before = vendor_chats(&sim, Vendor::Assistant).len();
    proxy.clear();
    proxy.push(
        Fault::Status {
            code: 429,
            retry_after: Some(60),
        },
        1,
    );
    let resp = chat(&env, &key, "gpt-4o").await;
    assert_eq!(resp.status(), 200, "the next provider answers");
    assert_eq!(proxy.applied().len(), 1);
    assert_eq!(
        vendor_chats(&sim, Vendor::Assistant).len(),
        assistant_before + 1
    );
    // While the account rests, the next provider answers at once.
    assert_eq!(chat(&env, &key, "gpt-4o").await.status(), 200);
    assert_eq!(
        vendor_chats(&sim, Vendor::Assistant).len(),
        assistant_before + 2
    );
    // Naming the provider: no fall-over.
    let (status, kind, _) = error_type(chat(&env, &key, "completions_vendor/gpt-4o").await).await;
    assert_eq!((status, kind.as_str()), (429, "upstream_api_error"));
}
