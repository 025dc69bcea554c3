//! Per-user API keys over HTTP (spec 2.3, 5.2; interfaces.md 6): create,
//! use on `/v1` with both headers against the simulator, the list with its
//! prefix and last use, delete, 401 after; keys are private to their owner;
//! missing versus invalid keys; a deleted user's keys stop at once.

use std::time::Duration;

use serde_json::json;

use crate::both_stores;
use crate::common::{chat_body, client, messages_body, v1_model_ids, TestDb};
use crate::keys_support::{
    connect_upstream, create_key, list_keys, new_key, Deployment, KeyHeader,
};

both_stores!(
    key_lifecycle,
    keys_are_private_to_their_owner,
    missing_invalid_and_deleted_users,
    keys_expire_and_keep_to_their_models
);

/// `GET /v1/models` with `key` (needs no upstream credentials): the status.
async fn models_status(d: &Deployment, key: &str) -> u16 {
    client()
        .get(d.env.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn key_lifecycle(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;
    assert_eq!(connect_upstream(&admin).await, ["pending", "success"]);

    let created = create_key(&admin, "  laptop ").await;
    let key = created["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("sk-"), "{key}");
    assert_eq!(key.len(), 46, "sk- and 43 base64url characters (256 bits)");
    assert_eq!(created["key_prefix"], &key[..10]);
    assert_eq!(created["label"], "laptop");
    assert!(created["id"]
        .as_str()
        .unwrap()
        .parse::<uuid::Uuid>()
        .is_ok());
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));

    // The list never shows the key, and shows no use yet.
    let list = list_keys(&admin).await;
    assert_eq!(list["count"], 1);
    let entry = &list["keys"][0];
    assert_eq!(entry["id"], created["id"]);
    assert_eq!(entry["key_prefix"], created["key_prefix"]);
    assert_eq!(entry["label"], "laptop");
    assert_eq!(entry["last_used"], serde_json::Value::Null);
    assert!(entry.get("key").is_none());
    assert!(!list.to_string().contains(&key[10..]));

    // Only the hash is stored.
    let store = d.env.db.store().await;
    let owner = store
        .api_keys()
        .find_by_hash(&gateway::crypto::random::sha256_hex(&key))
        .await
        .unwrap()
        .expect("stored by its hash");
    assert_eq!(
        owner.owner.key_id.to_string(),
        created["id"].as_str().unwrap()
    );
    store.close().await;

    // Both headers, both formats, against the simulator.
    let resp = d
        .v1(
            "/chat/completions",
            &key,
            KeyHeader::Bearer,
            &chat_body("hello", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    let resp = d
        .v1(
            "/messages",
            &key,
            KeyHeader::XApiKey,
            &messages_body("hello", false),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["type"], "message");
    assert_eq!(d.sim.requests_to("/generateAssistantResponse").len(), 2);

    // The last use shows up shortly (written off the hot path).
    let mut last_used = serde_json::Value::Null;
    for _ in 0..100 {
        last_used = list_keys(&admin).await["keys"][0]["last_used"].clone();
        if !last_used.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(last_used.as_str().unwrap().ends_with('Z'), "{last_used}");

    // Delete: 401 at once, with either header.
    let id = created["id"].as_str().unwrap();
    let resp = admin.delete(&format!("/_ui/api/keys/{id}")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.json::<serde_json::Value>().await.unwrap(),
        json!({"ok": true})
    );
    for header in [KeyHeader::Bearer, KeyHeader::XApiKey] {
        let resp = d
            .v1(
                "/chat/completions",
                &key,
                header,
                &chat_body("hello", false),
            )
            .await;
        assert_eq!(resp.status(), 401);
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["type"], "auth_error");
        assert_eq!(body["error"]["message"], "invalid API key");
    }
    assert_eq!(list_keys(&admin).await["count"], 0);
    assert_eq!(
        admin.delete(&format!("/_ui/api/keys/{id}")).await.status(),
        404
    );
    // Deleting needs the CSRF token like every change.
    let other = new_key(&admin).await;
    let other_id = list_keys(&admin).await["keys"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let resp = admin
        .http
        .delete(d.env.url(&format!("/_ui/api/keys/{other_id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    assert_eq!(models_status(&d, &other).await, 200);
}

async fn keys_are_private_to_their_owner(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;
    let alice = d.user(&admin, "alice@example.com").await;
    let bob = d.user(&admin, "bob@example.com").await;
    let alice_key = create_key(&alice, "alice's").await;
    let bob_key = create_key(&bob, "bob's").await;

    let listed = list_keys(&bob).await;
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["keys"][0]["id"], bob_key["id"]);
    assert_eq!(
        list_keys(&admin).await["count"],
        0,
        "admins see their own keys only"
    );

    // Bob cannot delete Alice's key; it keeps working.
    let alice_id = alice_key["id"].as_str().unwrap();
    assert_eq!(
        bob.delete(&format!("/_ui/api/keys/{alice_id}"))
            .await
            .status(),
        404
    );
    assert_eq!(
        admin
            .delete(&format!("/_ui/api/keys/{alice_id}"))
            .await
            .status(),
        404
    );
    assert_eq!(bob.delete("/_ui/api/keys/not-a-uuid").await.status(), 404);
    let alice_plain = alice_key["key"].as_str().unwrap();
    assert_eq!(models_status(&d, alice_plain).await, 200);

    // Without a session the key API is closed.
    let anonymous = d.env.ui();
    assert_eq!(anonymous.get("/_ui/api/keys").await.status(), 401);
    assert_eq!(
        anonymous
            .post("/_ui/api/keys", json!({"label": "x"}))
            .await
            .status(),
        401
    );
    // Labels are checked.
    let resp = alice
        .post("/_ui/api/keys", json!({"label": "x".repeat(101)}))
        .await;
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "validation_error");
}

async fn missing_invalid_and_deleted_users(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;

    let resp = client()
        .post(d.env.url("/v1/chat/completions"))
        .json(&chat_body("hello", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "auth_error");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("missing API key"));

    let unknown = format!("sk-{}", "A".repeat(43));
    for junk in ["nope", unknown.as_str()] {
        assert_eq!(models_status(&d, junk).await, 401, "{junk}");
    }

    // A key of a user who is deleted stops at once.
    let carol = d.user(&admin, "carol@example.com").await;
    let key = new_key(&carol).await;
    assert_eq!(models_status(&d, &key).await, 200);
    // ASVS 13.1.3: a key is read from the headers only, never from the URL.
    for param in ["api_key", "key"] {
        for (path, body) in [
            ("/v1/chat/completions", chat_body("hello", false)),
            ("/v1/messages", messages_body("hello", false)),
        ] {
            let resp = client()
                .post(d.env.url(&format!("{path}?{param}={key}")))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 401, "{path}?{param}=");
        }
        let resp = client()
            .get(d.env.url(&format!("/v1/models?{param}={key}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "/v1/models?{param}=");
    }
    let carol_id = crate::keys_support::user_id(&carol).await;
    let resp = admin.delete(&format!("/_ui/api/users/{carol_id}")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(models_status(&d, &key).await, 401);
}

/// A key's rules (issue 21): `allowed_models` keeps it to those names on
/// `/v1` (403 `forbidden` otherwise, `/v1/models` lists only them, both
/// formats and count_tokens); `expires_at` makes it 401 from then on, also
/// when set later by `PATCH`; `null` clears either. Bad values of every
/// field are refused (limits themselves: tests/integration/limits.rs).
async fn keys_expire_and_keep_to_their_models(db: TestDb) {
    let d = Deployment::start(db).await;
    let ui = d.admin().await;
    connect_upstream(&ui).await;
    let resp = ui
        .post(
            "/_ui/api/keys",
            json!({"label": "haiku only", "allowed_models": ["claude-haiku-4.5", " claude-haiku-4.5 "]}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let created: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(created["allowed_models"], json!(["claude-haiku-4.5"]));
    assert_eq!(created["expires_at"], serde_json::Value::Null);
    let key = created["key"].as_str().unwrap().to_owned();
    let id = created["id"].as_str().unwrap().to_owned();

    let resp = chat_as(&d, &key, "claude-haiku-4.5").await;
    assert_eq!(resp.status(), 200);
    let resp = chat_as(&d, &key, "claude-sonnet-4.5").await;
    assert_eq!(resp.status(), 403);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "forbidden");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("claude-haiku-4.5"),
        "{body}"
    );
    let mut messages = messages_body("hi", false);
    messages["model"] = json!("claude-sonnet-4.5");
    let resp = d.v1("/messages", &key, KeyHeader::XApiKey, &messages).await;
    assert_eq!(resp.status(), 403);
    let resp = d
        .v1(
            "/messages/count_tokens",
            &key,
            KeyHeader::XApiKey,
            &messages,
        )
        .await;
    assert_eq!(resp.status(), 403);
    let ids = v1_model_ids(&d.env.gateway.base, &key).await;
    assert_eq!(ids, ["claude-haiku-4.5"]);

    // Cleared: any model again.
    let path = format!("/_ui/api/keys/{id}");
    let patch = |body: serde_json::Value| ui.patch(&path, body);
    let resp = patch(json!({"allowed_models": null, "label": "any"})).await;
    assert_eq!(resp.status(), 200);
    let view: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        (view["allowed_models"].clone(), view["label"].clone()),
        (serde_json::Value::Null, json!("any"))
    );
    assert!(view.get("key").is_none(), "never the secret again");
    let resp = chat_as(&d, &key, "claude-sonnet-4.5").await;
    assert_eq!(resp.status(), 200);

    // Expired by a change: refused at once; unexpired: served again.
    let resp = patch(json!({"expires_at": "2020-01-01T00:00:00Z"})).await;
    assert_eq!(resp.status(), 200);
    let resp = chat_as(&d, &key, "claude-sonnet-4.5").await;
    assert_eq!(resp.status(), 401);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "auth_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{body}"
    );
    assert_eq!(models_status(&d, &key).await, 401);
    let listed = list_keys(&ui).await;
    let shown = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(shown["expires_at"], "2020-01-01T00:00:00Z");
    assert_eq!(patch(json!({"expires_at": null})).await.status(), 200);
    assert_eq!(models_status(&d, &key).await, 200);

    // A key that expires in a moment, set at creation.
    let soon = time::OffsetDateTime::now_utc() + time::Duration::seconds(2);
    let soon = soon
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let resp = ui.post("/_ui/api/keys", json!({"expires_at": soon})).await;
    assert_eq!(resp.status(), 200);
    let short: serde_json::Value = resp.json().await.unwrap();
    let short_key = short["key"].as_str().unwrap();
    assert_eq!(models_status(&d, short_key).await, 200);
    tokio::time::sleep(Duration::from_millis(2600)).await;
    assert_eq!(models_status(&d, short_key).await, 401);

    // Bad values.
    for body in [
        json!({"expires_at": "tomorrow"}),
        json!({"allowed_models": [""]}),
        json!({"budget_usd": -5}),
        json!({"rpm_limit": 0}),
        json!({"budget_period": "hourly"}),
        json!({"colour": "red"}),
    ] {
        let resp = ui.post("/_ui/api/keys", body.clone()).await;
        assert_eq!(resp.status(), 400, "{body}");
        let resp = patch(body.clone()).await;
        assert_eq!(resp.status(), 400, "{body}");
    }
    let resp = ui
        .patch(
            "/_ui/api/keys/00000000-0000-4000-8000-000000000000",
            json!({"label": "x"}),
        )
        .await;
    assert_eq!(resp.status(), 404);
}

/// One chat-completions call with `key` for `model`.
async fn chat_as(d: &Deployment, key: &str, model: &str) -> reqwest::Response {
    let mut body = chat_body("hi", false);
    body["model"] = json!(model);
    d.v1("/chat/completions", key, KeyHeader::Bearer, &body)
        .await
}
