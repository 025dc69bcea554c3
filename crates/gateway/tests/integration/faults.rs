//! Injected upstream faults (issue 19): every fault of the fault proxy
//! between the gateway and the simulator, for `primary` and for a direct
//! provider of each format (`custom`: chat completions, `messages_vendor`:
//! messages), both client formats, streamed and whole. Each test asserts the
//! outcome fixed in docs/reliability.md ("Faults and what a client sees"):
//! a recovered answer, a retried answer, a clear error before the first
//! byte, or an explicit error event after it; never a clean end for a
//! broken answer. The last test checks that no usage record is lost or
//! doubled.

use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::fault_proxy::{Fault, FaultProxy};

const CHAT: &str = "/v1/chat/completions";
const MESSAGES: &str = "/v1/messages";
/// 200 characters in events of 20: ten content units.
const ANSWER: &str = "sim: text len=200 chunk=20";
/// Timeouts short enough for stalls to show within a test.
const TIMEOUTS: [(&str, &str); 2] = [
    ("FIRST_TOKEN_TIMEOUT", "1s"),
    ("HTTP_REQUEST_TIMEOUT", "2s"),
];

/// The four ways a client asks.
const ASKS: [(&str, bool); 4] = [
    (CHAT, false),
    (CHAT, true),
    (MESSAGES, false),
    (MESSAGES, true),
];

/// A proxy-mode gateway whose `primary` calls go through a fault proxy.
async fn primary_env() -> (ProxyEnv, FaultProxy) {
    let sim = start_sim().await;
    let proxy = FaultProxy::start(&sim.base_url()).await;
    let url = proxy.url();
    let mut env: Vec<(&str, &str)> = vec![("UPSTREAM_API_ENDPOINT", &url)];
    env.extend_from_slice(&TIMEOUTS);
    ready(ProxyEnv::start_with_sim(sim, &env).await, proxy).await
}

