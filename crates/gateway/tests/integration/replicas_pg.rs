//! Two gateway replicas on one PostgreSQL database (run when
//! `TEST_DATABASE_URL` is set): a key revoked on one is refused by the other
//! within a second (`LISTEN/NOTIFY`), also when it goes with its user; a
//! configuration change made on one is seen in the other's behaviour; and
//! upstream credentials connected on one are used by the other.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{chat_body, client, Gateway, TestDb, UiClient};
use crate::keys_support::{connect_upstream, create_key, user_id, Deployment};

async fn models_status(gw: &Gateway, key: &str) -> u16 {
    client()
        .get(gw.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// How long until `gw` refuses `key` (polling every 10 ms, up to 5 s).
async fn refused_after(gw: &Gateway, key: &str) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if models_status(gw, key).await == 401 {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test]
async fn two_replicas_share_revocations_config_and_credentials() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the two-replica test is skipped");
        return;
    };
    let d = Deployment::start(db).await;
    let one = &d.env.gateway;
    let two = d.env.replica().await;
    let ui_two = UiClient::new(&two.base);
    assert_eq!(ui_two.get("/_ui/api/status").await.status(), 200);

    let admin = d.admin().await;
    let created = create_key(&admin, "shared").await;
    let key = created["key"].as_str().unwrap().to_owned();
    // Both replicas know (and cache) the key.
    assert_eq!(models_status(one, &key).await, 200);
    assert_eq!(models_status(&two, &key).await, 200);
    assert_eq!(models_status(&two, &key).await, 200);

    // Revoked through replica one: refused by replica two within a second.
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        admin.delete(&format!("/_ui/api/keys/{id}")).await.status(),
        200
    );
    assert_eq!(
        models_status(one, &key).await,
        401,
        "at once on the replica that revoked"
    );
    let took = refused_after(&two, &key)
        .await
        .expect("replica two never refused the key");
    assert!(took < Duration::from_secs(1), "took {took:?}");

    // A user deleted on one: their key stops on two as well.
    let bob = d.user(&admin, "bob@example.com").await;
    let bob_key = create_key(&bob, "bob").await["key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(models_status(&two, &bob_key).await, 200);
    let bob_id = user_id(&bob).await;
    assert_eq!(
        admin
            .delete(&format!("/_ui/api/users/{bob_id}"))
            .await
            .status(),
        200
    );
    let took = refused_after(&two, &bob_key)
        .await
        .expect("replica two kept a deleted user's key");
    assert!(took < Duration::from_secs(1), "took {took:?}");

    // Upstream credentials connected through one serve requests on two.
    connect_upstream(&admin).await;
    let key = create_key(&admin, "chat").await["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let chat_on_two = || async {
        let resp = client()
            .post(two.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&chat_body("hello", false))
            .send()
            .await
            .unwrap();
        resp.status().as_u16()
    };
    assert_eq!(chat_on_two().await, 200);
    // Fake reasoning is on by default: the instruction goes upstream.
    let last_body = |d: &Deployment| {
        let chats = d.sim.requests_to("/generateAssistantResponse");
        String::from_utf8_lossy(&chats.last().unwrap().body).into_owned()
    };
    assert!(last_body(&d).contains("Extended Thinking Mode"));

    // A hot configuration change made on one shows in two's behaviour.
    let resp = admin
        .put("/_ui/api/config", json!({"fake_reasoning_enabled": false}))
        .await;
    assert_eq!(resp.status(), 200);
    let mut followed = false;
    for _ in 0..50 {
        assert_eq!(chat_on_two().await, 200);
        if !last_body(&d).contains("Extended Thinking Mode") {
            followed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        followed,
        "replica two never applied fake_reasoning_enabled=false"
    );

    // Credentials removed on one are refused on two at once.
    assert_eq!(admin.delete("/_ui/api/upstream/token").await.status(), 200);
    let mut refused = false;
    for _ in 0..100 {
        if chat_on_two().await == 403 {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        refused,
        "replica two kept using removed upstream credentials"
    );
    two.stop().await.unwrap();
}

/// Every replica heartbeats into the database: `/_ui/api/system` on one
/// lists both, each with its host and version.
#[tokio::test]
async fn system_lists_every_replica() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the replica list test is skipped");
        return;
    };
    let env = crate::common::FullEnv::start(db, &crate::common::admin_env()).await;
    let _other = env.replica().await;
    let admin = env.admin().await;
    let start = Instant::now();
    loop {
        let system: serde_json::Value = admin.get("/_ui/api/system").await.json().await.unwrap();
        let replicas = system["replicas"].as_array().cloned().unwrap_or_default();
        if replicas.len() == 2 {
            assert!(replicas
                .iter()
                .all(|r| r["version"] == env!("CARGO_PKG_VERSION")));
            assert_ne!(replicas[0]["id"], replicas[1]["id"]);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "replicas listed: {replicas:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
