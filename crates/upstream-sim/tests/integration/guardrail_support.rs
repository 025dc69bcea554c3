//! Helpers of the guardrail tests: `ApplyGuardrail` bodies, and calls signed
//! with the simulator's own SigV4 signer (`upstream_sim::guardrail::sigv4`;
//! the gateway's signer is checked against the simulator on its side).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use upstream_sim::guardrail::sigv4::{sign, Credentials, SignableRequest};
use upstream_sim::SimHandle;

use crate::common::{client, error_of};

/// The ARN of a guardrail, and its path segment as a client sends it.
pub const ARN: &str = "arn:aws:bedrock:us-east-1:123456789012:guardrail/ab12cd34";
pub const ARN_SEGMENT: &str =
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aguardrail%2Fab12cd34";

/// A body with one text block per text.
pub fn body(source: &str, texts: &[&str]) -> Value {
    let content: Vec<Value> = texts.iter().map(|t| json!({"text": {"text": t}})).collect();
    json!({"source": source, "content": content})
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// How a test call is signed.
#[derive(Debug, Clone)]
pub struct Signer {
    pub access_key_id: String,
    pub secret: String,
    pub session_token: Option<String>,
    pub region: String,
    pub service: String,
    /// Unix seconds the signature claims.
    pub at: u64,
}

impl Signer {
    /// The simulator's default key, `us-east-1`, `bedrock`, now.
    pub fn of(sim: &SimHandle) -> Self {
        let (access_key_id, secret) = sim.guardrail_credentials();
        Signer {
            access_key_id,
            secret,
            session_token: None,
            region: "us-east-1".into(),
            service: "bedrock".into(),
            at: now(),
        }
    }
}

/// `POST {guardrail_url}/guardrail/{segment}/version/{version}/apply`,
/// signed by `signer` (unsigned when `None`); `extra` headers are sent after
/// signing.
pub async fn apply_with(
    sim: &SimHandle,
    segment: &str,
    version: &str,
    body: &Value,
    signer: Option<&Signer>,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let path = format!("/guardrail-service/guardrail/{segment}/version/{version}/apply");
    let raw = serde_json::to_vec(body).unwrap();
    let host = sim.api_addr().to_string();
    let headers = [
        ("host", host.as_str()),
        ("content-type", "application/json"),
    ];
    let mut req = client()
        .post(format!("{}{path}", sim.base_url()))
        .header("content-type", "application/json");
    if let Some(s) = signer {
        let signable = SignableRequest {
            method: "POST",
            path: &path,
            query: "",
            headers: &headers,
            body: &raw,
        };
        let creds = Credentials {
            access_key_id: &s.access_key_id,
            secret_access_key: &s.secret,
            session_token: s.session_token.as_deref(),
        };
        for (name, value) in sign(&signable, &creds, &s.region, &s.service, s.at) {
            req = req.header(name, value);
        }
    }
    for (name, value) in extra {
        req = req.header(*name, *value);
    }
    req.body(raw).send().await.unwrap()
}

/// A correctly signed call to guardrail `g1`, version `DRAFT`.
pub async fn apply(sim: &SimHandle, body: &Value) -> reqwest::Response {
    apply_with(sim, "g1", "DRAFT", body, Some(&Signer::of(sim)), &[]).await
}

/// The 200 JSON of a correctly signed call.
pub async fn assess(sim: &SimHandle, body: &Value) -> Value {
    let resp = apply(sim, body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    resp.json().await.unwrap()
}

/// Status, `x-amzn-ErrorType` and message of an error answer.
pub async fn refusal(resp: reqwest::Response) -> (u16, String, String) {
    let (status, kind, body) = error_of(resp).await;
    let message = body["message"].as_str().unwrap().to_owned();
    (status, kind.unwrap(), message)
}