/// Wait until the gateway serves (its start-up calls, such as the model
/// listing, have gone through the proxy), then forget what they took.
async fn ready(env: ProxyEnv, proxy: FaultProxy) -> (ProxyEnv, FaultProxy) {
    let health = client().get(env.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    proxy.clear();
    (env, proxy)
}

/// A proxy-mode gateway whose `custom` and `messages_vendor` calls go
/// through a fault proxy.
async fn vendor_env() -> (ProxyEnv, FaultProxy) {
    let sim = start_sim().await;
    let proxy = FaultProxy::start(&sim.base_url()).await;
    let custom = format!("{}/custom/v1", proxy.url());
    let messages = format!("{}/messages_vendor", proxy.url());
    let key = sim.messages_vendor_api_key();
    let custom_key = sim.custom_api_key();
    let mut env: Vec<(&str, &str)> = vec![
        ("CUSTOM_BASE_URL", &custom),
        ("MESSAGES_VENDOR_BASE_URL", &messages),
        ("MESSAGES_VENDOR_API_KEY", &key),
    ];
    if let Some(k) = custom_key.as_deref() {
        env.push(("CUSTOM_API_KEY", k));
    }
    env.extend_from_slice(&TIMEOUTS);
    ready(ProxyEnv::start_with_sim(sim, &env).await, proxy).await
}

/// What a client saw.
#[derive(Debug)]
enum Seen {
    /// A plain HTTP answer: status, body.
    Plain(u16, Value),
    /// A stream: its text, whether it ended properly, its error event.
    Stream {
        text: String,
        complete: bool,
        error: Option<Value>,
    },
}

impl Seen {
    /// The answer text of a successful plain answer, in either format.
    fn answer_text(&self) -> Option<String> {
        match self {
            Seen::Plain(200, v) => Some(
                v["choices"][0]["message"]["content"]
                    .as_str()
                    .or_else(|| v["content"][0]["text"].as_str())
                    .unwrap_or_default()
                    .to_owned(),
            ),
            _ => None,
        }
    }
}

async fn ask(env: &ProxyEnv, model: &str, path: &str, stream: bool) -> Seen {
    let mut body = if path == CHAT {
        chat_body(ANSWER, stream)
    } else {
        messages_body(ANSWER, stream)
    };
    body["model"] = Value::String(model.to_owned());
    let resp = env.post(path, &body).await;
    let status = resp.status().as_u16();
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"));
    if !sse {
        return Seen::Plain(status, resp.json().await.unwrap_or(Value::Null));
    }
    if path == CHAT {
        let s = OpenAiStream::read(resp).await;
        Seen::Stream {
            text: s.text(),
            complete: s.done,
            error: s.error.clone(),
        }
    } else {
        let s = AnthropicStream::read(resp).await;
        Seen::Stream {
            text: s.text(),
            complete: s.names().contains(&"message_stop"),
            error: s.all("error").first().map(|v| (*v).clone()),
        }
    }
}

/// The whole answer of every ask, with `fault` on `times` attempts.
async fn all_answer_whole(
    env: &ProxyEnv,
    proxy: &FaultProxy,
    model: &str,
    fault: Fault,
    times: usize,
    expect: &str,
) {
    for (path, stream) in ASKS {
        proxy.clear();
        proxy.push(fault.clone(), times);
        let seen = ask(env, model, path, stream).await;
        let applied = proxy.applied();
        assert_eq!(
            applied.first(),
            Some(&fault),
            "{fault:?} {path}: the fault was applied"
        );
        match &seen {
            Seen::Stream {
                text,
                complete,
                error,
            } => {
                assert!(*complete && error.is_none(), "{fault:?} {path}: {seen:?}");
                assert_eq!(text, expect, "{fault:?} {path} stream");
            }
            plain => assert_eq!(
                plain.answer_text().as_deref(),
                Some(expect),
                "{fault:?} {path}: {seen:?}"
            ),
        }
    }
}

/// Every ask is a plain error with `status` whose message contains `words`.
async fn all_refused(
    env: &ProxyEnv,
    proxy: &FaultProxy,
    model: &str,
    fault: Fault,
    times: usize,
    status: u16,
    words: &str,
) {
    for (path, stream) in ASKS {
        proxy.clear();
        proxy.push(fault.clone(), times);
        let seen = ask(env, model, path, stream).await;
        let Seen::Plain(got, body) = &seen else {
            panic!("{fault:?} {path} stream={stream}: a plain error expected, got {seen:?}");
        };
        assert_eq!(*got, status, "{fault:?} {path} stream={stream}: {body}");
        assert_eq!(
            body["error"]["type"], "upstream_api_error",
            "{fault:?} {path}"
        );
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{fault:?} {path}: {message}");
    }
}

/// Streams end with the client format's error event after `partial`;
/// whole answers are a plain error with `status`.
async fn all_broken_after_content(
    env: &ProxyEnv,
    proxy: &FaultProxy,
    model: &str,
    fault: Fault,
    partial: &str,
    status: u16,
) {
    for (path, stream) in ASKS {
        proxy.clear();
        proxy.push(fault.clone(), 1);
        let seen = ask(env, model, path, stream).await;
        match &seen {
            Seen::Stream {
                text,
                complete,
                error,
            } => {
                assert!(
                    !complete,
                    "{fault:?} {path}: a broken stream must not end cleanly"
                );
                assert_eq!(text, partial, "{fault:?} {path}");
                let error = error
                    .as_ref()
                    .unwrap_or_else(|| panic!("{fault:?} {path}: no error event"));
                let kind = error["error"]["type"].as_str();
                assert_eq!(kind, Some("upstream_api_error"), "{fault:?} {path}");
            }
            Seen::Plain(got, body) => {
                assert!(!stream, "{fault:?} {path}: a stream expected, got {seen:?}");
                assert_eq!(*got, status, "{fault:?} {path}: {body}");
                assert_eq!(body["error"]["type"], "upstream_api_error");
            }
        }
    }
}

fn primary_answer() -> String {
    upstream_sim::primary::content::generate(200, upstream_sim::primary::content::Flavor::Answer)
}

/// What a recovered `primary` answer reads: the units before the cut, then
/// the recovery request's answer (it names no scenario: the default one).
fn recovered(units: usize) -> String {
    let partial = &primary_answer()[..units * 20];
    format!(
        "{partial}{}",
        upstream_sim::primary::events::default_answer_text("claude-sonnet-4.5")
    )
}

#[tokio::test]
async fn primary_faults_before_any_content_are_retried() {
    let (env, proxy) = primary_env().await;
    let model = "claude-sonnet-4.5";
    let whole = primary_answer();
    for fault in [
        Fault::ResetBeforeAnswer,
        Fault::ResetAfterHeaders,
        Fault::CutAfter {
            units: 0,
            mid: true,
        },
        Fault::StallAfter { units: 0 },
        Fault::CorruptCrc { unit: 0 },
        Fault::OversizedFrame { unit: 0 },
        Fault::ErrorBody200,
        Fault::Status {
            code: 503,
            retry_after: None,
        },
        Fault::Status {
            code: 429,
            retry_after: None,
        },
        Fault::Status {
            code: 429,
            retry_after: Some(1),
        },
    ] {
        all_answer_whole(&env, &proxy, model, fault, 1, &whole).await;
    }
}

#[tokio::test]
async fn primary_faults_that_persist_are_a_clear_error_before_the_first_byte() {
    let (env, proxy) = primary_env().await;
    let model = "claude-sonnet-4.5";
    all_refused(
        &env,
        &proxy,
        model,
        Fault::ResetBeforeAnswer,
        10,
        502,
        "upstream unreachable",
    )
    .await;
    all_refused(
        &env,
        &proxy,
        model,
        Fault::ResetAfterHeaders,
        10,
        502,
        "connection failed",
    )
    .await;
    all_refused(
        &env,
        &proxy,
        model,
        Fault::ErrorBody200,
        10,
        502,
        "Improperly formed request",
    )
    .await;
    all_refused(
        &env,
        &proxy,
        model,
        Fault::Status {
            code: 503,
            retry_after: None,
        },
        10,
        503,
        "injected 503",
    )
    .await;
    all_refused(
        &env,
        &proxy,
        model,
        Fault::Status {
            code: 429,
            retry_after: None,
        },
        10,
        429,
        "injected 429",
    )
    .await;
    // A wait longer than the gateway's cap goes back to the client with it.
    proxy.clear();
    proxy.push(
        Fault::Status {
            code: 429,
            retry_after: Some(999),
        },
        1,
    );
    let resp = env.post(CHAT, &chat_body(ANSWER, false)).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "999");
}

