//! IAM Identity Center accounts: the `profileArn` is looked up once after
//! sign-in, kept in `tokens.json`, and sent on every chat and listing call.

use serde_json::Value;

use crate::common::*;

#[tokio::test]
async fn an_organization_account_learns_and_sends_its_profile() {
    let sim = start_sim_with(|c| c.require_profile_arn = true).await;
    let dir = TempDir::new();
    let mut env = proxy_env(&sim, &dir);
    env.push((
        "UPSTREAM_SSO_URL".to_owned(),
        "https://d-1234567890.awsapps.com/start/#/".to_owned(),
    ));
    let gw = Gateway::start(config_from(env)).await;
    // The gateway serves once sign-in (and the profile lookup) is done.
    let health = client().get(gw.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);

    let lookups: Vec<_> = sim
        .requests()
        .into_iter()
        .filter(|r| {
            r.path == "/"
                && r.header("x-amz-target")
                    == Some("AmazonCodeWhispererService.ListAvailableProfiles")
        })
        .collect();
    assert_eq!(
        lookups.len(),
        1,
        "one profile lookup after sign-in: {:?}",
        sim.requests()
            .iter()
            .map(|r| (r.path.clone(), r.header("x-amz-target").map(str::to_owned)))
            .collect::<Vec<_>>()
    );

    let saved: Value = serde_json::from_slice(&std::fs::read(dir.tokens_path()).unwrap()).unwrap();
    assert_eq!(saved["profile_arn"], upstream_sim::primary::PROFILE_ARN);
    assert_eq!(saved["start_url"], "https://d-1234567890.awsapps.com/start");

    // The simulator refuses calls without the profile, so a 200 proves it was sent.
    let resp = client()
        .post(gw.url("/v1/chat/completions"))
        .bearer_auth(API_KEY)
        .json(&chat_body("hello", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let chat = sim.requests_to("/generateAssistantResponse");
    assert_eq!(
        chat[0].json().unwrap()["profileArn"],
        upstream_sim::primary::PROFILE_ARN
    );
    let listing = sim.requests_to("/ListAvailableModels");
    assert_eq!(
        listing[0].query_param("profileArn").as_deref(),
        Some(upstream_sim::primary::PROFILE_ARN)
    );

    gw.stop().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn an_individual_account_asks_for_no_profile() {
    let env = ProxyEnv::start(&[]).await;
    let health = client().get(env.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(env.sim.requests().iter().all(|r| r.path != "/"));
    let saved: Value =
        serde_json::from_slice(&std::fs::read(env.dir.tokens_path()).unwrap()).unwrap();
    assert!(saved.get("profile_arn").is_none_or(Value::is_null));
}

/// Full deployment: a user who connects an organization account gets its
/// profile looked up once at connect time, kept with their credentials, and
/// sent with their calls (the simulator refuses calls without it).
#[tokio::test]
async fn a_users_organization_account_learns_and_sends_its_profile() {
    let sim = start_sim_with(|c| c.require_profile_arn = true).await;
    let (api, oidc) = (sim.base_url(), sim.oidc_url());
    let mut extra = admin_env();
    extra.push(("UPSTREAM_API_ENDPOINT", &api));
    extra.push(("UPSTREAM_OIDC_ENDPOINT", &oidc));
    let env = FullEnv::start(TestDb::sqlite(), &extra).await;
    let admin = env.admin().await;
    let alice = env.new_user(&admin, "alice@example.com", "User").await;
    let created: Value = alice
        .client
        .post("/_ui/api/keys", serde_json::json!({"label": "t"}))
        .await
        .json()
        .await
        .unwrap();
    let key = created["key"].as_str().unwrap().to_owned();
    let setup: Value = alice
        .client
        .post(
            "/_ui/api/upstream/setup",
            serde_json::json!({"sso_start_url": "https://d-1234567890.awsapps.com/start"}),
        )
        .await
        .json()
        .await
        .unwrap();
    let mut status = Value::Null;
    for _ in 0..10 {
        let polled: Value = alice
            .client
            .post(
                "/_ui/api/upstream/poll",
                serde_json::json!({"device_code": setup["device_code"]}),
            )
            .await
            .json()
            .await
            .unwrap();
        status = polled["status"].clone();
        if status != "pending" {
            break;
        }
    }
    assert_eq!(status, "success");
    let lookups = sim
        .requests()
        .into_iter()
        .filter(|r| {
            r.header("x-amz-target") == Some("AmazonCodeWhispererService.ListAvailableProfiles")
        })
        .count();
    assert_eq!(lookups, 1);
    let resp = client()
        .post(env.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&chat_body("hi", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    let sent = sim.requests_to("/generateAssistantResponse");
    let body = sent.last().unwrap().json().unwrap();
    assert_eq!(body["profileArn"], upstream_sim::primary::PROFILE_ARN);
}
