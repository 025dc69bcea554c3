//! The configuration API's values: the shape of GET and of the schema,
//! validation of every field kind (all or nothing), hot fields visible in
//! behaviour at once and on another replica, restart fields pending until a
//! restart (which applies the stored values), secrets never in clear, and
//! the history (order, who, pruning at 1000).

use std::time::Duration;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::{
    admin_env, FullEnv, Gateway, TestDb, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP,
};

async fn admin(base: &str) -> UiClient {
    admin_at_step(base, 0).await
}

/// Sign the admin in with the TOTP code `offset` steps from now (a code is
/// accepted once: a second sign-in within the same step uses the next one).
async fn admin_at_step(base: &str, offset: i64) -> UiClient {
    let ui = UiClient::new(base);
    ui.login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, offset)
        .await;
    ui
}

async fn json_of(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn config(ui: &UiClient) -> Value {
    let (status, body) = json_of(ui.get("/_ui/api/config").await).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// A POST whose body is `bytes` long (for the body-limit checks).
async fn post_sized(base: &str, bytes: usize) -> u16 {
    let body = format!("{{\"email\":\"{}\",\"password\":\"x\"}}", "a".repeat(bytes));
    reqwest::Client::new()
        .post(format!("{base}/_ui/api/auth/login"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

both_stores!(
    shape_and_validation,
    hot_and_restart_fields,
    secrets_are_never_returned,
    history_is_ordered_and_pruned
);

async fn shape_and_validation(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let ui = admin(&env.gateway.base).await;

    let body = config(&ui).await;
    let values = body["values"].as_object().unwrap();
    for field in gateway::config::FIELDS {
        assert!(values.contains_key(field.name), "{}", field.name);
        assert_eq!(body["sources"][field.name], "default", "{}", field.name);
    }
    for key in ["sso_issuer_url", "sso_client_id", "sso_client_secret"] {
        assert_eq!(values[key], Value::Null, "{key}");
    }
    assert_eq!(values.len(), gateway::config::FIELDS.len() + 3);
    assert_eq!(values["http_max_retries"], "3");
    assert_eq!(values["max_request_body"], "10MiB");
    assert_eq!(body["pending_restart"], json!({}));
    assert_eq!(body["sso_enabled"], false);

    let (_, schema) = json_of(ui.get("/_ui/api/config/schema").await).await;
    let fields = schema["fields"].as_array().unwrap();
    assert_eq!(fields.len(), gateway::config::FIELDS.len() + 3);
    let row = |name: &str| fields.iter().find(|f| f["name"] == name).unwrap().clone();
    let retries = row("http_max_retries");
    assert_eq!(retries["type"], "integer");
    assert_eq!(retries["default"], "3");
    assert_eq!(retries["reload"], "hot");
    assert_eq!(retries["secret"], false);
    assert!(retries["description"].as_str().unwrap().len() > 10);
    assert_eq!(row("debug_mode")["values"], json!(["off", "errors", "all"]));
    assert_eq!(row("model_cache_refresh")["reload"], "restart");
    assert_eq!(row("server_port")["editable"], false);
    assert_eq!(row("sso_client_secret")["secret"], true);

    // One bad value of each kind, plus a good one: all refused, nothing stored.
    let (status, err) = json_of(
        ui.put(
            "/_ui/api/config",
            json!({
                "http_max_retries": 5,
                "truncation_recovery": "maybe",
                "fake_reasoning_max_tokens": "many",
                "first_token_timeout": "soon",
                "max_request_body": "12",
                "debug_mode": "verbose",
                "upstream_region": "US East",
                "public_url": "ftp://gw.example.com",
                "sso_issuer_url": "http://idp.example.com",
                "server_port": 9999,
                "no_such_field": 1,
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["type"], "validation_error");
    let message = err["error"]["message"].as_str().unwrap();
    for name in [
        "truncation_recovery",
        "fake_reasoning_max_tokens",
        "first_token_timeout",
        "max_request_body",
        "debug_mode",
        "upstream_region",
        "public_url",
        "sso_issuer_url",
        "server_port",
        "no_such_field",
    ] {
        assert!(message.contains(&format!("{name}: ")), "{name}: {message}");
    }
    assert!(!message.contains("http_max_retries"), "{message}");
    assert!(!message.contains("verbose") && !message.contains("US East"));
    assert_eq!(config(&ui).await["values"]["http_max_retries"], "3");
    let (_, history) = json_of(ui.get("/_ui/api/config/history").await).await;
    assert_eq!(history["count"], 0);

    // Good values, stored in their canonical text form.
    let (status, done) = json_of(
        ui.put(
            "/_ui/api/config",
            json!({"http_max_retries": 5, "first_token_timeout": "20", "debug_mode": "ERRORS",
                   "truncation_recovery": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["ok"], true);
    let mut changed: Vec<&str> = done["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    changed.sort_unstable();
    assert_eq!(
        changed,
        [
            "debug_mode",
            "first_token_timeout",
            "http_max_retries",
            "truncation_recovery"
        ]
    );
    assert_eq!(done["pending_restart"], json!([]));
    let body = config(&ui).await;
    assert_eq!(body["values"]["http_max_retries"], "5");
    assert_eq!(body["values"]["first_token_timeout"], "20s");
    assert_eq!(body["values"]["debug_mode"], "errors");
    assert_eq!(body["values"]["truncation_recovery"], "false");
    assert_eq!(body["sources"]["http_max_retries"], "database");

    // null removes the stored value: back to the default.
    let (status, _) = json_of(
        ui.put("/_ui/api/config", json!({"http_max_retries": null}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let body = config(&ui).await;
    assert_eq!(body["values"]["http_max_retries"], "3");
    assert_eq!(body["sources"]["http_max_retries"], "default");
}

async fn hot_and_restart_fields(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let base = env.gateway.base.clone();
    let ui = admin(&base).await;
    assert_ne!(post_sized(&base, 2048).await, 413);

    // A hot field applies to the very next request.
    let (status, done) = json_of(
        ui.put("/_ui/api/config", json!({"max_request_body": "1KiB"}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["applied"], json!(["max_request_body"]));
    assert_eq!(post_sized(&base, 2048).await, 413);

    // Another replica on the same store follows within the sync interval.
    let replica = env.replica().await;
    let replica_base = replica.base.clone();
    let mut seen = false;
    for _ in 0..50 {
        if post_sized(&replica_base, 2048).await == 413 {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(seen, "the replica never applied max_request_body");
    let (status, _) = json_of(
        ui.put("/_ui/api/config", json!({"max_request_body": "2KiB"}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let mut followed = false;
    for _ in 0..50 {
        if post_sized(&replica_base, 1500).await != 413 {
            followed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(followed, "the replica never followed the second change");
    replica.stop().await.unwrap();

    // A restart field is stored and pending, not applied.
    let (status, done) = json_of(
        ui.put("/_ui/api/config", json!({"model_cache_refresh": "1h"}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["pending_restart"], json!(["model_cache_refresh"]));
    assert_eq!(done["applied"], json!([]));
    let body = config(&ui).await;
    assert_eq!(
        body["pending_restart"],
        json!({"model_cache_refresh": {"configured": "1h", "running": "6h"}})
    );

    // After a restart on the same store both stored values are in force.
    let FullEnv {
        db,
        dir,
        config: cfg,
        gateway,
    } = env;
    gateway.stop().await.unwrap();
    let restarted = Gateway::start(cfg).await;
    let ui = admin_at_step(&restarted.base, 1).await;
    let body = config(&ui).await;
    assert_eq!(body["pending_restart"], json!({}), "{body}");
    assert_eq!(body["values"]["model_cache_refresh"], "1h");
    assert_eq!(post_sized(&restarted.base, 2048).await, 413);
    assert_ne!(post_sized(&restarted.base, 1500).await, 413);
    drop((db, dir));
}

async fn secrets_are_never_returned(db: TestDb) {
    const SECRET: &str = "top-secret-client-value-9876";
    let env = FullEnv::start(db, &admin_env()).await;
    let ui = admin(&env.gateway.base).await;
    let resp = ui
        .put(
            "/_ui/api/config",
            json!({
                "sso_issuer_url": "https://accounts.example.com/",
                "sso_client_id": "client-123",
                "sso_client_secret": SECRET,
            }),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert!(!resp.text().await.unwrap().contains(SECRET));

    let text = ui.get("/_ui/api/config").await.text().await.unwrap();
    assert!(!text.contains(SECRET), "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["values"]["sso_client_secret"], "********");
    assert_eq!(
        body["values"]["sso_issuer_url"],
        "https://accounts.example.com"
    );
    assert_eq!(body["values"]["sso_client_id"], "client-123");
    assert_eq!(body["sso_enabled"], true);
    let text = ui
        .get("/_ui/api/config/history")
        .await
        .text()
        .await
        .unwrap();
    assert!(!text.contains(SECRET), "{text}");
    let history: Value = serde_json::from_str(&text).unwrap();
    let entry = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "sso_client_secret")
        .unwrap()
        .clone();
    assert_eq!(entry["new_value"], "********");
    assert_eq!(entry["secret"], true);
    let status: Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["auth_google_enabled"], true);

    // Encrypted at rest.
    let store = env.db.store().await;
    let raw: String = match store.pool() {
        gateway::store::Pool::Sqlite(p) => {
            sqlx::query_scalar("SELECT value FROM config WHERE key = 'sso_client_secret'")
                .fetch_one(p)
                .await
                .unwrap()
        }
        gateway::store::Pool::Postgres(p) => {
            sqlx::query_scalar("SELECT value FROM config WHERE key = 'sso_client_secret'")
                .fetch_one(p)
                .await
                .unwrap()
        }
    };
    assert!(!raw.contains(SECRET));
    store.close().await;

    // The mask sent back changes nothing; null removes the secret.
    let count = history["count"].as_u64().unwrap();
    let (status, _) = json_of(
        ui.put("/_ui/api/config", json!({"sso_client_secret": "********"}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let (_, history) = json_of(ui.get("/_ui/api/config/history").await).await;
    assert_eq!(history["count"].as_u64().unwrap(), count);
    let (status, _) = json_of(
        ui.put("/_ui/api/config", json!({"sso_client_secret": null}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let body = config(&ui).await;
    assert_eq!(body["values"]["sso_client_secret"], Value::Null);
    let status: Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["auth_google_enabled"], false);
}

async fn history_is_ordered_and_pruned(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let ui = admin(&env.gateway.base).await;

    // 1005 earlier changes, written straight to the store.
    let store = env.db.store().await;
    for i in 0..1005u32 {
        let changed = store
            .config()
            .set(
                "tool_description_max_length",
                &(1000 + i).to_string(),
                false,
                None,
            )
            .await
            .unwrap();
        assert!(changed);
    }
    store.close().await;

    let (status, _) = json_of(
        ui.put(
            "/_ui/api/config",
            json!({"fake_reasoning_max_tokens": 1234}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);

    let (status, history) = json_of(ui.get("/_ui/api/config/history").await).await;
    assert_eq!(status, 200);
    assert_eq!(history["count"], 1000);
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1000);
    let newest = &entries[0];
    assert_eq!(newest["key"], "fake_reasoning_max_tokens");
    assert_eq!(newest["old_value"], Value::Null);
    assert_eq!(newest["new_value"], "1234");
    assert_eq!(newest["changed_by_email"], ADMIN_EMAIL);
    assert!(newest["changed_at"].as_str().unwrap().ends_with('Z'));
    let ids: Vec<i64> = entries.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first");
    // The oldest kept is the 7th store write (1005 + 1 - 1000 = 6 pruned).
    let oldest = entries.last().unwrap();
    assert_eq!(oldest["new_value"], "1006", "{oldest}");

    let (_, five) = json_of(ui.get("/_ui/api/config/history?limit=5").await).await;
    assert_eq!(five["count"], 5);
    for bad in ["0", "1001", "x"] {
        let resp = ui
            .get(&format!("/_ui/api/config/history?limit={bad}"))
            .await;
        assert_eq!(resp.status(), 400, "{bad}");
    }
}