#[tokio::test]
async fn a_primary_answer_cut_after_content_is_recovered() {
    let (env, proxy) = primary_env().await;
    let model = "claude-sonnet-4.5";
    for mid in [true, false] {
        all_answer_whole(
            &env,
            &proxy,
            model,
            Fault::CutAfter { units: 3, mid },
            1,
            &recovered(3),
        )
        .await;
    }
}

#[tokio::test]
async fn primary_faults_after_content_end_with_an_error_event() {
    let (env, proxy) = primary_env().await;
    let model = "claude-sonnet-4.5";
    let partial = &primary_answer()[..60];
    all_broken_after_content(
        &env,
        &proxy,
        model,
        Fault::StallAfter { units: 3 },
        partial,
        502,
    )
    .await;
    all_broken_after_content(
        &env,
        &proxy,
        model,
        Fault::CorruptCrc { unit: 3 },
        partial,
        502,
    )
    .await;
    all_broken_after_content(
        &env,
        &proxy,
        model,
        Fault::OversizedFrame { unit: 3 },
        partial,
        502,
    )
    .await;
}

#[tokio::test]
async fn primary_answers_arrive_whole_through_slow_or_mislabelled_bytes() {
    let (env, proxy) = primary_env().await;
    let model = "claude-sonnet-4.5";
    let whole = primary_answer();
    all_answer_whole(&env, &proxy, model, Fault::Drip, 1, &whole).await;
    // The frames' CRCs decide, not the content type.
    all_answer_whole(
        &env,
        &proxy,
        model,
        Fault::ContentType("text/html"),
        1,
        &whole,
    )
    .await;
}

/// The simulated vendors' answer to [`ANSWER`].
async fn vendor_answer(env: &ProxyEnv, model: &str) -> String {
    ask(env, model, CHAT, false).await.answer_text().unwrap()
}

const VENDORS: [&str; 2] = ["custom/llama3", "messages_vendor/claude-sonnet-4-5"];

/// Events that reach the gateway together leave it together: a stream
/// passed through goes to the client in a few writes, not one per event.
#[tokio::test]
async fn a_stream_that_arrives_at_once_leaves_in_a_few_writes() {
    let (env, proxy) = vendor_env().await;
    for (model, path) in [(VENDORS[0], CHAT), (VENDORS[1], MESSAGES)] {
        proxy.push(Fault::OneWrite, 1);
        let mut body = if path == CHAT {
            chat_body(ANSWER, true)
        } else {
            messages_body(ANSWER, true)
        };
        body["model"] = Value::String(model.to_owned());
        let mut resp = env.post(path, &body).await;
        assert_eq!(resp.status(), 200, "{model}");
        let (mut writes, mut all) = (0, Vec::new());
        while let Some(chunk) = resp.chunk().await.unwrap() {
            writes += 1;
            all.extend_from_slice(&chunk);
        }
        let events = all.windows(2).filter(|w| w == b"\n\n").count();
        assert!(events >= 10, "{model}: {events} events");
        assert!(writes <= 3, "{model}: {writes} writes for {events} events");
        assert_eq!(proxy.applied(), [Fault::OneWrite], "{model}");
        proxy.clear();
    }
}

