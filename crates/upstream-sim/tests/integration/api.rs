//! The primary API over HTTP: authentication, validation, model listing.

use serde_json::json;
use upstream_sim::SimConfig;

use crate::common::*;

const BAD_TOKEN: &str = "The bearer token included in the request is invalid.";

#[tokio::test]
async fn unknown_missing_and_revoked_tokens_get_the_real_403() {
    let sim = sim().await;
    let (status, kind, body) = error_of(chat(&sim, "made-up", &chat_body("hi")).await).await;
    assert_eq!(status, 403);
    assert_eq!(kind.as_deref(), Some("AccessDeniedException"));
    assert_eq!(body, json!({"message": BAD_TOKEN}));

    let resp = client()
        .post(format!("{}/generateAssistantResponse", sim.base_url()))
        .json(&chat_body("hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);

    let token = sim.issue_access_token();
    assert_eq!(chat(&sim, &token, &chat_body("hi")).await.status(), 200);
    sim.revoke_access_tokens();
    assert_eq!(chat(&sim, &token, &chat_body("hi")).await.status(), 403);
    let fresh = sim.issue_access_token();
    assert_eq!(chat(&sim, &fresh, &chat_body("hi")).await.status(), 200);
    sim.expire_access_tokens();
    assert_eq!(chat(&sim, &fresh, &chat_body("hi")).await.status(), 403);

    // Models need the token too.
    let resp = client()
        .get(format!(
            "{}/ListAvailableModels?origin=AI_EDITOR",
            sim.base_url()
        ))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn accept_any_token_mode() {
    let sim = sim_with(SimConfig {
        accept_any_token: true,
        ..SimConfig::default()
    })
    .await;
    assert_eq!(chat(&sim, "anything", &chat_body("hi")).await.status(), 200);
    sim.set_accept_any_token(false);
    assert_eq!(chat(&sim, "anything", &chat_body("hi")).await.status(), 403);
}

#[tokio::test]
async fn body_validation_answers_like_the_service() {
    let sim = sim().await;
    let token = sim.issue_access_token();

    let mut body = chat_body("hi");
    body["systemPrompt"] = json!("You are helpful.");
    let (status, kind, err) = error_of(chat(&sim, &token, &body).await).await;
    assert_eq!(
        (status, kind.as_deref()),
        (400, Some("ValidationException"))
    );
    assert_eq!(
        err,
        json!({"message": "Improperly formed request.", "reason": "REQUEST_BODY_INVALID"})
    );

    // Tool results without tools on the current message.
    let mut body = chat_body("(empty)");
    body["conversationState"]["history"] = json!([
        {"userInputMessage": {"content": "list", "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR"}},
        {"assistantResponseMessage": {"content": "ok", "toolUses": [
            {"toolUseId": "t1", "name": "list_dir", "input": {"path": "."}}]}}
    ]);
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"] = json!({"toolResults": [{"toolUseId": "t1", "status": "success", "content": [{"text": "a"}]}]});
    let (status, _, err) = error_of(chat(&sim, &token, &body).await).await;
    assert_eq!(status, 400);
    assert_eq!(err, json!({"message": "Improperly formed request."}));
    // With the tools, the same conversation is fine.
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"]
        ["tools"] = chat_body_with_tools("x")["conversationState"]["currentMessage"]
        ["userInputMessage"]["userInputMessageContext"]["tools"]
        .clone();
    assert_eq!(chat(&sim, &token, &body).await.status(), 200);

    // Not JSON at all.
    let resp = client()
        .post(format!("{}/generateAssistantResponse", sim.base_url()))
        .bearer_auth(&token)
        .body("grantType=x")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);

    // Unknown model.
    let mut body = chat_body("hi");
    body["conversationState"]["currentMessage"]["userInputMessage"]["modelId"] = json!("gpt-4o");
    let (_, _, err) = error_of(chat(&sim, &token, &body).await).await;
    assert_eq!(err["reason"], "INVALID_MODEL_ID");

    // A bad directive is the test writer's error, named as such.
    let (status, _, err) = error_of(chat(&sim, &token, &chat_body("sim: text lenn=3")).await).await;
    assert_eq!(status, 400);
    assert_eq!(err["reason"], "SIM_DIRECTIVE_INVALID");
    assert!(err["message"].as_str().unwrap().contains("lenn"));
}

#[tokio::test]
async fn input_too_long() {
    let sim = sim_with(SimConfig {
        max_input_bytes: 1000,
        ..SimConfig::default()
    })
    .await;
    let token = sim.issue_access_token();
    let (status, _, err) = error_of(chat(&sim, &token, &chat_body(&"x".repeat(2000))).await).await;
    assert_eq!(status, 400);
    assert_eq!(
        err,
        json!({"message": "Input is too long.", "reason": "CONTENT_LENGTH_EXCEEDS_THRESHOLD"})
    );
}

#[tokio::test]
async fn list_available_models() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let get = |query: &'static str| {
        let url = format!("{}/ListAvailableModels{query}", sim.base_url());
        let token = token.clone();
        async move { client().get(url).bearer_auth(token).send().await.unwrap() }
    };
    let resp = get("?origin=AI_EDITOR").await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().contains_key("x-amzn-requestid"));
    let list: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(list["defaultModel"], json!({"modelId": "auto"}));
    assert_eq!(list["nextToken"], serde_json::Value::Null);
    let models = list["models"].as_array().unwrap();
    let ids: Vec<&str> = models
        .iter()
        .map(|m| m["modelId"].as_str().unwrap())
        .collect();
    for id in [
        "auto",
        "claude-sonnet-4",
        "claude-sonnet-4.5",
        "claude-haiku-4.5",
        "claude-opus-4.5",
        "deepseek-3.2",
    ] {
        assert!(ids.contains(&id), "{id} listed");
    }
    for m in models {
        assert!(m["tokenLimits"]["maxInputTokens"].as_u64().unwrap() > 0);
        assert!(m["modelName"].is_string());
    }
    // The listing parses with the gateway's own types.
    let typed: wire::primary::ListAvailableModelsResponse =
        serde_json::from_value(list.clone()).unwrap();
    assert_eq!(typed.models.len(), models.len());

    let page: serde_json::Value = get("?origin=AI_EDITOR&maxResults=2")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(page["models"].as_array().unwrap().len(), 2);
    assert_eq!(page["nextToken"], "page-2");
    assert_eq!(get("").await.status(), 400, "origin is required");
    assert_eq!(get("?origin=AI_EDITOR&maxResults=x").await.status(), 400);
}

#[tokio::test]
async fn unknown_paths_are_404_json() {
    let sim = sim().await;
    let (status, kind, _) = error_of(
        client()
            .get(format!("{}/nope", sim.base_url()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(kind.as_deref(), Some("UnknownOperationException"));
}
