//! Guardrails through the real gateway and the simulated guardrail service
//! (issue 16), on both stores: an admin writes a profile and a rule from
//! the API alone, tests the profile, and sees requests blocked on input
//! (both formats, streamed and not, with no upstream call), answers masked
//! on output (non-streaming, both formats), input masked before it goes
//! upstream, sampling at 0 and 100, a rule that does not match, a disabled
//! profile skipped, every engine failure failing open, and non-admins
//! refused.

use serde_json::{json, Value};
use upstream_sim::SimHandle;

use crate::accounts_support::v1_key;
use crate::common::{admin_env, client, start_sim, FullEnv, OpenAiStream, TestDb, UiClient};
use crate::keys_support::connect_upstream;
use crate::metrics_support::scrape;

crate::both_stores!(an_admin_guards_requests_from_the_api);

const EMAIL: &str = "jane@example.com";

async fn guarded_env(db: TestDb, sim: &SimHandle) -> FullEnv {
    let (api, oidc, guard) = (sim.base_url(), sim.oidc_url(), sim.guardrail_url());
    let mut extra = admin_env();
    extra.extend([
        ("UPSTREAM_API_ENDPOINT", api.as_str()),
        ("UPSTREAM_OIDC_ENDPOINT", oidc.as_str()),
        ("GUARDRAIL_ENDPOINT", guard.as_str()),
        ("GUARDRAILS_ENABLED", "true"),
        ("GUARDRAIL_TIMEOUT", "1s"),
    ]);
    FullEnv::start(db, &extra).await
}

/// One `/v1` call with `text` as the user's message.
async fn v1(
    env: &FullEnv,
    key: &str,
    anthropic: bool,
    stream: bool,
    text: &str,
) -> reqwest::Response {
    v1_at(&env.url(""), key, anthropic, stream, text).await
}

