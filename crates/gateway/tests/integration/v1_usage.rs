//! Usage figures through `primary` in both client formats: a long answer to
//! a short prompt still reports the prompt's tokens (the figure derived from
//! the upstream's context share would be 0; the gateway's estimate stands).

use crate::common::*;

const CHAT: &str = "/v1/chat/completions";
const MESSAGES: &str = "/v1/messages";

/// A short prompt asking for a long answer (the simulator's context share is
/// computed from the prompt only, so share x window - output is below 0).
const LONG_ANSWER: &str = "sim: text len=6000 chunk=200";

#[tokio::test]
async fn a_long_answer_never_reports_zero_prompt_tokens() {
    let env = ProxyEnv::start(&[]).await;

    let v = env
        .post(CHAT, &chat_body(LONG_ANSWER, false))
        .await
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let prompt = v["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(prompt > 0, "chat completions: {}", v["usage"]);
    assert!(v["usage"]["completion_tokens"].as_u64().unwrap() > 1000);

    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(LONG_ANSWER, true)).await).await;
    let usage = stream
        .chunks
        .iter()
        .find_map(|c| c.get("usage").filter(|u| !u.is_null()))
        .unwrap();
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0, "{usage}");

    let v = env
        .post(MESSAGES, &messages_body(LONG_ANSWER, false))
        .await
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert!(
        v["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{}",
        v["usage"]
    );

    let stream =
        AnthropicStream::read(env.post(MESSAGES, &messages_body(LONG_ANSWER, true)).await).await;
    let start = stream.all("message_start")[0];
    assert!(
        start["message"]["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{start}"
    );
    let delta = stream.all("message_delta")[0];
    let input = delta["usage"]["input_tokens"].as_u64();
    assert!(input.is_none_or(|n| n > 0), "{delta}");
}
