//! Each scenario over HTTP, decoded with `wire::eventstream::Decoder`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use upstream_sim::{Fault, Scenario, SimConfig};
use wire::eventstream::EventStreamError;

use crate::common::*;

async fn run(content: &str) -> Decoded {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let resp = chat(&sim, &token, &chat_body(content)).await;
    assert_eq!(resp.status(), 200);
    decode(resp).await
}

#[tokio::test]
async fn default_answer_mentions_the_model_and_ends_with_usage() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let resp = chat(&sim, &token, &chat_body("Hello")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.amazon.eventstream"
    );
    assert!(resp.headers().contains_key("x-amzn-requestid"));
    let d = decode(resp).await;
    assert!(d.decode_error.is_none() && !d.transfer_failed);
    assert!(d.text().contains("claude-sonnet-4.5"), "{}", d.text());
    let types = d.types();
    assert_eq!(
        types[types.len() - 2..],
        ["meteringEvent", "contextUsageEvent"]
    );
    let metering = d.events("meteringEvent")[0];
    assert_eq!(metering["unit"], "credit");
    assert_eq!(metering["unitPlural"], "credits");
    assert!(metering["usage"].as_f64().unwrap() > 0.0);
    let pct = d.events("contextUsageEvent")[0]["contextUsagePercentage"]
        .as_f64()
        .unwrap();
    assert!(pct > 0.0 && pct < 100.0);
}

#[tokio::test]
async fn text_of_a_given_length_and_chunking() {
    let d = run("sim: scenario=text len=500 chunk=20\nTell me a story").await;
    let chunks = d.events("assistantResponseEvent");
    assert_eq!(chunks.len(), 25);
    assert!(chunks
        .iter()
        .all(|c| c["content"].as_str().unwrap().chars().count() == 20));
    assert_eq!(d.text().chars().count(), 500);

    let d = run("sim: text len=45 chunk=7 unicode=1").await;
    assert_eq!(d.text().chars().count(), 45);
    assert!(d.text().len() > 45, "multi-byte characters");
}

#[tokio::test]
async fn tools_with_input_split_over_fragments() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let body = chat_body_with_tools("sim: scenario=tools n=2 fragments=4\nRead both");
    let d = decode(chat(&sim, &token, &body).await).await;
    assert_eq!(d.text(), "Let me use the tools for that.");
    let calls = d.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "read_file");
    assert_eq!(calls[1].0, "list_dir");
    for (i, (_, input, stopped)) in calls.iter().enumerate() {
        let parsed: Value = serde_json::from_str(input).unwrap();
        assert_eq!(parsed, json!({"path": format!("path-{i}")}));
        assert!(stopped);
    }
    // Per call: an opening frame without input, 4 fragments, a stop frame.
    let frames = d.events("toolUseEvent");
    assert_eq!(frames.len(), 12);
    assert!(frames[0].get("input").is_none());
    assert!(frames[1..5].iter().all(|f| f["input"].is_string()));
    assert_eq!(frames[5]["stop"], true);
    assert_eq!(frames[1]["name"], "read_file", "name repeated on fragments");
    assert_eq!(frames[1]["toolUseId"], frames[0]["toolUseId"]);
}

#[tokio::test]
async fn thinking_text_and_native_reasoning() {
    let d = run("sim: thinking thinking_len=50 len=30 chunk=8").await;
    let text = d.text();
    assert!(text.starts_with("<thinking>"));
    let (thought, answer) = text.split_once("</thinking>\n\n").unwrap();
    assert_eq!(thought.chars().count(), 10 + 50);
    assert_eq!(answer.chars().count(), 30);

    let d = run("sim: reasoning thinking_len=50 len=30 chunk=10").await;
    let reasoning = d.events("reasoningContentEvent");
    let text: String = reasoning
        .iter()
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert_eq!(text.chars().count(), 50);
    assert!(reasoning.iter().any(|r| r["signature"].is_string()));
    assert_eq!(d.types()[0], "reasoningContentEvent");
    assert_eq!(d.text().chars().count(), 30);
}

