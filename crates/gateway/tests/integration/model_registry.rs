//! The model registry (spec 2.9, 3.6a; interfaces-full.md 4) against the
//! simulators, on SQLite and PostgreSQL: the first start seeds it from the
//! known lists; populating reads each provider's listing with the admin's
//! accounts (or falls back to the static list, or says it found nothing)
//! and a second populate changes nothing; a disabled model is refused on
//! `/v1` before any upstream call and disappears from both model lists
//! until re-enabled, also when reached by an alias; visibility defaults
//! decide new entries and are applied to one provider and to all; only an
//! admin may curate. On PostgreSQL two replicas see a toggle within a second.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use upstream_sim::Vendor;

use crate::accounts_support::{chat, connect_vendor, error_type, v1_key, vendors_env};
use crate::common::{client, start_sim, v1_model_ids, TestDb, UiClient};
use crate::keys_support::connect_upstream;
use crate::relay_support::vendor_chats;

async fn json_of(resp: reqwest::Response) -> Value {
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(status.is_success(), "{status}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// The registry entries (of `provider` when given).
async fn registry(ui: &UiClient, provider: Option<&str>) -> Vec<Value> {
    let path = match provider {
        Some(p) => format!("/_ui/api/models/registry?provider={p}"),
        None => "/_ui/api/models/registry".to_owned(),
    };
    json_of(ui.get(&path).await).await["models"]
        .as_array()
        .unwrap()
        .clone()
}

/// The entry of `model_id` of `provider`.
async fn entry(ui: &UiClient, provider: &str, model_id: &str) -> Value {
    registry(ui, Some(provider))
        .await
        .into_iter()
        .find(|e| e["model_id"] == model_id)
        .unwrap_or_else(|| panic!("no entry {provider}/{model_id}"))
}

async fn populate(ui: &UiClient, body: Value) -> Vec<Value> {
    json_of(ui.post("/_ui/api/models/registry/populate", body).await).await["providers"]
        .as_array()
        .unwrap()
        .clone()
}

fn outcome<'a>(all: &'a [Value], provider: &str) -> &'a Value {
    all.iter().find(|o| o["provider"] == provider).unwrap()
}

