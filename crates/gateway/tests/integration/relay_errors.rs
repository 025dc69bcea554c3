//! Provider errors through the gateway: status and message kept in the
//! gateway's error body, `retry-after` passed on, retries, errors before the
//! first content as plain HTTP errors, and cut or failing streams ended with
//! the client format's error event (native and converted alike).

use serde_json::{json, Value};
use upstream_sim::Vendor;

use super::relay_support::{body, start, vendor_chats, Answer, Client};

const ALL: [Vendor; 4] = [
    Vendor::Messages,
    Vendor::Completions,
    Vendor::Assistant,
    Vendor::Custom,
];

fn model(vendor: Vendor) -> String {
    match vendor {
        Vendor::Messages => "messages_vendor/claude-sonnet-4-5".to_owned(),
        other => format!("{}/gpt-4o", other.id()),
    }
}

#[tokio::test]
async fn a_429_keeps_its_status_message_and_retry_after() {
    let env = start(&ALL, &[("HTTP_MAX_RETRIES", "0")]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            for stream in [false, true] {
                let text = "x\nsim: status code=429 retry_after=7";
                let resp = env
                    .post(
                        client.path(),
                        &body(client, &model(vendor), json!(text), stream),
                    )
                    .await;
                let what = format!("{vendor} {client:?} stream={stream}");
                assert_eq!(resp.status(), 429, "{what}");
                assert_eq!(resp.headers()["retry-after"], "7", "{what}");
                let v: Value = resp.json().await.unwrap();
                assert_eq!(v["error"]["type"], "upstream_api_error", "{what}: {v}");
                let message = v["error"]["message"].as_str().unwrap();
                assert!(!message.is_empty(), "{what}: {v}");
            }
        }
    }
}

#[tokio::test]
async fn a_passing_429_is_retried_after_its_retry_after() {
    let env = start(&[Vendor::Completions], &[]).await;
    let text = "x\nsim: status code=429 retry_after=1 times=1";
    let started = std::time::Instant::now();
    let resp = env
        .post(
            "/v1/chat/completions",
            &body(
                Client::OpenAi,
                "completions_vendor/gpt-4o",
                json!(text),
                false,
            ),
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "retry-after honoured"
    );
    assert_eq!(vendor_chats(&env.sim, Vendor::Completions).len(), 2);
}

#[tokio::test]
async fn other_provider_errors_keep_status_and_message_without_retries() {
    let env = start(&ALL, &[]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            env.sim.clear();
            let text = "x\nsim: status code=404";
            let resp = env
                .post(
                    client.path(),
                    &body(client, &model(vendor), json!(text), false),
                )
                .await;
            let what = format!("{vendor} {client:?}");
            assert_eq!(resp.status(), 404, "{what}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "upstream_api_error", "{what}");
            assert!(
                !v["error"]["message"].as_str().unwrap().is_empty(),
                "{what}"
            );
            assert_eq!(
                vendor_chats(&env.sim, vendor).len(),
                1,
                "{what}: a 404 is not retried"
            );
        }
    }
}

#[tokio::test]
async fn an_error_before_any_content_is_a_plain_http_error() {
    let env = start(&ALL, &[]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            // After the opening event only: message_start / the role chunk.
            let text = "x\nsim: text len=50 error_after=1";
            let resp = env
                .post(
                    client.path(),
                    &body(client, &model(vendor), json!(text), true),
                )
                .await;
            let what = format!("{vendor} {client:?}");
            assert_ne!(resp.status(), 200, "{what}");
            assert!(resp.status().as_u16() >= 400, "{what}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "upstream_api_error", "{what}: {v}");
        }
    }
}

#[tokio::test]
async fn a_stream_cut_before_any_content_is_a_plain_http_error() {
    let env = start(&ALL, &[]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            // Cut after the opening event only.
            let text = "x\nsim: text len=50 disconnect_after=1";
            let resp = env
                .post(
                    client.path(),
                    &body(client, &model(vendor), json!(text), true),
                )
                .await;
            let what = format!("{vendor} {client:?}");
            assert_eq!(resp.status(), 502, "{what}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["type"], "upstream_api_error", "{what}: {v}");
        }
    }
}

#[tokio::test]
async fn a_cut_stream_ends_with_the_clients_error_event() {
    let env = start(&ALL, &[]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            let text = "x\nsim: text len=300 chunk=10 disconnect_after=6";
            let resp = env
                .post(
                    client.path(),
                    &body(client, &model(vendor), json!(text), true),
                )
                .await;
            let answer = Answer::read(client, true, resp).await;
            let what = format!("{vendor} {client:?}");
            assert!(!answer.text.is_empty(), "{what}: content before the cut");
            let err = answer
                .error
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: no error event"));
            assert!(!answer.clean_end, "{what}");
            // Both formats carry the gateway's type in `error.type`.
            assert_eq!(err["error"]["type"], "upstream_api_error", "{what}: {err}");
        }
    }
}

#[tokio::test]
async fn a_provider_error_event_mid_stream_reaches_the_client_in_its_format() {
    let env = start(&ALL, &[]).await;
    for vendor in ALL {
        for client in [Client::OpenAi, Client::Anthropic] {
            let text = "x\nsim: text len=300 chunk=10 error_after=6";
            let resp = env
                .post(
                    client.path(),
                    &body(client, &model(vendor), json!(text), true),
                )
                .await;
            let answer = Answer::read(client, true, resp).await;
            let what = format!("{vendor} {client:?}");
            assert!(!answer.text.is_empty(), "{what}");
            let err = answer
                .error
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: no error event"));
            assert!(
                !err["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty(),
                "{what}: {err}"
            );
            assert!(!answer.clean_end, "{what}");
        }
    }
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_the_provider_stream() {
    let env = start(&[Vendor::Messages, Vendor::Completions], &[]).await;
    for (vendor, client) in [
        (Vendor::Messages, Client::Anthropic),
        (Vendor::Messages, Client::OpenAi),
        (Vendor::Completions, Client::OpenAi),
        (Vendor::Completions, Client::Anthropic),
    ] {
        let text = "x\nsim: text len=2000 chunk=5 interval=20";
        let mut resp = env
            .post(
                client.path(),
                &body(client, &model(vendor), json!(text), true),
            )
            .await;
        assert_eq!(resp.status(), 200);
        let _ = resp.chunk().await.unwrap();
        let before = env.sim.cancelled_vendor_streams(vendor);
        drop(resp);
        let sim = &env.sim;
        assert!(
            super::common::eventually(std::time::Duration::from_secs(5), || {
                sim.cancelled_vendor_streams(vendor) > before
            })
            .await,
            "{vendor} {client:?}: the provider stream was not cancelled"
        );
    }
}
