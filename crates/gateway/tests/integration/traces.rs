//! OpenTelemetry traces (issue 18; interfaces-full.md 6): a collector in the
//! test (an OTLP/HTTP receiver that decodes with opentelemetry-proto's own
//! types, not the gateway's encoder) receives a chat call's server span and
//! one client span per upstream attempt, with the GenAI attributes, the
//! client's `traceparent` as parent and the same trace upstream; message
//! contents only with `otel_capture_content`; nothing added upstream when
//! tracing is off; in full deployment (both stores) a guardrail check is an
//! internal span of the request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

use crate::accounts_support::v1_key;
use crate::common::{
    admin_env, chat_body, client, eventually, start_sim, FullEnv, OpenAiStream, ProxyEnv, TestDb,
    API_KEY,
};
use crate::keys_support::connect_upstream;

crate::both_stores!(full_deployment_traces_a_keyed_call_and_its_guardrail_check);

const CHAT: &str = "/v1/chat/completions";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID: &str = "00f067aa0ba902b7";

/// An OTLP/HTTP trace receiver on a free port.
struct Collector {
    url: String,
    /// Every span received, with its resource's `service.name`.
    spans: Arc<Mutex<Vec<(String, Span)>>>,
}

impl Collector {
    async fn start() -> Collector {
        let spans: Arc<Mutex<Vec<(String, Span)>>> = Arc::default();
        let store = spans.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            post(move |headers: axum::http::HeaderMap, body: Bytes| {
                let store = store.clone();
                async move {
                    assert_eq!(headers["content-type"], "application/x-protobuf");
                    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP body");
                    let mut store = store.lock().unwrap();
                    for resource_spans in request.resource_spans {
                        let service = resource_spans
                            .resource
                            .iter()
                            .flat_map(|r| &r.attributes)
                            .find(|kv| kv.key == "service.name")
                            .and_then(|kv| text(kv.value.as_ref()?.value.as_ref()?))
                            .unwrap_or_default();
                        for scope in resource_spans.scope_spans {
                            for span in scope.spans {
                                store.push((service.clone(), span));
                            }
                        }
                    }
                    axum::http::StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Collector { url, spans }
    }

    fn spans(&self) -> Vec<(String, Span)> {
        self.spans.lock().unwrap().clone()
    }

    /// Wait for a server span, then for `children` spans under it.
    async fn server_span_with(&self, children: usize) -> (String, Span, Vec<Span>) {
        let found = eventually(Duration::from_secs(10), || {
            let spans = self.spans();
            spans
                .iter()
                .find(|(_, s)| s.kind == SpanKind::Server as i32)
                .is_some_and(|(_, server)| {
                    spans
                        .iter()
                        .filter(|(_, s)| s.parent_span_id == server.span_id)
                        .count()
                        >= children
                })
        })
        .await;
        assert!(found, "spans received: {:#?}", self.spans());
        let spans = self.spans();
        let (service, server) = spans
            .iter()
            .find(|(_, s)| s.kind == SpanKind::Server as i32)
            .cloned()
            .unwrap();
        let children = spans
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| s.parent_span_id == server.span_id)
            .collect();
        (service, server, children)
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn str_attr(span: &Span, key: &str) -> Option<String> {
    attr(span, key).and_then(text)
}

fn int_attr(span: &Span, key: &str) -> Option<i64> {
    match attr(span, key)? {
        Value::IntValue(i) => Some(*i),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `traceparent` headers the simulator's chat route received.
fn upstream_traceparents(env: &ProxyEnv) -> Vec<Option<String>> {
    env.sim
        .requests_to("/generateAssistantResponse")
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .find(|(name, _)| name == "traceparent")
                .map(|(_, v)| v.clone())
        })
        .collect()
}

fn otel_env<'a>(collector: &'a Collector, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ];
    env.extend_from_slice(extra);
    env
}

#[tokio::test]
async fn a_chat_call_is_a_server_span_under_the_clients_with_a_client_span_per_attempt() {
    let collector = Collector::start().await;
    let env = ProxyEnv::start(&otel_env(&collector, &[])).await;
    let prompt = "sim: status code=429 times=1\nsim: text len=40";
    let resp = client()
        .post(env.url(CHAT))
        .bearer_auth(API_KEY)
        .header("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01"))
        .json(&chat_body(prompt, false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let answer: serde_json::Value = resp.json().await.unwrap();
    let answer_text = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();

    let (service, server, children) = collector.server_span_with(2).await;
    assert_eq!(service, "gateway");
    // The server span: the client's span is its parent, in the client's trace.
    assert_eq!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(hex(&server.parent_span_id), CLIENT_SPAN_ID);
    let model = str_attr(&server, "gen_ai.request.model").expect("the model");
    assert_eq!(server.name, format!("chat {model}"));
    assert_eq!(
        str_attr(&server, "gen_ai.operation.name").as_deref(),
        Some("chat")
    );
    assert_eq!(
        str_attr(&server, "gen_ai.provider.name").as_deref(),
        Some("primary")
    );
    assert!(str_attr(&server, "gen_ai.response.model").is_some());
    assert!(int_attr(&server, "gen_ai.usage.input_tokens").unwrap() > 0);
    assert!(int_attr(&server, "gen_ai.usage.output_tokens").unwrap() > 0);
    assert_eq!(int_attr(&server, "http.response.status_code"), Some(200));
    assert!(server.end_time_unix_nano >= server.start_time_unix_nano);

    // One client span per upstream attempt: the 429, then the answer.
    let mut attempts: Vec<&Span> = children
        .iter()
        .filter(|s| s.kind == SpanKind::Client as i32)
        .collect();
    attempts.sort_by_key(|s| s.start_time_unix_nano);
    assert_eq!(attempts.len(), 2, "{children:#?}");
    let statuses: Vec<_> = attempts
        .iter()
        .map(|s| int_attr(s, "http.response.status_code"))
        .collect();
    assert_eq!(statuses, [Some(429), Some(200)]);
    for span in &attempts {
        assert_eq!(span.trace_id, server.trace_id);
        assert_eq!(
            str_attr(span, "gen_ai.provider.name").as_deref(),
            Some("primary")
        );
        assert_eq!(
            str_attr(span, "server.address").as_deref(),
            Some("127.0.0.1")
        );
    }
    // status code 2: STATUS_CODE_ERROR
    assert_eq!(attempts[0].status.as_ref().map(|s| s.code), Some(2));
    assert_ne!(attempts[1].status.as_ref().map(|s| s.code), Some(2));

    // Each upstream request carried its attempt's span in the same trace.
    let sent: Vec<String> = attempts
        .iter()
        .map(|s| format!("00-{TRACE_ID}-{}-01", hex(&s.span_id)))
        .collect();
    let received = upstream_traceparents(&env);
    assert_eq!(received, sent.into_iter().map(Some).collect::<Vec<_>>());

    // Capture is off: no message content in any span.
    for (_, span) in collector.spans() {
        for kv in &span.attributes {
            assert!(!kv.key.starts_with("gen_ai.input"), "{}", kv.key);
            assert!(!kv.key.starts_with("gen_ai.output"), "{}", kv.key);
            assert!(!kv.key.starts_with("gen_ai.system"), "{}", kv.key);
            let value = kv
                .value
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .and_then(text);
            let value = value.unwrap_or_default();
            assert!(!value.contains("sim:"), "{}: {value}", kv.key);
            assert!(!value.contains(&answer_text), "{}: {value}", kv.key);
        }
    }
}

#[tokio::test]
async fn with_capture_on_a_stream_exports_its_messages_and_a_bad_traceparent_starts_a_trace() {
    let collector = Collector::start().await;
    let env = ProxyEnv::start(&otel_env(&collector, &[("OTEL_CAPTURE_CONTENT", "true")])).await;
    let prompt = "sim: text len=40";
    let resp = client()
        .post(env.url(CHAT))
        .bearer_auth(API_KEY)
        .header("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-0x"))
        .json(&chat_body(prompt, true))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let streamed = OpenAiStream::read(resp).await.text();
    assert!(!streamed.is_empty());

    let (_, server, children) = collector.server_span_with(1).await;
    // The malformed header was ignored: a new trace, no parent.
    assert!(server.parent_span_id.is_empty());
    assert_ne!(hex(&server.trace_id), TRACE_ID);
    assert_eq!(children.len(), 1);
    // The stream's end brought its tokens.
    assert!(int_attr(&server, "gen_ai.usage.output_tokens").unwrap() > 0);
    let input = str_attr(&server, "gen_ai.input.messages").expect("input messages");
    let input: serde_json::Value = serde_json::from_str(&input).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["parts"][0]["content"], prompt);
    let output = str_attr(&server, "gen_ai.output.messages").expect("output messages");
    let output: serde_json::Value = serde_json::from_str(&output).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(output[0]["parts"][0]["content"], streamed.as_str());
    let upstream = upstream_traceparents(&env);
    assert_eq!(upstream.len(), 1);
    assert!(upstream[0]
        .as_deref()
        .unwrap()
        .starts_with(&format!("00-{}-", hex(&server.trace_id))));
}

#[tokio::test]
async fn with_tracing_off_no_traceparent_goes_upstream() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client()
        .post(env.url(CHAT))
        .bearer_auth(API_KEY)
        .header("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01"))
        .json(&chat_body("sim: text len=10", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.bytes().await.unwrap();
    assert_eq!(upstream_traceparents(&env), [None]);
}

async fn full_deployment_traces_a_keyed_call_and_its_guardrail_check(db: TestDb) {
    let collector = Collector::start().await;
    let sim = start_sim().await;
    let (api, oidc, guard) = (sim.base_url(), sim.oidc_url(), sim.guardrail_url());
    let mut extra = admin_env();
    extra.extend(otel_env(&collector, &[]));
    extra.extend([
        ("UPSTREAM_API_ENDPOINT", api.as_str()),
        ("UPSTREAM_OIDC_ENDPOINT", oidc.as_str()),
        ("GUARDRAIL_ENDPOINT", guard.as_str()),
        ("GUARDRAILS_ENABLED", "true"),
    ]);
    let env = FullEnv::start(db, &extra).await;
    let admin = env.admin().await;
    connect_upstream(&admin).await;
    let key = v1_key(&admin).await;
    let (akid, secret) = sim.guardrail_credentials();
    let resp = admin
        .post(
            "/_ui/api/guardrails/profiles",
            serde_json::json!({"name": "p", "guardrail_id": "abc", "guardrail_version": "1",
                   "region": "us-east-1", "access_key_id": akid, "secret_access_key": secret}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let profile: serde_json::Value = resp.json().await.unwrap();
    let resp = admin
        .post(
            "/_ui/api/guardrails/rules",
            serde_json::json!({"name": "all", "cel_expression": "", "apply_to": "Input",
                   "sampling_rate": 100, "profile_ids": [profile["id"]]}),
        )
        .await;
    assert_eq!(resp.status(), 201);
    // Spans of the console's calls are not made (only /v1 is traced).
    collector.spans.lock().unwrap().clear();

    let resp = client()
        .post(env.url(CHAT))
        .bearer_auth(&key)
        .header("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01"))
        .json(&chat_body("sim: text len=20", false))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.bytes().await.unwrap();

    let (_, server, children) = collector.server_span_with(2).await;
    assert_eq!(hex(&server.parent_span_id), CLIENT_SPAN_ID);
    assert_eq!(
        str_attr(&server, "gen_ai.provider.name").as_deref(),
        Some("primary")
    );
    assert!(int_attr(&server, "gen_ai.usage.output_tokens").unwrap() > 0);
    assert_eq!(int_attr(&server, "http.response.status_code"), Some(200));
    let check = children
        .iter()
        .find(|s| s.kind == SpanKind::Internal as i32)
        .expect("a guardrail span");
    assert_eq!(check.name, "guardrails input");
    assert_eq!(
        str_attr(check, "gateway.guardrail.action").as_deref(),
        Some("pass")
    );
    assert_eq!(
        children
            .iter()
            .filter(|s| s.kind == SpanKind::Client as i32)
            .count(),
        1
    );
    let server_kinds: Vec<_> = collector
        .spans()
        .iter()
        .filter(|(_, s)| s.kind == SpanKind::Server as i32)
        .map(|(_, s)| s.name.clone())
        .collect();
    assert_eq!(server_kinds.len(), 1, "{server_kinds:?}");
}
