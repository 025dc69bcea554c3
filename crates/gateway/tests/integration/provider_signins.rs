//! The OAuth sign-ins of full deployment (spec 5.10; interfaces-full.md
//! 2.1, 2.2) against the simulated vendor and code host, on SQLite and
//! PostgreSQL:
//!
//! - `messages_vendor`: authorization code with PKCE relayed back through
//!   the loopback redirect; the simulator's authorize page checks the PKCE
//!   challenge and its token endpoint the verifier. A replayed or unknown
//!   `state` is refused and stores nothing; the account serves its owner
//!   only, with its OAuth token; an expiring token is refreshed once for 50
//!   concurrent requests and the rotated pair is kept in the store.
//! - The relay script itself, run with `sh` (SQLite only: port 54545 is one
//!   per machine).
//! - `assistant_vendor`: the device flow (bound to the user who started it;
//!   denied flows end), the web flow with the gateway's OAuth app, status
//!   and disconnect, and requests through the exchanged token.

use std::time::Duration;

use serde_json::{json, Value};
use upstream_sim::{Vendor, CODE_HOST_OAUTH_CLIENT_ID};

use crate::accounts_support::{
    assistant_env, chat, error_type, location_of, messages_env, query_of, start_messages_signin,
    v1_key,
};
use crate::common::{client, start_sim, TestDb, UiClient};
use crate::relay_support::vendor_chats;

const MESSAGES_MODEL: &str = "messages_vendor/claude-sonnet-4-5";
const ASSISTANT_MODEL: &str = "assistant_vendor/gpt-4o";

/// An error answer's status and type.
async fn status_and_type(resp: reqwest::Response) -> (u16, String) {
    let (status, kind, _) = error_type(resp).await;
    (status, kind)
}

async fn messages_vendor_signs_in_with_pkce(db: TestDb) {
    let sim = start_sim().await;
    // Short-lived first tokens: the account needs a refresh at its first use.
    sim.update_vendors(|v| v.oauth.access_token_ttl = Duration::from_secs(2));
    let env = messages_env(db, &sim).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let bob = env.new_user(&admin, "bob@example.com", "User").await;
    let alice_key = v1_key(&alice.client).await;
    let bob_key = v1_key(&bob.client).await;

    let connect: Value = alice
        .client
        .get("/_ui/api/providers/messages_vendor/connect")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(connect["auth_kind"], "oauth_pkce");

    // Without asking for JSON, the auth route redirects to the authorize page.
    let resp = alice
        .client
        .get("/_ui/api/providers/messages_vendor/auth")
        .await;
    assert_eq!(resp.status(), 302);
    let to = resp.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        to.starts_with(&sim.messages_vendor_oauth_authorize_url()),
        "{to}"
    );
    let q = query_of(&to);
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["redirect_uri"], "http://localhost:54545/callback");

    let started = start_messages_signin(&alice.client).await;
    let state = started["state"].as_str().unwrap();
    assert!(started["relay_script_url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/relay-script?state={state}")));
    // The simulated user approves; the browser would go to the loopback port.
    let callback = location_of(started["auth_url"].as_str().unwrap()).await;
    assert!(
        callback.starts_with("http://localhost:54545/callback?"),
        "{callback}"
    );
    let back = query_of(&callback);
    assert_eq!(back["state"], state);

    // An unknown state is refused (no session, no CSRF token needed).
    let relay = env.url("/_ui/api/providers/messages_vendor/relay");
    let post = |body: Value| {
        let relay = relay.clone();
        async move { client().post(relay).json(&body).send().await.unwrap() }
    };
    let wrong = post(json!({"code": back["code"], "state": "A".repeat(43)})).await;
    assert_eq!(
        status_and_type(wrong).await,
        (400, "validation_error".into())
    );
    let done = post(json!({"code": back["code"], "state": state})).await;
    assert_eq!(done.status(), 200);
    let done: Value = done.json().await.unwrap();
    assert_eq!(done["ok"], true);
    assert_eq!(done["provider"], "messages_vendor");
    // The same state again: refused, nothing more stored.
    let replay = post(json!({"code": back["code"], "state": state})).await;
    assert_eq!(
        status_and_type(replay).await,
        (400, "validation_error".into())
    );

    let accounts: Value = alice
        .client
        .get("/_ui/api/providers/messages_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    let accounts = accounts["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0]["id"], done["account_id"]);
    assert_eq!(accounts[0]["auth_kind"], "oauth_pkce");
    assert!(accounts[0]["expires_at"].is_string());
    assert!(!accounts[0].to_string().contains("sk-ant"));

    // 50 concurrent requests with the expiring token: one refresh.
    sim.update_vendors(|v| v.oauth.access_token_ttl = Duration::from_secs(8 * 3600));
    let before = sim.messages_vendor_oauth_refreshes();
    let all =
        futures::future::join_all((0..50).map(|_| chat(&env, &alice_key, MESSAGES_MODEL))).await;
    for resp in all {
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(sim.messages_vendor_oauth_refreshes() - before, 1);
    let chats = vendor_chats(&sim, Vendor::Messages);
    let bearer = chats
        .last()
        .unwrap()
        .header("authorization")
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_owned();
    assert!(sim.messages_vendor_oauth_account(&bearer).is_some());
    // What the vendor's rate-limit headers said, per account.
    let limits: Value = alice
        .client
        .get("/_ui/api/providers/rate-limits")
        .await
        .json()
        .await
        .unwrap();
    let seen = &limits["accounts"][0];
    assert_eq!(seen["account_id"], done["account_id"]);
    assert_eq!(seen["limit_requests"], 4000, "{seen}");
    assert!(seen["remaining_requests"].as_u64().is_some());
    assert!(seen["reset_tokens_at"].is_string());
    assert_eq!(seen["recent_429"], 0);
    // When the account last answered (this replica, before the batch write).
    let accounts: Value = alice
        .client
        .get("/_ui/api/providers/messages_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        accounts["accounts"][0]["last_used"].is_string(),
        "{accounts}"
    );

    // The rotated pair is in the store: when the vendor refuses the access
    // token, the stored refresh token renews it.
    sim.expire_messages_vendor_oauth_tokens();
    assert_eq!(chat(&env, &alice_key, MESSAGES_MODEL).await.status(), 200);
    assert_eq!(sim.messages_vendor_oauth_refreshes() - before, 2);

    // Bob has no account: not connected.
    assert_eq!(
        status_and_type(chat(&env, &bob_key, MESSAGES_MODEL).await).await,
        (403, "provider_not_connected".into())
    );
}