/// The same on the gateway at `base`.
async fn v1_at(
    base: &str,
    key: &str,
    anthropic: bool,
    stream: bool,
    text: &str,
) -> reqwest::Response {
    let (path, body) = if anthropic {
        (
            "/v1/messages",
            json!({"model": "claude-sonnet-4.5", "max_tokens": 100, "stream": stream,
                   "messages": [{"role": "user", "content": text}]}),
        )
    } else {
        (
            "/v1/chat/completions",
            json!({"model": "claude-sonnet-4.5", "stream": stream,
                   "messages": [{"role": "user", "content": text}]}),
        )
    };
    client()
        .post(format!("{}{path}", base.trim_end_matches('/')))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The text of a non-streaming answer of either format.
fn answer_text(v: &Value) -> String {
    v["choices"][0]["message"]["content"]
        .as_str()
        .or(v["content"][0]["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn chats(sim: &SimHandle) -> usize {
    sim.requests_to("/generateAssistantResponse").len()
}

async fn json_of(resp: reqwest::Response) -> Value {
    resp.json().await.unwrap()
}

async fn put(ui: &UiClient, path: &str, body: Value) -> Value {
    let resp = ui.put(path, body).await;
    assert_eq!(resp.status(), 200, "{path}");
    json_of(resp).await
}

async fn an_admin_guards_requests_from_the_api(db: TestDb) {
    let sim = start_sim().await;
    let env = guarded_env(db, &sim).await;
    let admin = env.admin().await;
    connect_upstream(&admin).await;
    let key = v1_key(&admin).await;
    let (akid, secret) = sim.guardrail_credentials();

    // A profile: secrets write-only, bad fields refused.
    let resp = admin
        .post(
            "/_ui/api/guardrails/profiles",
            json!({"name": "pii and hate", "guardrail_id": "gr1abc", "guardrail_version": "DRAFT",
                   "region": "us-east-1", "access_key_id": akid, "secret_access_key": secret}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let profile = json_of(resp).await;
    let profile_id = profile["id"].as_str().unwrap().to_owned();
    assert_eq!(profile["has_secret"], true);
    assert_eq!(profile["enabled"], true);
    assert!(!profile.to_string().contains(&secret));
    for bad in [
        json!({"region": "us-east-1.evil.example"}),
        json!({"guardrail_id": "../x"}),
        json!({"guardrail_version": "0"}),
    ] {
        let resp = admin
            .put(
                &format!("/_ui/api/guardrails/profiles/{profile_id}"),
                bad.clone(),
            )
            .await;
        assert_eq!(resp.status(), 400, "{bad}");
    }

    // The tester: each verdict.
    let test = |content: &str| json!({"content": content, "source": "INPUT"});
    let tested = json_of(
        admin
            .post(
                &format!("/_ui/api/guardrails/profiles/{profile_id}/test"),
                test("hello"),
            )
            .await,
    )
    .await;
    assert_eq!(tested["action"], "None", "{tested}");
    let tested = json_of(
        admin
            .post(
                &format!("/_ui/api/guardrails/profiles/{profile_id}/test"),
                test("sim: guardrail content type=HATE\nhello"),
            )
            .await,
    )
    .await;
    assert_eq!(tested["action"], "Intervened", "{tested}");
    assert_eq!(tested["violations"][0]["kind"], "content_policy");
    assert_eq!(tested["violations"][0]["name"], "HATE");
    let tested = json_of(
        admin
            .post(
                &format!("/_ui/api/guardrails/profiles/{profile_id}/test"),
                test(&format!(
                    "sim: guardrail pii match={EMAIL}\nwrite to {EMAIL}"
                )),
            )
            .await,
    )
    .await;
    assert_eq!(tested["action"], "Redacted", "{tested}");
    assert!(
        tested["output"]
            .as_str()
            .unwrap()
            .contains("write to {EMAIL}"),
        "{tested}"
    );

    // Expressions: checked as typed and when saved, with their position.
    let checked = json_of(
        admin
            .post(
                "/_ui/api/guardrails/validate",
                json!({"expression": "request.model >"}),
            )
            .await,
    )
    .await;
    assert_eq!(checked["valid"], false);
    assert_eq!(checked["error"]["line"], 1);
    let checked = json_of(
        admin
            .post(
                "/_ui/api/guardrails/validate",
                json!({"expression": "request.model.startsWith(\"claude\")"}),
            )
            .await,
    )
    .await;
    assert_eq!(checked, json!({"valid": true}));
    let resp = admin
        .post(
            "/_ui/api/guardrails/rules",
            json!({"name": "bad", "cel_expression": "request.temperature > 1", "apply_to": "Both",
                   "sampling_rate": 100, "profile_ids": [profile_id]}),
        )
        .await;
    assert_eq!(resp.status(), 400);
    let error = json_of(resp).await;
    assert_eq!(error["error"]["type"], "validation_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("column"),
        "{error}"
    );

    // The rule.
    let resp = admin
        .post(
            "/_ui/api/guardrails/rules",
            json!({"name": "claude traffic", "cel_expression": "request.model.startsWith(\"claude\")",
                   "apply_to": "Both", "sampling_rate": 100, "profile_ids": [profile_id]}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let rule = json_of(resp).await;
    let rule_path = format!("/_ui/api/guardrails/rules/{}", rule["id"].as_str().unwrap());
    assert_eq!(rule["profile_ids"], json!([profile_id]));
    let listed = json_of(admin.get("/_ui/api/guardrails/profiles").await).await;
    assert_eq!(listed["profiles"][0]["rule_ids"], json!([rule["id"]]));

    // Blocked on input, every format and mode, before any upstream call.
    let before = chats(&sim);
    for (anthropic, stream) in [(false, false), (false, true), (true, false), (true, true)] {
        let resp = v1(
            &env,
            &key,
            anthropic,
            stream,
            "hello\nsim: guardrail content type=HATE",
        )
        .await;
        let what = format!("anthropic {anthropic}, stream {stream}");
        assert_eq!(resp.status(), 403, "{what}");
        let body = json_of(resp).await;
        assert_eq!(body["error"]["type"], "guardrail_blocked", "{what}");
        assert_eq!(body["error"]["stage"], "input", "{what}");
        assert_eq!(
            body["error"]["violations"][0]["kind"], "content_policy",
            "{what}"
        );
    }
    assert_eq!(
        chats(&sim),
        before,
        "a blocked request reached the upstream"
    );

    // Masked on output (non-streaming), both formats.
    let echoed = format!("sim: echo\nsim: guardrail source=OUTPUT pii match={EMAIL}\nmail {EMAIL}");
    for anthropic in [false, true] {
        let resp = v1(&env, &key, anthropic, false, &echoed).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["x-guardrail-action"], "redacted");
        let body = json_of(resp).await;
        let text = answer_text(&body);
        assert!(
            text.contains("mail {EMAIL}") && !text.contains(EMAIL),
            "{body}"
        );
        assert_eq!(
            body["guardrail_warning"]["type"], "guardrail_warning",
            "{body}"
        );
        assert_eq!(body["guardrail_warning"]["violations"][0]["kind"], "pii");
    }
    // Blocked on output.
    let resp = v1(
        &env,
        &key,
        false,
        false,
        "sim: echo\nsim: guardrail source=OUTPUT topic name=medical",
    )
    .await;
    assert_eq!(resp.status(), 403);
    assert_eq!(json_of(resp).await["error"]["stage"], "output");
    // A stream is checked on input only: the same text passes unmasked.
    let (_, outputs_before) = sim.guardrail_calls();
    let resp = v1(&env, &key, false, true, &echoed).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("x-guardrail-action").is_none());
    assert!(OpenAiStream::read(resp).await.text().contains(EMAIL));
    assert_eq!(sim.guardrail_calls().1, outputs_before);

    // Masked input goes upstream masked; a stream says so in its header.
    let masked_input = format!("sim: guardrail source=INPUT pii match={EMAIL}\nmail {EMAIL}");
    let resp = v1(&env, &key, true, true, &masked_input).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-guardrail-action"], "redacted");
    let _ = resp.text().await;
    let sent = sim
        .requests_to("/generateAssistantResponse")
        .last()
        .unwrap()
        .body
        .clone();
    let sent = String::from_utf8_lossy(&sent);
    assert!(
        sent.contains("mail {EMAIL}") && !sent.contains(EMAIL),
        "{sent}"
    );

    // Engine failures fail open: a 500, a bad signature, a timeout.
    for text in [
        "sim: guardrail status code=500\nsim: guardrail content",
        "sim: guardrail header_delay=3s\nsim: guardrail content",
    ] {
        let resp = v1(&env, &key, false, false, text).await;
        assert_eq!(resp.status(), 200, "{text}");
    }
    put(
        &admin,
        &format!("/_ui/api/guardrails/profiles/{profile_id}"),
        json!({"secret_access_key": "not-the-secret"}),
    )
    .await;
    let resp = v1(&env, &key, false, false, "hello\nsim: guardrail content").await;
    assert_eq!(resp.status(), 200, "a refused signature fails open");
    let resp = admin
        .post(
            &format!("/_ui/api/guardrails/profiles/{profile_id}/test"),
            test("hello"),
        )
        .await;
    assert_eq!(resp.status(), 502, "the tester reports the failure");
    put(
        &admin,
        &format!("/_ui/api/guardrails/profiles/{profile_id}"),
        json!({"secret_access_key": secret}),
    )
    .await;
    let blocked = "hello\nsim: guardrail content";
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 403);

    // A rule that does not match, sampling at 0: no call at all.
    let calls = sim.guardrail_calls();
    put(
        &admin,
        &rule_path,
        json!({"cel_expression": "request.model == \"gpt-4o\""}),
    )
    .await;
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 200);
    put(
        &admin,
        &rule_path,
        json!({"cel_expression": "", "sampling_rate": 0}),
    )
    .await;
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 200);
    assert_eq!(sim.guardrail_calls(), calls);
    // Sampling at 100 with the empty expression: every request.
    put(&admin, &rule_path, json!({"sampling_rate": 100})).await;
    assert_eq!(v1(&env, &key, true, false, blocked).await.status(), 403);

    // A disabled profile is skipped; guardrails off check nothing.
    put(
        &admin,
        &format!("/_ui/api/guardrails/profiles/{profile_id}"),
        json!({"enabled": false}),
    )
    .await;
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 200);
    put(
        &admin,
        &format!("/_ui/api/guardrails/profiles/{profile_id}"),
        json!({"enabled": true}),
    )
    .await;
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 403);
    let resp = admin
        .put("/_ui/api/config", json!({"guardrails_enabled": false}))
        .await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(v1(&env, &key, false, false, blocked).await.status(), 200);

    // The metrics saw blocks on input, masks on output, and the failures
    // that failed open.
    let metrics = scrape(&env.url("")).await;
    for (stage, action) in [
        ("input", "blocked"),
        ("output", "redacted"),
        ("input", "pass"),
    ] {
        assert!(
            metrics.value(
                "gateway_guardrail_verdicts_total",
                &[("stage", stage), ("action", action)]
            ) >= 1.0,
            "{stage} {action}"
        );
    }
    assert!(metrics.value("gateway_guardrail_fail_open_total", &[]) >= 1.0);

    // Non-admins see none of it.
    let user = env.new_user(&admin, "user@example.com", "User").await;
    for path in ["/_ui/api/guardrails/profiles", "/_ui/api/guardrails/rules"] {
        assert_eq!(user.client.get(path).await.status(), 403, "{path}");
    }
    let resp = user
        .client
        .post("/_ui/api/guardrails/validate", json!({"expression": ""}))
        .await;
    assert_eq!(resp.status(), 403);

    // Deleting the profile unlinks it; deleting the rule removes it.
    let resp = admin
        .delete(&format!("/_ui/api/guardrails/profiles/{profile_id}"))
        .await;
    assert_eq!(resp.status(), 200);
    let rule = json_of(admin.get(&rule_path).await).await;
    assert_eq!(rule["profile_ids"], json!([]));
    assert_eq!(admin.delete(&rule_path).await.status(), 200);
    assert_eq!(admin.get(&rule_path).await.status(), 404);
}

