//! Per-user upstream credentials over HTTP (spec 2.4, 3.5, 5.8;
//! interfaces.md 6): the device flow of the web UI against the simulated SSO
//! service, the status, storage encrypted, removal; a request without
//! credentials is told where to connect; each user's requests carry that
//! user's own bearer token (never another's), the 403 refresh path is per
//! user, and one user's dead credentials leave the others working.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::{chat_body, client, TestDb};
use crate::keys_support::{connect_upstream, new_key, upstream_status, user_id, Deployment};
use gateway::store::Pool;

both_stores!(device_flow_for_a_user, each_user_uses_their_own_credentials);

async fn chat(d: &Deployment, key: &str) -> (u16, Value) {
    let resp = d
        .v1(
            "/chat/completions",
            key,
            crate::keys_support::KeyHeader::Bearer,
            &chat_body("hello", false),
        )
        .await;
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The stored (encrypted) refresh token and client secret of `user`.
async fn raw_secrets(d: &Deployment, user: gateway::store::ids::UserId) -> (String, String) {
    let store = d.env.db.store().await;
    let sql = "SELECT refresh_token, oauth_client_secret FROM user_upstream_credentials WHERE user_id = $1";
    let row: (String, String) = match store.pool() {
        Pool::Sqlite(p) => sqlx::query_as(sql)
            .bind(user.to_string())
            .fetch_one(p)
            .await
            .unwrap(),
        Pool::Postgres(p) => sqlx::query_as(sql).bind(user.0).fetch_one(p).await.unwrap(),
    };
    store.close().await;
    row
}

async fn device_flow_for_a_user(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;
    let alice = d.user(&admin, "alice@example.com").await;
    let key = new_key(&alice).await;

    // Not connected: status says so, primary requests say where to connect,
    // and calls that need no upstream work.
    assert_eq!(
        upstream_status(&alice).await,
        json!({"has_token": false, "expired": false})
    );
    let (status, body) = chat(&d, &key).await;
    assert_eq!(status, 403, "{body}");
    // interfaces-full.md 1: a provider the caller has no account for.
    assert_eq!(body["error"]["type"], "provider_not_connected");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("/_ui/") && message.contains("Upstream"),
        "{message}"
    );
    let resp = client()
        .get(d.env.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // Nothing connected: no primary model is offered.
    let listed: Value = resp.json().await.unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 0, "{listed}");

    // The device flow: setup, then pending, then success.
    let resp = alice.post("/_ui/api/upstream/setup", json!({})).await;
    assert_eq!(resp.status(), 200);
    let setup: Value = resp.json().await.unwrap();
    for field in [
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
    ] {
        assert!(
            setup[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {setup}"
        );
    }
    assert!(setup["expires_in"].as_u64().unwrap() > 0);
    assert!(setup["interval"].as_u64().is_some());
    let code = setup["device_code"].as_str().unwrap();
    // Another user cannot poll it.
    let bob = d.user(&admin, "bob@example.com").await;
    assert_eq!(
        bob.post("/_ui/api/upstream/poll", json!({"device_code": code}))
            .await
            .status(),
        404
    );
    let poll = |code: String| {
        let alice = &alice;
        async move {
            let resp = alice
                .post("/_ui/api/upstream/poll", json!({"device_code": code}))
                .await;
            let status = resp.status().as_u16();
            (status, resp.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(
        poll(code.to_owned()).await,
        (200, json!({"status": "pending"}))
    );
    assert_eq!(
        poll(code.to_owned()).await,
        (200, json!({"status": "success"}))
    );
    // Finished: the code is spent.
    assert_eq!(poll(code.to_owned()).await.0, 404);
    // Connected: the primary models, listed by the upstream with Alice's
    // credentials (full deployment has no shared ones).
    let listed: Value = client()
        .get(d.env.url("/v1/models"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let primary = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["owned_by"] == "primary")
        .count();
    assert!(primary > 0, "{listed}");
    assert!(!d.sim.requests_to("/ListAvailableModels").is_empty());
    // The registration was made for the individual start URL.
    let registrations = d.sim.requests_to("/client/register");
    assert_eq!(registrations.len(), 1);
    assert!(registrations[0].json().unwrap().get("issuerUrl").is_none());

    let status = upstream_status(&alice).await;
    assert_eq!(status["has_token"], true, "{status}");
    assert_eq!(status["expired"], false);
    assert_eq!(status["sso_region"], "us-east-1");
    assert_eq!(status["sso_start_url"], "https://view.awsapps.com/start");

    // Stored encrypted: no plaintext in the row.
    let alice_id = user_id(&alice).await;
    let store = d.env.db.store().await;
    let creds = store
        .upstream_credentials()
        .get(alice_id)
        .await
        .unwrap()
        .unwrap();
    store.close().await;
    let (raw_refresh, raw_secret) = raw_secrets(&d, alice_id).await;
    assert!(raw_refresh.starts_with("v1:") && raw_secret.starts_with("v1:"));
    assert!(!raw_refresh.contains(creds.refresh_token.expose()));
    assert!(!raw_secret.contains(creds.client_secret.expose()));
    assert!(d.sim.refresh_token_live(creds.refresh_token.expose()));

    let (status, body) = chat(&d, &key).await;
    assert_eq!(status, 200, "{body}");

    // A denied authorization leaves the stored credentials alone; the
    // registration is reused (same start URL and region).
    d.sim.update_oidc(|c| c.deny = true);
    let seen = connect_upstream(&alice).await;
    assert_eq!(seen.last().map(String::as_str), Some("denied"), "{seen:?}");
    assert_eq!(d.sim.requests_to("/client/register").len(), 1);
    d.sim.update_oidc(|c| c.deny = false);
    assert_eq!(upstream_status(&alice).await["has_token"], true);
    assert_eq!(chat(&d, &key).await.0, 200);

    // Bad input is refused before anything is asked of the SSO service.
    for body in [
        json!({"sso_region": "US EAST"}),
        json!({"sso_start_url": "not a url"}),
    ] {
        let resp = alice.post("/_ui/api/upstream/setup", body).await;
        assert_eq!(resp.status(), 400);
    }

    // Removal: primary requests are refused again.
    let resp = alice.delete("/_ui/api/upstream/token").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(upstream_status(&alice).await["has_token"], false);
    assert_eq!(chat(&d, &key).await.0, 403);

    // Connected again, then the SSO service refuses every refresh: the
    // status says expired and requests say to reconnect.
    assert_eq!(connect_upstream(&alice).await.last().unwrap(), "success");
    d.sim.update_oidc(|c| c.reject_refresh = true);
    let status = upstream_status(&alice).await;
    assert_eq!(status["expired"], true, "{status}");
    let (status, body) = chat(&d, &key).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("reconnect"));
}

/// The `refreshToken` of every refresh grant and the bearer of every chat
/// call the simulator received, in arrival order.
fn upstream_calls(d: &Deployment) -> Vec<(String, String)> {
    let mut calls: Vec<_> = d.sim.requests();
    calls.sort_by_key(|r| r.at);
    calls
        .iter()
        .filter_map(|r| {
            if r.path.ends_with("/token") {
                let body = r.json()?;
                if body["grantType"] != "refresh_token" {
                    return None;
                }
                Some((
                    "refresh".to_owned(),
                    body["refreshToken"].as_str()?.to_owned(),
                ))
            } else if r.path.ends_with("/generateAssistantResponse") {
                let bearer = r
                    .header("authorization")?
                    .strip_prefix("Bearer ")?
                    .to_owned();
                Some(("chat".to_owned(), bearer))
            } else {
                None
            }
        })
        .collect()
}

/// For each chat call: its bearer and the refresh token of the refresh
/// grant that last preceded it.
fn chats_with_their_refresh(calls: &[(String, String)]) -> Vec<(String, Option<String>)> {
    let mut last_refresh = None;
    let mut out = Vec::new();
    for (kind, value) in calls {
        match kind.as_str() {
            "refresh" => last_refresh = Some(value.clone()),
            _ => out.push((value.clone(), last_refresh.clone())),
        }
    }
    out
}

async fn each_user_uses_their_own_credentials(db: TestDb) {
    let d = Deployment::start(db).await;
    let admin = d.admin().await;
    let alice = d.user(&admin, "alice@example.com").await;
    let bob = d.user(&admin, "bob@example.com").await;
    connect_upstream(&alice).await;
    connect_upstream(&bob).await;
    let (ka, kb) = (new_key(&alice).await, new_key(&bob).await);
    let store = d.env.db.store().await;
    let refresh_of = |creds: Option<gateway::store::upstream_credentials::UpstreamCredentials>| {
        creds.unwrap().refresh_token.expose().to_owned()
    };
    let alice_refresh = refresh_of(
        store
            .upstream_credentials()
            .get(user_id(&alice).await)
            .await
            .unwrap(),
    );
    let bob_refresh = refresh_of(
        store
            .upstream_credentials()
            .get(user_id(&bob).await)
            .await
            .unwrap(),
    );
    let alice_creds = store
        .upstream_credentials()
        .get(user_id(&alice).await)
        .await
        .unwrap()
        .unwrap();
    store.close().await;
    assert_ne!(alice_refresh, bob_refresh);

    // A, B, A, B: each chat carries its user's token; the second of each
    // reuses the cached one.
    d.sim.clear();
    for key in [&ka, &kb, &ka, &kb] {
        assert_eq!(chat(&d, key).await.0, 200);
    }
    let chats = chats_with_their_refresh(&upstream_calls(&d));
    assert_eq!(chats.len(), 4, "{chats:?}");
    let (a1, b1, a2, b2) = (&chats[0], &chats[1], &chats[2], &chats[3]);
    assert_eq!(a1.1.as_deref(), Some(alice_refresh.as_str()));
    assert_eq!(b1.1.as_deref(), Some(bob_refresh.as_str()));
    assert_ne!(a1.0, b1.0, "two users, two access tokens");
    assert_eq!(a2.0, a1.0, "alice's cached token");
    assert_eq!(b2.0, b1.0, "bob's cached token");
    let refreshes = upstream_calls(&d)
        .iter()
        .filter(|(k, _)| k == "refresh")
        .count();
    assert_eq!(
        refreshes, 2,
        "one refresh per user, then the 4-minute cache"
    );

    // The 403 path is per user: every token revoked, alice's retry refreshes
    // with alice's credentials only.
    d.sim.revoke_access_tokens();
    d.sim.clear();
    assert_eq!(chat(&d, &ka).await.0, 200);
    let calls = upstream_calls(&d);
    let refreshed: Vec<&String> = calls
        .iter()
        .filter(|(k, _)| k == "refresh")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(refreshed, vec![&alice_refresh], "{calls:?}");
    let chats = chats_with_their_refresh(&calls);
    assert_eq!(chats.len(), 2, "refused once, then retried: {chats:?}");
    assert_ne!(chats[1].0, a1.0, "a new token after the refresh");

    // Alice's refresh token dies (rotated away behind the gateway's back):
    // alice is told to reconnect, bob goes on.
    d.sim.update_oidc(|c| c.rotate_refresh_tokens = true);
    let resp = client()
        .post(format!("{}/token", d.sim.oidc_url()))
        .json(&json!({
            "grantType": "refresh_token",
            "clientId": alice_creds.client_id,
            "clientSecret": alice_creds.client_secret.expose(),
            "refreshToken": alice_refresh,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    d.sim.update_oidc(|c| c.rotate_refresh_tokens = false);
    assert!(!d.sim.refresh_token_live(&alice_refresh));
    d.sim.revoke_access_tokens();
    let (status, body) = chat(&d, &ka).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("/_ui/"));
    assert_eq!(chat(&d, &kb).await.0, 200, "bob is not affected");
    assert_eq!(upstream_status(&alice).await["expired"], true);
    assert_eq!(upstream_status(&bob).await["expired"], false);
}