#[tokio::test]
async fn echo_returns_what_arrived() {
    let content = "sim: echo chunk=5\nÜnïcode and \"quotes\"\nsecond line";
    let d = run(content).await;
    assert_eq!(d.text(), content);
}

#[tokio::test]
async fn metadata_event_with_token_usage() {
    let d = run("sim: text len=40 metadata=1").await;
    let meta = d.events("metadataEvent");
    assert_eq!(meta.len(), 1);
    let usage = &meta[0]["tokenUsage"];
    assert_eq!(usage["outputTokens"], 10);
    assert_eq!(
        usage["totalTokens"].as_u64().unwrap(),
        usage["outputTokens"].as_u64().unwrap() + usage["uncachedInputTokens"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn truncated_streams() {
    let d = run("sim: text len=60 truncate=1").await;
    assert_eq!(d.text().chars().count(), 60);
    assert!(d.events("meteringEvent").is_empty());
    assert!(d.events("contextUsageEvent").is_empty());
    assert!(
        d.decode_error.is_none() && !d.transfer_failed,
        "a clean end of a short answer"
    );

    let d = run("sim: tools n=2 fragments=4 truncate=1").await;
    let calls = d.tool_calls();
    assert!(calls[0].2);
    assert!(!calls[1].2, "the last call never stops");
    assert!(
        serde_json::from_str::<Value>(&calls[1].1).is_err(),
        "input cut"
    );
    assert!(d.events("meteringEvent").is_empty());
}

#[tokio::test]
async fn status_once_then_success_counts_per_key() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let body = chat_body("sim: scenario=status code=429 times=1 retry_after=1\nhi");
    let resp = chat(&sim, &token, &body).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "1");
    let (_, kind, err) = error_of(resp).await;
    assert_eq!(kind.as_deref(), Some("ThrottlingException"));
    assert!(err["message"].is_string());
    // The retry of the same request succeeds.
    assert_eq!(chat(&sim, &token, &body).await.status(), 200);

    // Always (no times), without Retry-After.
    let always = chat_body("sim: status code=429");
    for _ in 0..2 {
        let resp = chat(&sim, &token, &always).await;
        assert_eq!(resp.status(), 429);
        assert!(!resp.headers().contains_key("retry-after"));
    }

    // 5xx once, 403 once (the real bad-token body), each under its own key.
    let five = chat_body("sim: status code=503 times=1\nsim: text len=5");
    let (status, kind, _) = error_of(chat(&sim, &token, &five).await).await;
    assert_eq!(
        (status, kind.as_deref()),
        (503, Some("ServiceUnavailableException"))
    );
    assert_eq!(
        decode(chat(&sim, &token, &five).await).await.text(),
        "The u"
    );

    let forbidden = chat_body("sim: status code=403 times=1");
    let (status, _, err) = error_of(chat(&sim, &token, &forbidden).await).await;
    assert_eq!(status, 403);
    assert_eq!(
        err,
        json!({"message": "The bearer token included in the request is invalid."})
    );
    assert_eq!(chat(&sim, &token, &forbidden).await.status(), 200);

    // 500 carries the overload reason.
    let (status, _, err) =
        error_of(chat(&sim, &token, &chat_body("sim: status code=500")).await).await;
    assert_eq!(status, 500);
    assert_eq!(err["reason"], "MODEL_TEMPORARILY_UNAVAILABLE");
}

#[tokio::test]
async fn status_403_with_revoke_needs_a_fresh_token() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let body = chat_body("sim: status code=403 times=1 revoke=1");
    assert_eq!(chat(&sim, &token, &body).await.status(), 403);
    assert_eq!(
        chat(&sim, &token, &body).await.status(),
        403,
        "old token revoked"
    );
    let fresh = sim.issue_access_token();
    assert_eq!(chat(&sim, &fresh, &body).await.status(), 200);
}

#[tokio::test]
async fn slow_first_event_and_slow_headers() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let started = Instant::now();
    let mut resp = chat(&sim, &token, &chat_body("sim: text len=10 delay=300")).await;
    let headers_at = started.elapsed();
    assert_eq!(resp.status(), 200);
    let _first = resp.chunk().await.unwrap().unwrap();
    let first_at = started.elapsed();
    assert!(headers_at < Duration::from_millis(250), "{headers_at:?}");
    assert!(first_at >= Duration::from_millis(300), "{first_at:?}");

    let started = Instant::now();
    let resp = chat(
        &sim,
        &token,
        &chat_body("sim: text len=10 header_delay=300"),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(decode(resp).await.text().chars().count(), 10);
}