/// A rule saved on one replica guards the next request on another (the
/// `guardrails` announcement), with no restart.
#[tokio::test]
async fn a_rule_applies_on_every_replica() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the two-replica guardrail test is skipped");
        return;
    };
    let sim = start_sim().await;
    let env = guarded_env(db, &sim).await;
    let other = env.replica().await;
    let admin = env.admin().await;
    connect_upstream(&admin).await;
    let key = v1_key(&admin).await;
    let blocked = "hello\nsim: guardrail content";
    assert_eq!(
        v1_at(&other.url(""), &key, false, false, blocked)
            .await
            .status(),
        200
    );

    let (akid, secret) = sim.guardrail_credentials();
    let profile = json_of(
        admin
            .post(
                "/_ui/api/guardrails/profiles",
                json!({"name": "p", "guardrail_id": "abc", "guardrail_version": "1",
                       "region": "eu-west-1", "access_key_id": akid, "secret_access_key": secret}),
            )
            .await,
    )
    .await;
    let resp = admin
        .post(
            "/_ui/api/guardrails/rules",
            json!({"name": "all", "cel_expression": "", "apply_to": "Input",
                   "sampling_rate": 100, "profile_ids": [profile["id"]]}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let start = std::time::Instant::now();
    loop {
        let status = v1_at(&other.url(""), &key, false, false, blocked)
            .await
            .status();
        if status == 403 {
            break;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(3),
            "the other replica did not pick up the rule"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