/// The ids `GET /_ui/api/models` lists for the user of `ui`.
async fn ui_model_ids(ui: &UiClient) -> Vec<String> {
    json_of(ui.get("/_ui/api/models").await).await["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn admins_curate_the_model_list(db: TestDb) {
    let sim = start_sim().await;
    let env = vendors_env(db, &sim).await;
    let admin = env.admin().await;
    let key = v1_key(&admin).await;

    // The first start seeded the registry from the static lists.
    let seeded = registry(&admin, None).await;
    assert!(seeded
        .iter()
        .any(|e| e["provider"] == "primary" && e["model_id"] == "claude-sonnet-4.5"));
    let gpt5 = entry(&admin, "completions_vendor", "gpt-5").await;
    assert_eq!(gpt5["source"], "static");
    assert_eq!(gpt5["enabled"], true);
    assert_eq!(gpt5["display_name"], "GPT-5");
    assert_eq!(gpt5["input_price_per_mtok"], 1.25, "the list price");
    assert_eq!(
        entry(&admin, "primary", "auto").await["input_price_per_mtok"],
        Value::Null
    );
    assert!(gpt5["id"].as_str().unwrap().len() == 36);
    assert!(registry(&admin, Some("custom")).await.is_empty());

    // Seeding happens once per store: a later start (here a second
    // replica) does not bring back what an admin deleted.
    let o4 = entry(&admin, "completions_vendor", "o4-mini").await;
    let path = format!("/_ui/api/models/registry/{}", o4["id"].as_str().unwrap());
    assert_eq!(admin.delete(&path).await.status(), 200);
    let again = env.replica().await;
    assert_eq!(
        UiClient::new(&again.base)
            .get("/_ui/api/status")
            .await
            .status(),
        200
    );
    assert!(registry(&admin, Some("completions_vendor"))
        .await
        .iter()
        .all(|e| e["model_id"] != "o4-mini"));

    // The admin connects custom (a local server) and messages_vendor.
    let resp = admin
        .put(
            "/_ui/api/config",
            json!({"custom_allow_private_networks": true}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let custom = json!({"base_url": sim.custom_url()});
    connect_vendor(
        &admin,
        &sim,
        Vendor::Custom,
        "custom",
        "sk-admin-custom",
        custom,
    )
    .await;
    connect_vendor(
        &admin,
        &sim,
        Vendor::Messages,
        "messages_vendor",
        "sk-admin-messages",
        json!({}),
    )
    .await;

    // Populate: the listings the admin reaches, the static lists elsewhere.
    let first = populate(&admin, json!({})).await;
    assert_eq!(first.len(), 5);
    let custom = outcome(&first, "custom");
    assert_eq!(custom["source"], "listing", "{custom}");
    assert_eq!(custom["added"], 3, "{custom}");
    let messages = outcome(&first, "messages_vendor");
    assert_eq!(messages["source"], "listing", "{messages}");
    assert!(messages.get("error").is_none(), "{messages}");
    let completions = outcome(&first, "completions_vendor");
    assert_eq!(completions["source"], "static", "{completions}");
    assert_eq!(completions["added"], 1, "o4-mini again: {completions}");
    assert!(completions["error"]
        .as_str()
        .unwrap()
        .contains("static list"));
    let primary = outcome(&first, "primary");
    assert_eq!(primary["source"], "static", "not connected: {primary}");
    let sonnet = entry(&admin, "messages_vendor", "claude-sonnet-4-5-20250929").await;
    assert_eq!(sonnet["source"], "listing");
    assert_eq!(
        entry(&admin, "custom", "mistral-small").await["source"],
        "listing"
    );

    // A second populate changes nothing.
    let second = populate(&admin, json!({})).await;
    for o in &second {
        assert_eq!((&o["added"], &o["updated"]), (&json!(0), &json!(0)), "{o}");
    }

    // The listing down: the static list is used; it adds back what was
    // deleted and does not overwrite what the listing wrote.
    assert!(sim.remove_vendor_api_key(Vendor::Messages, "sk-admin-messages"));
    let haiku = entry(&admin, "messages_vendor", "claude-3-5-haiku-20241022").await;
    let path = format!("/_ui/api/models/registry/{}", haiku["id"].as_str().unwrap());
    assert_eq!(
        json_of(admin.delete(&path).await).await,
        json!({"ok": true})
    );
    assert_eq!(admin.delete(&path).await.status(), 404);
    let down = populate(&admin, json!({"providers": ["messages_vendor"]})).await;
    assert_eq!(down.len(), 1);
    assert_eq!(down[0]["source"], "static", "{}", down[0]);
    assert_eq!(
        (&down[0]["added"], &down[0]["updated"]),
        (&json!(1), &json!(0))
    );
    assert!(
        down[0]["error"].as_str().unwrap().contains("listing"),
        "{}",
        down[0]
    );
    assert_eq!(
        entry(&admin, "messages_vendor", "claude-sonnet-4-5-20250929").await["source"],
        "listing"
    );
    sim.add_vendor_api_key(Vendor::Messages, "sk-admin-messages");
    // Nothing to fall back on for custom without an account.
    let resp = admin
        .post(
            "/_ui/api/models/registry/populate",
            json!({"providers": ["nope"]}),
        )
        .await;
    assert_eq!(error_type(resp).await.1, "validation_error");

    // Disabled: refused before any upstream call, gone from both lists,
    // kept disabled by populate; re-enabled: served again.
    let resp = chat(&env, &key, "custom/llama3.1:8b").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["x-gateway-provider"],
        "custom",
        "who answered"
    );
    assert!(v1_model_ids(&env.gateway.base, &key)
        .await
        .contains(&"custom/llama3.1:8b".to_owned()));
    let llama = entry(&admin, "custom", "llama3.1:8b").await;
    let llama_path = format!("/_ui/api/models/registry/{}", llama["id"].as_str().unwrap());
    let changed = json_of(admin.patch(&llama_path, json!({"enabled": false})).await).await;
    assert_eq!(changed["enabled"], false);
    let before = vendor_chats(&sim, Vendor::Custom).len();
    let (status, kind, message) = error_type(chat(&env, &key, "custom/llama3.1:8b").await).await;
    assert_eq!((status, kind.as_str()), (403, "model_disabled"));
    assert!(message.contains("custom/llama3.1:8b"), "{message}");
    assert_eq!(
        vendor_chats(&sim, Vendor::Custom).len(),
        before,
        "no upstream call"
    );
    // The bare name, chosen by custom's listing, is refused too.
    let (status, kind, _) = error_type(chat(&env, &key, "llama3.1:8b").await).await;
    assert_eq!((status, kind.as_str()), (403, "model_disabled"));
    let listed = v1_model_ids(&env.gateway.base, &key).await;
    assert!(
        !listed.contains(&"custom/llama3.1:8b".to_owned()),
        "{listed:?}"
    );
    assert!(
        listed.contains(&"custom/mistral-small".to_owned()),
        "{listed:?}"
    );
    let usable = ui_model_ids(&admin).await;
    assert!(
        !usable.contains(&"custom/llama3.1:8b".to_owned()),
        "{usable:?}"
    );
    assert!(
        usable.contains(&"custom/mistral-small".to_owned()),
        "{usable:?}"
    );
    populate(&admin, json!({})).await;
    assert_eq!(
        entry(&admin, "custom", "llama3.1:8b").await["enabled"],
        false
    );
    json_of(admin.patch(&llama_path, json!({"enabled": true})).await).await;
    assert_eq!(chat(&env, &key, "custom/llama3.1:8b").await.status(), 200);
    assert!(ui_model_ids(&admin)
        .await
        .contains(&"custom/llama3.1:8b".to_owned()));

    // Names, prices and their validation.
    let renamed = json_of(
        admin.patch(&llama_path, json!({"display_name": "Llama (lab)", "input_price_per_mtok": 0.5, "output_price_per_mtok": null}),
        )
        .await,
    )
    .await;
    assert_eq!(renamed["display_name"], "Llama (lab)");
    assert_eq!(renamed["input_price_per_mtok"], 0.5);
    assert_eq!(renamed["enabled"], true);
    let models: Value = json_of(admin.get("/_ui/api/models").await).await;
    let shown = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "custom/llama3.1:8b")
        .unwrap()
        .clone();
    assert_eq!(shown["display_name"], "Llama (lab)");
    assert_eq!(shown["provider"], "custom");
    let resp = admin
        .patch(&llama_path, json!({"input_price_per_mtok": -1}))
        .await;
    assert_eq!(error_type(resp).await.1, "validation_error");
    let resp = admin.patch(&llama_path, json!({"colour": "red"})).await;
    assert_eq!(resp.status(), 400);
    let resp = admin
        .patch(
            "/_ui/api/models/registry/not-an-id",
            json!({"enabled": false}),
        )
        .await;
    assert_eq!(resp.status(), 404);

    // primary: an alias of a disabled model is refused as well (named
    // with its provider: the admin's messages_vendor takes bare claude-*).
    connect_upstream(&admin).await;
    let resp = chat(&env, &key, "primary/claude-sonnet-4-5").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-gateway-provider"], "primary");
    let primary_sonnet = entry(&admin, "primary", "claude-sonnet-4.5").await;
    let sonnet_path = format!(
        "/_ui/api/models/registry/{}",
        primary_sonnet["id"].as_str().unwrap()
    );
    json_of(admin.patch(&sonnet_path, json!({"enabled": false})).await).await;
    for name in [
        "primary/claude-sonnet-4.5",
        "primary/claude-sonnet-4-5",
        "primary/claude-sonnet-4-5-20250929",
    ] {
        let (status, kind, _) = error_type(chat(&env, &key, name).await).await;
        assert_eq!((status, kind.as_str()), (403, "model_disabled"), "{name}");
    }
    assert!(!v1_model_ids(&env.gateway.base, &key)
        .await
        .contains(&"claude-sonnet-4.5".to_owned()));
    json_of(admin.patch(&sonnet_path, json!({"enabled": true})).await).await;
    assert_eq!(
        chat(&env, &key, "primary/claude-sonnet-4-5").await.status(),
        200
    );

    // Visibility defaults: new entries follow them; applying brings the
    // existing ones in line, for one provider and for all.
    let set = json_of(
        admin
            .put(
                "/_ui/api/models/visibility-defaults/custom",
                json!({"enabled_models": ["mistral-small"]}),
            )
            .await,
    )
    .await;
    assert_eq!(set["provider"], "custom");
    assert_eq!(set["enabled_models"], json!(["mistral-small"]));
    let applied = json_of(
        admin
            .post(
                "/_ui/api/models/visibility-defaults/custom/apply",
                json!({}),
            )
            .await,
    )
    .await;
    assert_eq!(
        applied,
        json!({"provider": "custom", "enabled": 0, "disabled": 2})
    );
    let (status, kind, _) = error_type(chat(&env, &key, "custom/qwen2.5-coder:7b").await).await;
    assert_eq!((status, kind.as_str()), (403, "model_disabled"));
    assert_eq!(chat(&env, &key, "custom/mistral-small").await.status(), 200);
    let resp = admin
        .put(
            "/_ui/api/models/visibility-defaults/completions_vendor",
            json!({"enabled_models": ["gpt-4o"]}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let gpt5 = entry(&admin, "completions_vendor", "gpt-5").await;
    admin
        .delete(&format!(
            "/_ui/api/models/registry/{}",
            gpt5["id"].as_str().unwrap()
        ))
        .await;
    populate(&admin, json!({"providers": ["completions_vendor"]})).await;
    assert_eq!(
        entry(&admin, "completions_vendor", "gpt-5").await["enabled"],
        false,
        "a new entry follows the default"
    );
    assert_eq!(
        entry(&admin, "completions_vendor", "o3").await["enabled"],
        true,
        "until applied"
    );
    let defaults = json_of(admin.get("/_ui/api/models/visibility-defaults").await).await;
    let providers: Vec<&str> = defaults["defaults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["provider"].as_str().unwrap())
        .collect();
    assert_eq!(providers, ["completions_vendor", "custom"]);
    let all = json_of(
        admin
            .post("/_ui/api/models/visibility-defaults/apply-all", json!({}))
            .await,
    )
    .await;
    let all = all["providers"].as_array().unwrap();
    assert_eq!(all.len(), 5);
    let completions = all
        .iter()
        .find(|a| a["provider"] == "completions_vendor")
        .unwrap();
    assert_eq!(completions["enabled"], 0);
    assert!(
        completions["disabled"].as_u64().unwrap() >= 6,
        "{completions}"
    );
    assert_eq!(
        entry(&admin, "completions_vendor", "gpt-4o").await["enabled"],
        true
    );
    assert_eq!(
        entry(&admin, "completions_vendor", "o3").await["enabled"],
        false
    );
    // Without its default every entry of custom is enabled again.
    assert_eq!(
        json_of(
            admin
                .delete("/_ui/api/models/visibility-defaults/custom")
                .await
        )
        .await,
        json!({"ok": true})
    );
    assert_eq!(
        admin
            .delete("/_ui/api/models/visibility-defaults/custom")
            .await
            .status(),
        404
    );
    let applied = json_of(
        admin
            .post(
                "/_ui/api/models/visibility-defaults/custom/apply",
                json!({}),
            )
            .await,
    )
    .await;
    assert_eq!(applied["enabled"], 2);
    assert_eq!(
        chat(&env, &key, "custom/qwen2.5-coder:7b").await.status(),
        200
    );
    let resp = admin
        .put(
            "/_ui/api/models/visibility-defaults/nope",
            json!({"enabled_models": []}),
        )
        .await;
    assert_eq!(resp.status(), 400);

    // Only an admin curates; a user's list never shows a disabled model.
    let bob = env.new_user(&admin, "bob@example.com", "User").await.client;
    let id = entry(&admin, "custom", "mistral-small").await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let entry_path = format!("/_ui/api/models/registry/{id}");
    let refusals = [
        bob.get("/_ui/api/models/registry").await,
        bob.patch(&entry_path, json!({"enabled": false})).await,
        bob.delete(&entry_path).await,
        bob.post("/_ui/api/models/registry/populate", json!({}))
            .await,
        bob.get("/_ui/api/models/visibility-defaults").await,
        bob.put(
            "/_ui/api/models/visibility-defaults/custom",
            json!({"enabled_models": []}),
        )
        .await,
        bob.delete("/_ui/api/models/visibility-defaults/custom")
            .await,
        bob.post(
            "/_ui/api/models/visibility-defaults/custom/apply",
            json!({}),
        )
        .await,
        bob.post("/_ui/api/models/visibility-defaults/apply-all", json!({}))
            .await,
    ];
    for resp in refusals {
        let (status, kind, _) = error_type(resp).await;
        assert_eq!((status, kind.as_str()), (403, "forbidden"));
    }
    assert_eq!(
        entry(&admin, "custom", "mistral-small").await["enabled"],
        true
    );
    assert_eq!(
        json_of(bob.get("/_ui/api/models").await).await,
        json!({"models": []}),
        "nothing connected"
    );
    let anonymous = env.ui().get("/_ui/api/models").await;
    assert_eq!(anonymous.status(), 401);
}

/// Usage is costed at the registry's prices when it is recorded (issue 21):
/// the static file's list price to start with, an admin's price from the
/// change on; a model without a price costs nothing and says so (`null`).
async fn usage_is_costed_at_the_registry_s_prices(db: TestDb) {
    let sim = start_sim().await;
    let env = vendors_env(db, &sim).await;
    let admin = env.admin().await;
    let key = v1_key(&admin).await;
    let me = crate::keys_support::user_id(&admin).await;
    connect_vendor(
        &admin,
        &sim,
        Vendor::Completions,
        "completions_vendor",
        "sk-admin-openai",
        json!({}),
    )
    .await;
    let gpt4o = entry(&admin, "completions_vendor", "gpt-4o").await;
    assert_eq!(
        gpt4o["input_price_per_mtok"], 2.5,
        "the list price: {gpt4o}"
    );
    assert_eq!(gpt4o["output_price_per_mtok"], 10.0);

    assert_eq!(chat(&env, &key, "gpt-4o").await.status(), 200);
    // Its row written first: two requests of one model and second may
    // otherwise share a row, costed at each one's price but not told apart.
    assert_eq!(env.db.usage_rows(me, 1).await.len(), 1);
    let path = format!("/_ui/api/models/registry/{}", gpt4o["id"].as_str().unwrap());
    let changed = json_of(
        admin
            .patch(
                &path,
                json!({"input_price_per_mtok": 1000, "output_price_per_mtok": 2000}),
            )
            .await,
    )
    .await;
    assert_eq!(changed["input_price_per_mtok"], 1000.0);
    assert_eq!(chat(&env, &key, "gpt-4o").await.status(), 200);
    assert_eq!(
        chat(&env, &key, "completions_vendor/chatgpt-4o-latest")
            .await
            .status(),
        200
    );

    // The rows, once written (a second or so, off the request's path).
    let rows = env.db.usage_rows(me, 3).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    let cost = |r: &gateway::store::usage::UsageRecord, input: f64, output: f64| {
        #[expect(clippy::cast_precision_loss, reason = "small test counts")]
        let tokens = |n: i64| n as f64;
        (tokens(r.input_tokens + r.cache_read_tokens + r.cache_write_tokens) * input
            + tokens(r.output_tokens) * output)
            / 1e6
    };
    assert!(
        rows[0].input_tokens > 0 && rows[0].output_tokens > 0,
        "{rows:?}"
    );
    let first = rows[0].cost_usd.unwrap();
    assert!(
        (first - cost(&rows[0], 2.5, 10.0)).abs() < 1e-12,
        "{rows:?}"
    );
    let second = rows[1].cost_usd.unwrap();
    assert!(
        (second - cost(&rows[1], 1000.0, 2000.0)).abs() < 1e-9,
        "{rows:?}"
    );
    assert_eq!(rows[2].cost_usd, None, "chatgpt-4o-latest has no price");

    // The usage report sums them, per model and in total.
    let report = json_of(admin.get("/_ui/api/usage?group_by=model").await).await;
    let total = report["totals"]["cost_usd"].as_f64().unwrap();
    assert!((total - (first + second)).abs() < 1e-9, "{report}");
    let row = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "chatgpt-4o-latest")
        .unwrap();
    assert_eq!(row["cost_usd"], 0.0);
}

crate::both_stores!(
    admins_curate_the_model_list,
    usage_is_costed_at_the_registry_s_prices
);

/// How long until `base` stops listing `model` for `key` (up to 5 s).
async fn hidden_after(base: &str, key: &str, model: &str) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if !v1_model_ids(base, key).await.iter().any(|m| m == model) {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test]
async fn two_replicas_see_a_toggle_within_a_second() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the two-replica test is skipped");
        return;
    };
    let sim = start_sim().await;
    let env = vendors_env(db, &sim).await;
    let two = env.replica().await;
    let admin = env.admin().await;
    let key = v1_key(&admin).await;
    connect_upstream(&admin).await;
    assert!(v1_model_ids(&two.base, &key)
        .await
        .contains(&"claude-haiku-4.5".to_owned()));

    let haiku = entry(&admin, "primary", "claude-haiku-4.5").await;
    let path = format!("/_ui/api/models/registry/{}", haiku["id"].as_str().unwrap());
    json_of(admin.patch(&path, json!({"enabled": false})).await).await;
    let after = hidden_after(&two.base, &key, "claude-haiku-4.5").await;
    assert!(
        after.is_some_and(|d| d < Duration::from_secs(1)),
        "{after:?}"
    );
    let resp = client()
        .post(format!("{}/v1/chat/completions", two.base))
        .bearer_auth(&key)
        .json(
            &json!({"model": "claude-haiku-4.5", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(error_type(resp).await.1, "model_disabled");
}
