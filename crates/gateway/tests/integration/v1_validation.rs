//! `/v1` request validation seen from a client (spec 4.1, 5.2, 7): every body
//! rule of both endpoints answers 400 `validation_error` naming the field, an
//! unknown model 400 `invalid_model`, a missing or wrong key 401 `auth_error`;
//! fields that are accepted but not forwarded never reach the upstream.

use serde_json::{json, Value};

use crate::common::*;

/// Status and error body of `POST path` with a raw body and content type.
async fn post_raw(
    env: &ProxyEnv,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let mut req = client()
        .post(env.url(path))
        .bearer_auth(API_KEY)
        .body(body.to_owned());
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// Assert a 400 of `kind` whose message mentions every one of `words`.
fn assert_error(case: &str, got: &(u16, Value), status: u16, kind: &str, words: &[&str]) {
    let (s, body) = got;
    assert_eq!(*s, status, "{case}: {body}");
    assert_eq!(body["error"]["type"], kind, "{case}: {body}");
    assert_eq!(
        body["error"].as_object().unwrap().len(),
        2,
        "{case}: {body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    for w in words {
        assert!(message.contains(w), "{case}: '{message}' should name '{w}'");
    }
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

fn without(mut base: Value, key: &str) -> Value {
    base.as_object_mut().unwrap().remove(key);
    base
}

#[tokio::test]
async fn chat_completions_rules_answer_400_naming_the_field() {
    let env = ProxyEnv::start(&[]).await;
    let ok = chat_body("hi", false);
    let cases: Vec<(&str, Value, &[&str])> = vec![
        ("missing model", without(ok.clone(), "model"), &["model"]),
        (
            "empty model",
            with(ok.clone(), "model", json!("")),
            &["model"],
        ),
        (
            "missing messages",
            without(ok.clone(), "messages"),
            &["messages"],
        ),
        (
            "empty messages",
            with(ok.clone(), "messages", json!([])),
            &["messages"],
        ),
        (
            "bad role",
            with(
                ok.clone(),
                "messages",
                json!([{"role": "wizard", "content": "x"}]),
            ),
            &["messages[0].role"],
        ),
        (
            "missing content",
            with(ok.clone(), "messages", json!([{"role": "user"}])),
            &["messages[0].content"],
        ),
        (
            "temperature 2.5",
            with(ok.clone(), "temperature", json!(2.5)),
            &["temperature"],
        ),
        (
            "temperature -0.1",
            with(ok.clone(), "temperature", json!(-0.1)),
            &["temperature"],
        ),
        (
            "presence_penalty 2.5",
            with(ok.clone(), "presence_penalty", json!(2.5)),
            &["presence_penalty"],
        ),
        (
            "frequency_penalty -3",
            with(ok.clone(), "frequency_penalty", json!(-3)),
            &["frequency_penalty"],
        ),
        ("n=2", with(ok.clone(), "n", json!(2)), &["n"]),
        (
            "max_tokens 0",
            with(ok.clone(), "max_tokens", json!(0)),
            &["max_tokens"],
        ),
        (
            "stream as a string",
            with(ok.clone(), "stream", json!("yes")),
            &["stream"],
        ),
        (
            "temperature as a string",
            with(ok.clone(), "temperature", json!("hot")),
            &["temperature"],
        ),
        (
            "messages as an object",
            with(ok.clone(), "messages", json!({})),
            &["messages"],
        ),
        (
            "tool without function",
            with(ok.clone(), "tools", json!([{"type": "function"}])),
            &["tools[0].function"],
        ),
    ];
    for (case, body, words) in cases {
        let got = post_raw(
            &env,
            "/v1/chat/completions",
            Some("application/json"),
            &body.to_string(),
        )
        .await;
        assert_error(case, &got, 400, "validation_error", words);
    }
    // The boundaries themselves are valid.
    for (key, value) in [
        ("temperature", 2.0),
        ("presence_penalty", -2.0),
        ("frequency_penalty", 2.0),
    ] {
        let resp = env
            .post("/v1/chat/completions", &with(ok.clone(), key, json!(value)))
            .await;
        assert_eq!(resp.status(), 200, "{key}={value}");
    }
    assert!(
        env.chat_requests().len() == 3,
        "only valid bodies reach the upstream"
    );
}

#[tokio::test]
async fn messages_rules_answer_400_naming_the_field() {
    let env = ProxyEnv::start(&[]).await;
    let ok = messages_body("hi", false);
    let cases: Vec<(&str, Value, &[&str])> = vec![
        ("missing model", without(ok.clone(), "model"), &["model"]),
        (
            "missing messages",
            without(ok.clone(), "messages"),
            &["messages"],
        ),
        (
            "empty messages",
            with(ok.clone(), "messages", json!([])),
            &["messages"],
        ),
        (
            "bad role",
            with(
                ok.clone(),
                "messages",
                json!([{"role": "system", "content": "x"}]),
            ),
            &["messages[0].role"],
        ),
        (
            "temperature 1.5",
            with(ok.clone(), "temperature", json!(1.5)),
            &["temperature"],
        ),
        (
            "missing max_tokens",
            without(ok.clone(), "max_tokens"),
            &["max_tokens"],
        ),
        (
            "max_tokens 0",
            with(ok.clone(), "max_tokens", json!(0)),
            &["max_tokens"],
        ),
        (
            "max_tokens as a string",
            with(ok.clone(), "max_tokens", json!("many")),
            &["max_tokens"],
        ),
        (
            "messages as a string",
            with(ok.clone(), "messages", json!("hi")),
            &["messages"],
        ),
    ];
    for (case, body, words) in cases {
        let got = post_raw(
            &env,
            "/v1/messages",
            Some("application/json"),
            &body.to_string(),
        )
        .await;
        assert_error(case, &got, 400, "validation_error", words);
    }
    let resp = env
        .post("/v1/messages", &with(ok.clone(), "temperature", json!(1.0)))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(env.chat_requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_wrong_content_type_and_unknown_model() {
    let env = ProxyEnv::start(&[]).await;
    for path in ["/v1/chat/completions", "/v1/messages"] {
        let got = post_raw(
            &env,
            path,
            Some("application/json"),
            r#"{"model": "x", "messages": ["#,
        )
        .await;
        assert_error(
            "malformed JSON",
            &got,
            400,
            "validation_error",
            &["malformed JSON"],
        );
        let got = post_raw(&env, path, Some("application/json"), "[1, 2]").await;
        assert_error("array body", &got, 400, "validation_error", &[]);
        let got = post_raw(
            &env,
            path,
            Some("text/plain"),
            &chat_body("hi", false).to_string(),
        )
        .await;
        assert_error(
            "text/plain",
            &got,
            400,
            "validation_error",
            &["Content-Type"],
        );
        let got = post_raw(&env, path, None, &chat_body("hi", false).to_string()).await;
        assert_error(
            "no content type",
            &got,
            400,
            "validation_error",
            &["Content-Type"],
        );
    }
    let body = with(chat_body("hi", false), "model", json!("gpt-nonexistent-9"));
    let got = post_raw(
        &env,
        "/v1/chat/completions",
        Some("application/json"),
        &body.to_string(),
    )
    .await;
    assert_error(
        "unknown model",
        &got,
        400,
        "invalid_model",
        &["gpt-nonexistent-9"],
    );
    let body = with(messages_body("hi", true), "model", json!("nope-model"));
    let got = post_raw(
        &env,
        "/v1/messages",
        Some("application/json"),
        &body.to_string(),
    )
    .await;
    assert_error(
        "unknown model (streaming)",
        &got,
        400,
        "invalid_model",
        &["nope-model"],
    );
    assert!(env.chat_requests().is_empty());
}

/// ASVS 13.1.3: a key sent only in the query string is not read (401),
/// on both chat paths and `/v1/models`.
#[tokio::test]
async fn keys_in_the_url_are_refused() {
    let env = ProxyEnv::start(&[]).await;
    let http = client();
    for param in ["api_key", "key"] {
        for (path, body) in [
            ("/v1/chat/completions", chat_body("hi", false)),
            ("/v1/messages", messages_body("hi", false)),
        ] {
            let resp = http
                .post(env.url(&format!("{path}?{param}={API_KEY}")))
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 401, "{path}?{param}=");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "auth_error");
        }
        let resp = http
            .get(env.url(&format!("/v1/models?{param}={API_KEY}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "/v1/models?{param}=");
    }
    assert!(env.chat_requests().is_empty());
}

#[tokio::test]
async fn keys_are_checked_in_both_headers() {
    let env = ProxyEnv::start(&[]).await;
    let http = client();
    for (path, body) in [
        ("/v1/chat/completions", chat_body("hi", false)),
        ("/v1/messages", messages_body("hi", false)),
    ] {
        let missing = http.post(env.url(path)).json(&body).send().await.unwrap();
        assert_eq!(missing.status(), 401);
        let missing: Value = missing.json().await.unwrap();
        assert_eq!(missing["error"]["type"], "auth_error");
        assert!(missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing"));

        let wrong_bearer = http
            .post(env.url(path))
            .bearer_auth("wrong-key")
            .json(&body);
        let wrong_header = http
            .post(env.url(path))
            .header("x-api-key", "wrong-key")
            .json(&body);
        for req in [wrong_bearer, wrong_header] {
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 401);
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "auth_error");
            assert_eq!(v["error"]["message"], "invalid API key");
        }

        let bearer = http.post(env.url(path)).bearer_auth(API_KEY).json(&body);
        let header = http
            .post(env.url(path))
            .header("x-api-key", API_KEY)
            .json(&body);
        for req in [bearer, header] {
            assert_eq!(req.send().await.unwrap().status(), 200, "{path}");
        }
    }
    assert_eq!(env.chat_requests().len(), 4);
}

#[tokio::test]
async fn compat_version_user_seed_and_metadata_are_accepted_not_forwarded() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client()
        .post(env.url("/v1/messages"))
        .header("x-api-key", API_KEY)
        .header("compat-version", "2023-06-01")
        .json(&with(
            messages_body("hi", false),
            "metadata",
            json!({"user_id": "meta-user-4711"}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let mut body = chat_body("hi", false);
    body["user"] = json!("client-user-4711");
    body["seed"] = json!(987_654_321);
    let resp = env.post("/v1/chat/completions", &body).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["object"], "chat.completion");

    let sent = env.sim.requests_to("/generateAssistantResponse");
    assert_eq!(sent.len(), 2);
    for r in &sent {
        let raw = String::from_utf8_lossy(&r.body);
        for secret in ["4711", "987654321", "seed", "\"user\"", "metadata"] {
            assert!(!raw.contains(secret), "'{secret}' was forwarded: {raw}");
        }
        // What the upstream must see: never the client's key.
        assert!(!raw.contains(API_KEY));
        assert_ne!(
            r.header("authorization"),
            Some(&*format!("Bearer {API_KEY}"))
        );
    }
}
