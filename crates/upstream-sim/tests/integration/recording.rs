//! What the recorder keeps of each request.

use serde_json::json;
use upstream_sim::{Service, SimConfig};

use crate::common::*;

#[tokio::test]
async fn every_request_is_recorded_with_its_details() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let resp = client()
        .post(format!("{}/generateAssistantResponse", sim.base_url()))
        .bearer_auth(&token)
        .header("x-amzn-codewhisperer-optout", "true")
        .json(&chat_body("What arrived?"))
        .send()
        .await
        .unwrap();
    decode(resp).await;
    client()
        .get(format!(
            "{}/ListAvailableModels?origin=AI_EDITOR&maxResults=50",
            sim.base_url()
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    client()
        .post(format!("{}/token", sim.oidc_url()))
        .json(&json!({"grantType": "refresh_token"}))
        .send()
        .await
        .unwrap();
    // Rejected requests are recorded too.
    chat(&sim, "bad", &chat_body("x")).await;

    let all = sim.requests();
    assert_eq!(all.len(), 4);
    let chat_req = &all[0];
    assert_eq!(chat_req.service, Service::PrimaryApi);
    assert_eq!(chat_req.method, "POST");
    assert_eq!(chat_req.path, "/generateAssistantResponse");
    assert_eq!(
        chat_req.header("authorization"),
        Some(format!("Bearer {token}").as_str())
    );
    assert_eq!(chat_req.header("X-Amzn-Codewhisperer-Optout"), Some("true"));
    assert_eq!(
        chat_req.json().unwrap()["conversationState"]["currentMessage"]["userInputMessage"]
            ["content"],
        "What arrived?"
    );
    assert!(!chat_req.body.is_empty());

    let models = &all[1];
    assert_eq!(models.method, "GET");
    assert_eq!(
        models.query.as_deref(),
        Some("origin=AI_EDITOR&maxResults=50")
    );
    assert_eq!(models.query_param("maxResults").as_deref(), Some("50"));

    assert_eq!(all[2].service, Service::Oidc);
    assert_eq!(all[2].path, "/token");
    assert_eq!(all[2].json().unwrap()["grantType"], "refresh_token");
    assert!(all[0].at <= all[3].at);

    assert_eq!(sim.requests_to("/generateAssistantResponse").len(), 2);
    assert_eq!(sim.requests_to("/token").len(), 1);
    sim.clear();
    assert!(sim.requests().is_empty());
}

#[tokio::test]
async fn record_limit_bounds_memory() {
    let sim = sim_with(SimConfig {
        record_limit: 2,
        accept_any_token: true,
        ..SimConfig::default()
    })
    .await;
    for i in 0..4 {
        chat(&sim, "t", &chat_body(&format!("n{i}"))).await;
    }
    let kept: Vec<_> = sim
        .requests()
        .iter()
        .map(|r| {
            r.json().unwrap()["conversationState"]["currentMessage"]["userInputMessage"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kept, ["n2", "n3"]);
}

#[tokio::test]
async fn shutdown_stops_the_listeners() {
    let sim = sim().await;
    let url = sim.base_url();
    sim.shutdown().await;
    assert!(client()
        .get(format!("{url}/ListAvailableModels"))
        .send()
        .await
        .is_err());
}
