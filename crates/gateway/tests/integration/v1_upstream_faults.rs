//! Upstream faults seen from a client: retried statuses, forwarded 429s, the
//! 403 refresh-and-retry, a slow first event, exception frames before and
//! after content, corrupt frames and cut connections, and truncation recovery
//! (interfaces.md section 4: before the first byte a plain HTTP error, after
//! it an error event in the client's format).

use serde_json::Value;
use upstream_sim::primary::content::{generate, Flavor};
use upstream_sim::primary::events::default_answer_text;
use upstream_sim::Service;

use crate::common::*;

const CHAT: &str = "/v1/chat/completions";
const MESSAGES: &str = "/v1/messages";

async fn json_of(resp: reqwest::Response) -> Value {
    resp.json().await.unwrap()
}

fn text_of_openai(v: &Value) -> &str {
    v["choices"][0]["message"]["content"].as_str().unwrap()
}

#[tokio::test]
async fn a_429_once_is_retried() {
    let env = ProxyEnv::start(&[]).await;
    let msg = "sim: status code=429 times=1\nsim: text len=40";
    let v = json_of(env.post(CHAT, &chat_body(msg, false)).await).await;
    assert_eq!(text_of_openai(&v), generate(40, Flavor::Answer));
    assert_eq!(env.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_429_that_persists_reaches_the_client() {
    let env = ProxyEnv::start(&[("HTTP_MAX_RETRIES", "2")]).await;
    // No Retry-After: retried twice, then forwarded.
    let resp = env
        .post(CHAT, &chat_body("sim: status code=429", true))
        .await;
    assert_eq!(resp.status(), 429);
    assert!(resp.headers().get("retry-after").is_none());
    let v = json_of(resp).await;
    assert_eq!(v["error"]["type"], "upstream_api_error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Too many requests"),
        "{v}"
    );
    assert_eq!(env.chat_requests().len(), 3);

    // A Retry-After beyond what the gateway waits: forwarded at once, with the header.
    env.sim.clear();
    let resp = env
        .post(
            MESSAGES,
            &messages_body("sim: status code=429 retry_after=120", false),
        )
        .await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "120");
    assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    assert_eq!(env.chat_requests().len(), 1);

    // A short Retry-After is waited for; when the retries are spent it is forwarded.
    env.sim.clear();
    let started = std::time::Instant::now();
    let mut body = chat_body("sim: status code=429 retry_after=1 key=short", false);
    body["max_tokens"] = serde_json::json!(100);
    let resp = env.post(CHAT, &body).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert_eq!(env.chat_requests().len(), 3);
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "Retry-After honoured"
    );
}

#[tokio::test]
async fn a_5xx_once_is_retried_and_other_4xx_are_not() {
    let env = ProxyEnv::start(&[]).await;
    for code in [500, 503] {
        env.sim.clear();
        let msg = format!("sim: status code={code} times=1\nsim: text len=25");
        let stream = OpenAiStream::read(env.post(CHAT, &chat_body(&msg, true)).await).await;
        assert!(stream.done);
        assert_eq!(stream.text(), generate(25, Flavor::Answer));
        assert_eq!(env.chat_requests().len(), 2, "{code}");
    }
    env.sim.clear();
    let resp = env
        .post(
            CHAT,
            &chat_body("sim: status code=400 reason=INVALID_MODEL_ID", false),
        )
        .await;
    assert_eq!(resp.status(), 400);
    assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    assert_eq!(env.chat_requests().len(), 1, "a 400 is not retried");

    env.sim.clear();
    let resp = env
        .post(
            CHAT,
            &chat_body("sim: status code=429 reason=MONTHLY_REQUEST_COUNT", false),
        )
        .await;
    assert_eq!(resp.status(), 429);
    let v = json_of(resp).await;
    assert_eq!(v["error"]["type"], "upstream_api_error");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("limit"),
        "{v}"
    );
    assert_eq!(env.chat_requests().len(), 1, "a quota 429 is not retried");
}