#[tokio::test]
async fn disconnect_mid_stream() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let resp = chat(
        &sim,
        &token,
        &chat_body("sim: text len=100 chunk=10 disconnect_after=3"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let d = decode(resp).await;
    assert!(d.transfer_failed, "the connection is cut, not ended");
    assert_eq!(d.events("assistantResponseEvent").len(), 3);
    assert!(eventually(|| sim.stream_stats().aborted == 1).await);
    assert_eq!(sim.cancelled_streams(), 0);
}

#[tokio::test]
async fn corrupt_frame_fails_the_crc() {
    let d = run("sim: text len=100 chunk=10 corrupt_at=2").await;
    assert_eq!(d.frames.len(), 2);
    assert!(matches!(
        d.decode_error,
        Some(EventStreamError::MessageCrc { .. })
    ));
}

#[tokio::test]
async fn exception_and_error_frames_mid_stream() {
    let d = run("sim: text len=100 chunk=10 exception_after=2 exception=throttlingException").await;
    assert_eq!(d.frames.len(), 3);
    match &d.frames[2] {
        Frame::Exception(t, payload) => {
            assert_eq!(t, "throttlingException");
            assert!(payload["message"].is_string());
        }
        other => panic!("{other:?}"),
    }
    let d = run("sim: text error_after=1 error_code=InternalFailure").await;
    assert!(matches!(&d.frames[1], Frame::Error(code, _) if code == "InternalFailure"));
    assert_eq!(d.frames.len(), 2);
}

#[tokio::test]
async fn programmatic_scenarios_and_default() {
    let sim = sim_with(SimConfig {
        default_scenario: Some("text len=12 chunk=4".parse().unwrap()),
        ..SimConfig::default()
    })
    .await;
    let token = sim.issue_access_token();
    sim.push_scenario(Scenario::status(500).with_times(1));
    sim.push_scenario(Scenario::echo());
    sim.push_scenario(Scenario::text(30, 10).with_fault(Fault::CorruptCrc { at: 0 }));
    let body = chat_body("sim: tools\nplain");
    assert_eq!(chat(&sim, &token, &body).await.status(), 500);
    assert_eq!(
        decode(chat(&sim, &token, &body).await).await.text(),
        "sim: tools\nplain"
    );
    assert!(decode(chat(&sim, &token, &body).await)
        .await
        .decode_error
        .is_some());
    // Queue empty: the directive, then the configured default.
    assert_eq!(
        decode(chat(&sim, &token, &body).await)
            .await
            .tool_calls()
            .len(),
        1
    );
    let d = decode(chat(&sim, &token, &chat_body("plain")).await).await;
    assert_eq!(d.events("assistantResponseEvent").len(), 3);
    sim.set_default_scenario(None);
    let d = decode(chat(&sim, &token, &chat_body("plain")).await).await;
    assert!(d.text().contains("claude-sonnet-4.5"));
}

#[tokio::test]
async fn client_disconnect_cancels_the_stream() {
    let sim = sim().await;
    let token = sim.issue_access_token();
    let mut resp = chat(
        &sim,
        &token,
        &chat_body("sim: text len=200 chunk=10 interval=100"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert!(resp.chunk().await.unwrap().is_some());
    assert_eq!(sim.in_flight_streams(), 1);
    drop(resp);
    assert!(
        eventually(|| sim.cancelled_streams() == 1).await,
        "{:?}",
        sim.stream_stats()
    );
    assert_eq!(sim.in_flight_streams(), 0);

    // A stream read to its end is completed, not cancelled.
    let resp = chat(
        &sim,
        &token,
        &chat_body("sim: text len=20 chunk=10 interval=10"),
    )
    .await;
    decode(resp).await;
    assert!(eventually(|| sim.stream_stats().completed == 1).await);
    assert_eq!(sim.cancelled_streams(), 1);
}