/// The relay script as a user runs it: `sh`, python3's listener on port
/// 54545, the browser's redirect, the post back to the gateway.
#[tokio::test]
async fn the_relay_script_hands_the_code_back() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("python3 is missing: the relay script test is skipped");
        return;
    }
    let sim = start_sim().await;
    let env = messages_env(TestDb::sqlite(), &sim).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let started = start_messages_signin(&alice.client).await;

    let resp = client()
        .get(started["relay_script_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/x-shellscript"));
    let script = resp.text().await.unwrap();
    let dir = tempfile_dir();
    let path = dir.join("relay.sh");
    std::fs::write(&path, script).unwrap();
    let child = tokio::process::Command::new("sh")
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();

    // The browser: the authorize page, then the redirect to the script.
    let callback = location_of(started["auth_url"].as_str().unwrap()).await;
    let mut answered = None;
    for _ in 0..100 {
        match client().get(&callback).send().await {
            Ok(resp) => {
                answered = Some(resp.status());
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(answered, Some(reqwest::StatusCode::OK));
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the script ends")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\"ok\":true"), "{stdout}");
    let accounts: Value = alice
        .client
        .get("/_ui/api/providers/messages_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(accounts["accounts"].as_array().unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("relay-script-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Poll the device flow until it leaves `pending`.
async fn poll_until_done(ui: &UiClient, device_code: &str, interval: u64) -> Value {
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_secs(interval)).await;
        let answer: Value = ui
            .post(
                "/_ui/api/assistant/device-poll",
                json!({"device_code": device_code}),
            )
            .await
            .json()
            .await
            .unwrap();
        if answer["status"] != "pending" && answer["status"] != "slow_down" {
            return answer;
        }
    }
    panic!("the device flow did not end");
}

