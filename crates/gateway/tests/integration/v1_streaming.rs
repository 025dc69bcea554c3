//! Streams under load and at the edges: a client that goes away cancels the
//! upstream request, 200 concurrent streams in both formats each get their
//! own whole answer, and multi-byte text passes through intact.

use std::time::Duration;

use serde_json::Value;
use upstream_sim::primary::content::{generate, Flavor};

use crate::common::*;

#[tokio::test]
async fn a_client_that_disconnects_cancels_the_upstream_stream() {
    let env = ProxyEnv::start(&[]).await;
    // 300 events 20 ms apart: six seconds if nobody stops it.
    let msg = "sim: text len=3000 chunk=10 interval=20ms";
    for (path, body) in [
        ("/v1/chat/completions", chat_body(msg, true)),
        ("/v1/messages", messages_body(msg, true)),
    ] {
        let cancelled = env.sim.cancelled_streams();
        let mut resp = env.post(path, &body).await;
        assert_eq!(resp.status(), 200);
        let mut got = 0;
        while got < 200 {
            got += resp
                .chunk()
                .await
                .unwrap()
                .expect("the stream goes on")
                .len();
        }
        assert_eq!(env.sim.in_flight_streams(), 1);
        drop(resp);
        let seen = eventually(Duration::from_secs(3), || {
            env.sim.cancelled_streams() > cancelled
        })
        .await;
        assert!(seen, "{path}: the upstream stream was not cancelled");
        assert!(eventually(Duration::from_secs(2), || env.sim.in_flight_streams() == 0).await);
    }
}

/// Run one streaming request and return its reassembled text.
async fn one_stream(http: &reqwest::Client, env: &ProxyEnv, i: usize) -> (usize, String) {
    let len = 50 + i;
    let msg = format!("sim: text len={len} chunk={}", 3 + i % 17);
    let (path, body) = if i.is_multiple_of(2) {
        ("/v1/chat/completions", chat_body(&msg, true))
    } else {
        ("/v1/messages", messages_body(&msg, true))
    };
    let resp = http
        .post(env.url(path))
        .bearer_auth(API_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    let text = if i.is_multiple_of(2) {
        let s = OpenAiStream::read(resp).await;
        assert!(s.done, "stream {i} ended without [DONE]");
        s.text()
    } else {
        let s = AnthropicStream::read(resp).await;
        assert_eq!(s.names().last(), Some(&"message_stop"), "stream {i}");
        s.text()
    };
    (len, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_streams_each_get_their_answer() {
    let env = std::sync::Arc::new(ProxyEnv::start(&[]).await);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let env = env.clone();
            let http = http.clone();
            tokio::spawn(async move { one_stream(&http, &env, i).await })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let (len, text) = task.await.unwrap();
        assert_eq!(text, generate(len, Flavor::Answer), "stream {i}");
    }
    assert_eq!(env.chat_requests().len(), 200);
    assert_eq!(env.sim.stream_stats().completed, 200);
}

#[tokio::test]
async fn unicode_and_emoji_pass_through_intact() {
    // Nothing is added to the prompt, so the echo is the message itself.
    let env = ProxyEnv::start(&[
        ("FAKE_REASONING_ENABLED", "false"),
        ("TRUNCATION_RECOVERY", "false"),
    ])
    .await;
    // `echo` answers the message itself in 3-character pieces, so multi-byte
    // characters and surrogate-pair emoji land on every kind of boundary.
    let msg = "sim: echo chunk=3\n日本語のテキスト — 🙂🚀👩‍💻 café naïve Ελληνικά русский 𝄞 \"quotes\" \\ back\tslash";
    let stream = OpenAiStream::read(
        env.post("/v1/chat/completions", &chat_body(msg, true))
            .await,
    )
    .await;
    assert_eq!(stream.text(), msg);
    let v: Value = env
        .post("/v1/chat/completions", &chat_body(msg, false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], msg);
    let stream =
        AnthropicStream::read(env.post("/v1/messages", &messages_body(msg, true)).await).await;
    assert_eq!(stream.text(), msg);
    let v: Value = env
        .post("/v1/messages", &messages_body(msg, false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["content"][0]["text"], msg);

    // Generated multi-byte text in one-character events.
    let stream = OpenAiStream::read(
        env.post(
            "/v1/chat/completions",
            &chat_body("sim: text len=180 chunk=1 unicode=true", true),
        )
        .await,
    )
    .await;
    assert_eq!(stream.text(), generate(180, Flavor::AnswerUnicode));
}