#[tokio::test]
async fn direct_provider_faults_before_any_content_are_retried() {
    let (env, proxy) = vendor_env().await;
    for model in VENDORS {
        let whole = vendor_answer(&env, model).await;
        for fault in [
            Fault::ResetBeforeAnswer,
            Fault::ResetAfterHeaders,
            Fault::CutAfter {
                units: 0,
                mid: true,
            },
            Fault::StallAfter { units: 0 },
            Fault::Status {
                code: 503,
                retry_after: None,
            },
            Fault::Status {
                code: 429,
                retry_after: None,
            },
            Fault::Drip,
            Fault::ContentType("text/html"),
        ] {
            all_answer_whole(&env, &proxy, model, fault, 1, &whole).await;
        }
    }
}

#[tokio::test]
async fn direct_provider_faults_that_persist_are_a_clear_error_before_the_first_byte() {
    let (env, proxy) = vendor_env().await;
    for model in VENDORS {
        all_refused(
            &env,
            &proxy,
            model,
            Fault::ResetAfterHeaders,
            10,
            502,
            "failed",
        )
        .await;
        all_refused(
            &env,
            &proxy,
            model,
            Fault::Status {
                code: 503,
                retry_after: None,
            },
            10,
            503,
            "injected 503",
        )
        .await;
        // An error object in a success answer is the provider's error.
        all_refused(
            &env,
            &proxy,
            model,
            Fault::ErrorBody200,
            1,
            500,
            "injected error in a 200 answer",
        )
        .await;
    }
}

#[tokio::test]
async fn direct_provider_faults_after_content_end_with_an_error_event() {
    let (env, proxy) = vendor_env().await;
    for model in VENDORS {
        // Five units in, each format's stream has sent content.
        for fault in [
            Fault::CutAfter {
                units: 5,
                mid: true,
            },
            Fault::StallAfter { units: 5 },
            Fault::InvalidUtf8 { unit: 5 },
        ] {
            for (path, stream) in [(CHAT, true), (MESSAGES, true)] {
                proxy.clear();
                proxy.push(fault.clone(), 1);
                let seen = ask(&env, model, path, stream).await;
                let Seen::Stream {
                    text,
                    complete,
                    error,
                } = &seen
                else {
                    panic!("{model} {fault:?} {path}: a stream expected, got {seen:?}");
                };
                assert!(!complete, "{model} {fault:?} {path}");
                assert!(
                    !text.is_empty(),
                    "{model} {fault:?} {path}: content came first"
                );
                let error = error
                    .as_ref()
                    .unwrap_or_else(|| panic!("{model} {fault:?} {path}: no error event"));
                assert_eq!(
                    error["error"]["type"], "upstream_api_error",
                    "{model} {fault:?}"
                );
            }
        }
    }
}

/// Full deployment: one usage record per client request, whatever the
/// upstream did (a retry, a recovery, a broken stream), never two.
#[tokio::test]
async fn no_usage_record_is_lost_or_doubled() {
    use crate::keys_support::{connect_upstream, create_key, user_id, KeyHeader};

    let sim = start_sim().await;
    let proxy = FaultProxy::start(&sim.base_url()).await;
    let (api, oidc) = (proxy.url(), sim.oidc_url());
    let mut env: Vec<(&str, &str)> = admin_env();
    env.push(("UPSTREAM_API_ENDPOINT", &api));
    env.push(("UPSTREAM_OIDC_ENDPOINT", &oidc));
    env.extend_from_slice(&TIMEOUTS);
    let d = crate::keys_support::Deployment {
        sim,
        env: FullEnv::start(TestDb::sqlite(), &env).await,
    };
    let admin = d.admin().await;
    connect_upstream(&admin).await;
    let created = create_key(&admin, "faults").await;
    let key = created["key"].as_str().unwrap();

    let faults = [
        Fault::Pass,
        Fault::ResetBeforeAnswer,
        Fault::CutAfter {
            units: 3,
            mid: true,
        },
        Fault::StallAfter { units: 3 },
        Fault::CorruptCrc { unit: 3 },
        Fault::Status {
            code: 503,
            retry_after: None,
        },
    ];
    let mut asked = 0usize;
    for fault in &faults {
        for (path, stream) in ASKS {
            proxy.clear();
            proxy.push(fault.clone(), 1);
            let body = if path == CHAT {
                chat_body(ANSWER, stream)
            } else {
                messages_body(ANSWER, stream)
            };
            let resp = d
                .v1(&path["/v1".len()..], key, KeyHeader::Bearer, &body)
                .await;
            // Read every answer to its end, as a client does.
            let _ = resp.bytes().await;
            asked += 1;
        }
    }
    let store = d.env.db.store().await;
    let user = user_id(&admin).await;
    for _ in 0..200 {
        if requests_in(&store.usage().records_of(user).await.unwrap()) >= asked {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A little longer: a doubled record would come late.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let rows = store.usage().records_of(user).await.unwrap();
    store.close().await;
    assert_eq!(
        requests_in(&rows),
        asked,
        "one record per request: {rows:?}"
    );
}