#[tokio::test]
async fn a_403_refreshes_the_token_and_retries_once() {
    let env = ProxyEnv::start(&[]).await;
    // Let the start-up refresh settle, then count refreshes from here.
    let v = json_of(env.post(CHAT, &chat_body("warm up", false)).await).await;
    assert_eq!(v["object"], "chat.completion");
    let refreshes = || {
        env.sim
            .requests()
            .iter()
            .filter(|r| r.service == Service::Oidc && r.path.ends_with("/token"))
            .count()
    };
    let before = refreshes();
    env.sim.clear();
    let msg = "sim: status code=403 revoke=true times=1\nsim: text len=33";
    let v = json_of(env.post(MESSAGES, &messages_body(msg, false)).await).await;
    assert_eq!(v["content"][0]["text"], generate(33, Flavor::Answer), "{v}");
    let chats = env.sim.requests_to("/generateAssistantResponse");
    assert_eq!(chats.len(), 2);
    assert_ne!(
        chats[0].header("authorization"),
        chats[1].header("authorization"),
        "the retry carries the refreshed token"
    );
    let after: usize = env
        .sim
        .requests()
        .iter()
        .filter(|r| r.service == Service::Oidc && r.path.ends_with("/token"))
        .count();
    assert_eq!(after, 1, "one refresh grant (before: {before})");

    // A 403 that persists is not retried a second time.
    env.sim.clear();
    let resp = env
        .post(CHAT, &chat_body("sim: status code=403 revoke=true", false))
        .await;
    assert_eq!(resp.status(), 403);
    assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    assert_eq!(env.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_slow_first_event_or_slow_headers_are_retried() {
    let env = ProxyEnv::start(&[("FIRST_TOKEN_TIMEOUT", "400ms")]).await;
    let msg = "sim: text len=20 delay=1500ms times=1\nsim: text len=21";
    let v = json_of(env.post(CHAT, &chat_body(msg, false)).await).await;
    assert_eq!(text_of_openai(&v), generate(21, Flavor::Answer));
    assert_eq!(env.chat_requests().len(), 2);

    env.sim.clear();
    let msg = "sim: text len=20 header_delay=1500ms times=1\nsim: text len=22";
    let stream = AnthropicStream::read(env.post(MESSAGES, &messages_body(msg, true)).await).await;
    assert_eq!(stream.text(), generate(22, Flavor::Answer));
    assert_eq!(env.chat_requests().len(), 2);

    // Always slow: a gateway timeout once the retries are spent.
    env.sim.clear();
    let resp = env
        .post(CHAT, &chat_body("sim: text len=20 delay=1500ms", true))
        .await;
    assert_eq!(resp.status(), 504);
    assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    assert_eq!(env.chat_requests().len(), 4);
}

#[tokio::test]
async fn an_exception_before_content_is_a_plain_http_error() {
    let env = ProxyEnv::start(&[]).await;
    for stream in [false, true] {
        let resp = env
            .post(CHAT, &chat_body("sim: text exception_after=0", stream))
            .await;
        assert_eq!(resp.status(), 500, "stream={stream}");
        assert!(resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"));
        let v = json_of(resp).await;
        assert_eq!(v["error"]["type"], "upstream_api_error");
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("internalServerException"));

        let msg = "sim: text exception_after=0 exception=throttlingException";
        let resp = env.post(MESSAGES, &messages_body(msg, stream)).await;
        assert_eq!(resp.status(), 429, "stream={stream}");
        assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    }
}

/// The faults that break a stream after some content with an error. (A
/// dropped connection is recovered instead: see
/// `a_connection_dropped_mid_answer_is_recovered`.)
const MID_STREAM_FAULTS: [(&str, u16); 4] = [
    ("exception_after=3", 500),
    ("exception_after=3 exception=throttlingException", 429),
    ("error_after=3", 500),
    ("corrupt_at=3", 502),
];

#[tokio::test]
async fn a_fault_after_content_ends_an_openai_stream_with_an_error_chunk() {
    let env = ProxyEnv::start(&[]).await;
    for (fault, _) in MID_STREAM_FAULTS {
        let msg = format!("sim: text len=100 chunk=10 {fault}");
        let stream = OpenAiStream::read(env.post(CHAT, &chat_body(&msg, true)).await).await;
        assert!(!stream.done, "{fault}: no [DONE] after an error");
        let err = stream
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{fault}: no error chunk"));
        assert_eq!(err["error"]["type"], "upstream_api_error", "{fault}");
        assert!(err["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        assert_eq!(stream.text(), generate(30, Flavor::Answer), "{fault}");
        assert!(
            stream
                .choice_chunks()
                .iter()
                .all(|c| c["choices"][0]["finish_reason"].is_null()),
            "{fault}: no finish chunk"
        );
    }
}

#[tokio::test]
async fn a_fault_after_content_ends_a_messages_stream_with_an_error_event() {
    let env = ProxyEnv::start(&[]).await;
    for (fault, _) in MID_STREAM_FAULTS {
        let msg = format!("sim: text len=100 chunk=10 {fault}");
        let stream =
            AnthropicStream::read(env.post(MESSAGES, &messages_body(&msg, true)).await).await;
        let names = stream.names();
        assert_eq!(names.first(), Some(&"message_start"), "{fault}");
        assert_eq!(names.last(), Some(&"error"), "{fault}: {names:?}");
        assert!(!names.contains(&"message_stop"), "{fault}");
        let err = stream.all("error")[0];
        assert_eq!(err["error"]["type"], "upstream_api_error");
        assert!(err["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        assert_eq!(stream.text(), generate(30, Flavor::Answer), "{fault}");
    }
}

#[tokio::test]
async fn a_stalled_stream_ends_with_an_error_event() {
    // The first event comes at once, the next only after the read timeout.
    let env = ProxyEnv::start(&[("HTTP_REQUEST_TIMEOUT", "500ms")]).await;
    let msg = "sim: text len=40 chunk=10 interval=1500ms";
    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(!stream.done);
    assert_eq!(
        stream.error.as_ref().unwrap()["error"]["type"],
        "upstream_api_error"
    );
    assert_eq!(stream.text(), generate(10, Flavor::Answer));
    assert!(
        eventually(std::time::Duration::from_secs(2), || env
            .sim
            .cancelled_streams()
            == 1)
        .await
    );
}

#[tokio::test]
async fn a_fault_after_content_is_a_json_error_when_not_streaming() {
    let env = ProxyEnv::start(&[]).await;
    for (fault, status) in MID_STREAM_FAULTS {
        let msg = format!("sim: text len=100 chunk=10 {fault}");
        let resp = env.post(CHAT, &chat_body(&msg, false)).await;
        assert_eq!(resp.status(), status, "{fault}");
        assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
        let resp = env.post(MESSAGES, &messages_body(&msg, false)).await;
        assert_eq!(resp.status(), status, "{fault}");
        assert_eq!(json_of(resp).await["error"]["type"], "upstream_api_error");
    }
}

/// The recovery request: the partial answer as the last assistant turn and
/// the notice as the current message.
fn assert_recovery_request(sent: &[Value], partial: &str) {
    assert_eq!(sent.len(), 2, "one recovery request");
    let state = &sent[1]["conversationState"];
    let history = state["history"].as_array().unwrap();
    let last = &history.last().unwrap()["assistantResponseMessage"];
    assert_eq!(last["content"], partial);
    let current = state["currentMessage"]["userInputMessage"]["content"]
        .as_str()
        .unwrap();
    assert!(current.contains("[System Notice]"), "{current}");
    let first_user = &history[0]["userInputMessage"]["content"];
    assert!(first_user.as_str().unwrap().contains("truncate=1"));
}

#[tokio::test]
async fn truncated_text_is_recovered_in_both_formats() {
    let env = ProxyEnv::start(&[]).await;
    let msg = "sim: text len=90 chunk=10 truncate=1";
    let partial = generate(90, Flavor::Answer);
    let whole = format!("{partial}{}", default_answer_text("claude-sonnet-4.5"));

    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(stream.done);
    assert_eq!(stream.text(), whole);
    assert_eq!(
        stream
            .choice_chunks()
            .iter()
            .filter(|c| c["choices"][0]["delta"]["role"].is_string())
            .count(),
        1,
        "one answer: one role chunk"
    );
    let finishes: Vec<_> = stream
        .choice_chunks()
        .iter()
        .filter_map(|c| c["choices"][0]["finish_reason"].as_str())
        .map(str::to_owned)
        .collect();
    assert_eq!(finishes, ["stop"]);
    assert_recovery_request(&env.chat_requests(), &partial);

    env.sim.clear();
    let v = json_of(env.post(CHAT, &chat_body(msg, false)).await).await;
    assert_eq!(text_of_openai(&v), whole);
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_recovery_request(&env.chat_requests(), &partial);

    env.sim.clear();
    let stream = AnthropicStream::read(env.post(MESSAGES, &messages_body(msg, true)).await).await;
    assert_eq!(stream.text(), whole);
    let names = stream.names();
    assert_eq!(names.iter().filter(|n| **n == "message_start").count(), 1);
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "content_block_start")
            .count(),
        1
    );
    assert_eq!(names.last(), Some(&"message_stop"));
    assert_eq!(
        stream.all("message_delta")[0]["delta"]["stop_reason"],
        "end_turn"
    );
    assert_recovery_request(&env.chat_requests(), &partial);

    env.sim.clear();
    let v = json_of(env.post(MESSAGES, &messages_body(msg, false)).await).await;
    assert_eq!(v["content"].as_array().unwrap().len(), 1);
    assert_eq!(v["content"][0]["text"], whole.as_str());
    assert_eq!(v["stop_reason"], "end_turn");
    assert_recovery_request(&env.chat_requests(), &partial);
}

#[tokio::test]
async fn truncated_thinking_is_recovered() {
    let env = ProxyEnv::start(&[]).await;
    let msg = "sim: thinking thinking_len=60 len=40 truncate=1";
    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(stream.done);
    assert_eq!(stream.reasoning(), generate(60, Flavor::Thought));
    assert_eq!(
        stream.text(),
        format!(
            "{}{}",
            generate(40, Flavor::Answer),
            default_answer_text("claude-sonnet-4.5")
        )
    );
    let sent = env.chat_requests();
    assert_eq!(sent.len(), 2);
    let history = sent[1]["conversationState"]["history"].as_array().unwrap();
    let partial = history.last().unwrap()["assistantResponseMessage"]["content"]
        .as_str()
        .unwrap();
    assert!(partial.contains(&generate(40, Flavor::Answer)), "{partial}");
}

#[tokio::test]
async fn a_failed_recovery_keeps_the_partial_answer() {
    let env = ProxyEnv::start(&[]).await;
    // The recovery request names no scenario: it gets the default, a 400.
    env.sim
        .set_default_scenario(Some(upstream_sim::Scenario::status(400)));
    let msg = "sim: text len=70 chunk=10 truncate=1";
    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(stream.done && stream.error.is_none());
    assert_eq!(stream.text(), generate(70, Flavor::Answer));
    let finish = stream.choice_chunks().last().unwrap()["choices"][0].clone();
    assert_eq!(finish["finish_reason"], "length");
    let v = json_of(env.post(MESSAGES, &messages_body(msg, false)).await).await;
    assert_eq!(v["content"][0]["text"], generate(70, Flavor::Answer));
    assert_eq!(v["stop_reason"], "max_tokens");
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(env.chat_requests().len(), 4);
}

#[tokio::test]
async fn without_truncation_recovery_no_second_request() {
    let env = ProxyEnv::start(&[("TRUNCATION_RECOVERY", "false")]).await;
    let msg = "sim: text len=90 chunk=10 truncate=1";
    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(stream.done);
    assert_eq!(stream.text(), generate(90, Flavor::Answer));
    let finish = stream.choice_chunks().last().unwrap()["choices"][0].clone();
    assert_eq!(finish["finish_reason"], "length");
    let v = json_of(env.post(MESSAGES, &messages_body(msg, false)).await).await;
    assert_eq!(v["content"][0]["text"], generate(90, Flavor::Answer));
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(
        env.chat_requests().len(),
        2,
        "one upstream request per client request"
    );
    // The notice never went upstream.
    for body in env.chat_requests() {
        assert!(!body.to_string().contains("[System Notice]"));
    }
}

/// The `(toolUseId, text)` of each tool result of a recovery request.
fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"]
        ["toolResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["status"], "error");
            (
                r["toolUseId"].as_str().unwrap().to_owned(),
                r["content"][0]["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_truncated_tool_call_is_recovered_and_no_call_reaches_the_client() {
    let env = ProxyEnv::start(&[]).await;
    let tools = serde_json::json!([
        {"type": "function", "function": {"name": "write_file", "description": "Write a file",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}}}
    ]);
    let continuation = default_answer_text("claude-sonnet-4.5");
    let expected_text = format!(
        "{}{continuation}",
        upstream_sim::primary::events::TOOLS_PREAMBLE
    );
    for stream in [true, false] {
        env.sim.clear();
        let mut body = chat_body("sim: tools n=2 fragments=4 truncate=1", stream);
        body["tools"] = tools.clone();
        let resp = env.post(CHAT, &body).await;
        if stream {
            let s = OpenAiStream::read(resp).await;
            assert!(s.done && s.error.is_none());
            // The complete first call is withheld too: the model is told it was
            // not executed, so the client must not run it.
            assert!(
                s.choice_chunks()
                    .iter()
                    .all(|c| c["choices"][0]["delta"].get("tool_calls").is_none()),
                "{:#?}",
                s.chunks
            );
            assert_eq!(s.text(), expected_text);
            let finish: Vec<_> = s
                .choice_chunks()
                .iter()
                .filter_map(|c| c["choices"][0]["finish_reason"].as_str().map(str::to_owned))
                .collect();
            assert_eq!(finish, ["stop"]);
        } else {
            let v = json_of(resp).await;
            let message = &v["choices"][0]["message"];
            assert_eq!(message["content"], expected_text.as_str());
            assert!(
                message
                    .get("tool_calls")
                    .is_none_or(|t| t.as_array().unwrap().is_empty()),
                "{v}"
            );
            assert_eq!(v["choices"][0]["finish_reason"], "stop");
        }

        let sent = env.chat_requests();
        assert_eq!(sent.len(), 2, "one recovery request");
        let history = sent[1]["conversationState"]["history"].as_array().unwrap();
        let uses = history.last().unwrap()["assistantResponseMessage"]["toolUses"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(uses.len(), 2, "both calls are in the recovery history");
        assert_eq!(
            uses[0]["input"],
            serde_json::json!({"path": "path-0", "text": "text-0"})
        );
        let results = tool_results(&sent[1]);
        let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            [
                uses[0]["toolUseId"].as_str().unwrap(),
                uses[1]["toolUseId"].as_str().unwrap()
            ]
        );
        assert!(
            results[0]
                .1
                .starts_with("[API Limitation] This call was not executed"),
            "{}",
            results[0].1
        );
        assert!(
            results[1]
                .1
                .starts_with("[API Limitation] Your call to the tool `write_file` was cut off"),
            "{}",
            results[1].1
        );
    }
}

#[tokio::test]
async fn complete_tool_calls_are_released_before_the_finish() {
    // With recovery on, calls are held to the end of the stream; they must
    // still come before the finish chunk / message_delta and in order.
    let env = ProxyEnv::start(&[]).await;
    let stream = OpenAiStream::read(
        env.post(
            CHAT,
            &chat_body("sim: tools n=3 fragments=2 duplicate=true", true),
        )
        .await,
    )
    .await;
    assert!(stream.done);
    let mut names = Vec::new();
    let mut saw_finish = false;
    for c in stream.choice_chunks() {
        let choice = &c["choices"][0];
        if let Some(calls) = choice["delta"]["tool_calls"].as_array() {
            assert!(!saw_finish, "a tool call after the finish chunk");
            for d in calls {
                if let Some(name) = d["function"]["name"].as_str() {
                    assert_eq!(d["index"], names.len());
                    names.push(name.to_owned());
                }
            }
        }
        saw_finish |= choice["finish_reason"].is_string();
    }
    assert_eq!(names, ["sim_tool_0", "sim_tool_1", "sim_tool_2"]);
    assert_eq!(
        stream.choice_chunks().last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

/// A connection that drops mid-answer (the body ends without its chunked
/// terminator) cut the answer short, like one that ends without its
/// completion signal: with truncation recovery on, the gateway asks for the
/// rest and the client gets one whole answer (issue 19). Without recovery
/// it is an explicit error.
#[tokio::test]
async fn a_connection_dropped_mid_answer_is_recovered() {
    let env = ProxyEnv::start(&[]).await;
    let msg = "sim: text len=100 chunk=10 disconnect_after=3";
    let partial = generate(30, Flavor::Answer);
    let whole = format!("{partial}{}", default_answer_text("claude-sonnet-4.5"));

    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(stream.done && stream.error.is_none());
    assert_eq!(stream.text(), whole);
    let sent = env.chat_requests();
    assert_eq!(sent.len(), 2, "one recovery request");
    let current = sent[1]["conversationState"]["currentMessage"]["userInputMessage"]["content"]
        .as_str()
        .unwrap();
    assert!(current.contains("[System Notice]"), "{current}");

    env.sim.clear();
    let v = json_of(env.post(CHAT, &chat_body(msg, false)).await).await;
    assert_eq!(text_of_openai(&v), whole);

    env.sim.clear();
    let stream = AnthropicStream::read(env.post(MESSAGES, &messages_body(msg, true)).await).await;
    assert_eq!(stream.text(), whole);
    assert!(stream.names().contains(&"message_stop"));

    env.sim.clear();
    let v = json_of(env.post(MESSAGES, &messages_body(msg, false)).await).await;
    assert_eq!(v["content"][0]["text"], whole);

    let env = ProxyEnv::start(&[("TRUNCATION_RECOVERY", "false")]).await;
    let stream = OpenAiStream::read(env.post(CHAT, &chat_body(msg, true)).await).await;
    assert!(!stream.done);
    assert_eq!(stream.text(), partial);
    assert_eq!(
        stream.error.as_ref().unwrap()["error"]["type"],
        "upstream_api_error"
    );
    assert_eq!(env.chat_requests().len(), 1);
    let resp = env.post(MESSAGES, &messages_body(msg, false)).await;
    assert_eq!(resp.status(), 502);
}