async fn assistant_vendor_connects_by_device_code(db: TestDb) {
    let sim = start_sim().await;
    let env = assistant_env(db, &sim, false).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let bob = env.new_user(&admin, "bob@example.com", "User").await;
    let alice_key = v1_key(&alice.client).await;

    let connect: Value = alice
        .client
        .get("/_ui/api/providers/assistant_vendor/connect")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(connect["auth_kind"], "oauth_code_host");
    assert!(connect["auth_url"].is_null());
    // Without the gateway's OAuth app there is no web flow.
    let resp = alice
        .client
        .get("/_ui/api/providers/assistant_vendor/auth")
        .await;
    assert_eq!(
        status_and_type(resp).await,
        (400, "validation_error".into())
    );

    let started: Value = alice
        .client
        .post("/_ui/api/assistant/device-code", json!({}))
        .await
        .json()
        .await
        .unwrap();
    let device_code = started["device_code"].as_str().unwrap().to_owned();
    assert!(started["user_code"].is_string());
    // Bob cannot finish Alice's flow.
    let theirs: Value = bob
        .client
        .post(
            "/_ui/api/assistant/device-poll",
            json!({"device_code": device_code}),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["status"], "expired");

    let interval = started["interval"].as_u64().unwrap();
    let done = poll_until_done(&alice.client, &device_code, interval).await;
    assert_eq!(done["status"], "success", "{done}");
    let login = done["login"].as_str().unwrap().to_owned();
    let status: Value = alice
        .client
        .get("/_ui/api/assistant/status")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(status["connected"], true);
    assert_eq!(status["login"], login.as_str());
    assert!(status["base_url"]
        .as_str()
        .unwrap()
        .contains("assistant_vendor_api"));

    // Requests go out with an assistant token exchanged from Alice's login.
    assert_eq!(chat(&env, &alice_key, ASSISTANT_MODEL).await.status(), 200);
    let sent = vendor_chats(&sim, Vendor::Assistant);
    let token = sent
        .last()
        .unwrap()
        .header("authorization")
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_owned();
    assert_eq!(
        sim.assistant_vendor_token_login(&token).as_deref(),
        Some(login.as_str())
    );

    // A flow the user denies ends as denied.
    let second: Value = alice
        .client
        .post("/_ui/api/assistant/device-code", json!({}))
        .await
        .json()
        .await
        .unwrap();
    assert!(sim.deny_code_host_device(second["user_code"].as_str().unwrap()));
    let denied = poll_until_done(
        &alice.client,
        second["device_code"].as_str().unwrap(),
        interval,
    )
    .await;
    assert_eq!(denied["status"], "denied");

    let resp = alice.client.delete("/_ui/api/assistant/disconnect").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        status_and_type(chat(&env, &alice_key, ASSISTANT_MODEL).await).await,
        (403, "provider_not_connected".into())
    );
}

async fn assistant_vendor_connects_by_the_web_flow(db: TestDb) {
    let sim = start_sim().await;
    let env = assistant_env(db, &sim, true).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;

    let resp = alice
        .client
        .get("/_ui/api/providers/assistant_vendor/auth")
        .await;
    assert_eq!(resp.status(), 302);
    let authorize = resp.headers()["location"].to_str().unwrap().to_owned();
    let q = query_of(&authorize);
    assert_eq!(q["client_id"], CODE_HOST_OAUTH_CLIENT_ID);
    assert!(q["redirect_uri"].ends_with("/_ui/api/providers/assistant_vendor/callback"));
    let callback = location_of(&authorize).await;
    let path = callback.strip_prefix(&env.url("")).unwrap().to_owned();
    let resp = alice.client.get(&path).await;
    assert_eq!(resp.status(), 302);
    assert_eq!(
        resp.headers()["location"].to_str().unwrap(),
        format!("{}/_ui/providers?connected=assistant_vendor", env.url(""))
    );
    // The same callback again: the state was used.
    let again = alice.client.get(&path).await;
    assert!(again.headers()["location"]
        .to_str()
        .unwrap()
        .ends_with("/_ui/providers?error=state_invalid"));
    let accounts: Value = alice
        .client
        .get("/_ui/api/providers/assistant_vendor/accounts")
        .await
        .json()
        .await
        .unwrap();
    let accounts = accounts["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0]["auth_kind"], "oauth_code_host");
}

crate::both_stores!(
    messages_vendor_signs_in_with_pkce,
    assistant_vendor_connects_by_device_code,
    assistant_vendor_connects_by_the_web_flow
);
