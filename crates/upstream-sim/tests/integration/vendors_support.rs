//! Helpers of the vendor tests: request bodies in both formats, calls with
//! each vendor's credentials, and reading SSE answers with the project's
//! parser (`wire::sse::SseParser`), tolerating a cut connection.

use serde_json::{json, Value};
use upstream_sim::SimHandle;
use wire::sse::{SseEvent, SseParser};

use crate::common::client;

/// A messages-format body with one user message.
pub fn messages_body(text: &str, stream: bool) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
        "messages": [{"role": "user", "content": text}]})
}

/// An OpenAI-format body with one user message.
pub fn openai_body(model: &str, text: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": text}]})
}

/// Offer `read_file` and `list_dir` in the messages format.
pub fn with_messages_tools(mut body: Value) -> Value {
    let tool = |name: &str| {
        json!({"name": name, "description": "A tool", "input_schema": {"type": "object",
            "properties": {"path": {"type": "string"}}, "required": ["path"]}})
    };
    body["tools"] = json!([tool("read_file"), tool("list_dir")]);
    body
}

/// Offer `read_file` and `list_dir` in the OpenAI format.
pub fn with_openai_tools(mut body: Value) -> Value {
    let tool = |name: &str| {
        json!({"type": "function", "function": {"name": name, "description": "A tool",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}})
    };
    body["tools"] = json!([tool("read_file"), tool("list_dir")]);
    body
}

/// `POST /v1/messages` with the configured API key.
pub async fn post_messages(sim: &SimHandle, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/v1/messages", sim.messages_vendor_url()))
        .header("x-api-key", sim.messages_vendor_api_key())
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// `POST {url}` with a bearer key (none when `key` is `None`).
pub async fn post_bearer(url: &str, key: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = client().post(url).json(body);
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    req.send().await.unwrap()
}

/// `POST /v1/chat/completions` of the completions vendor with its key.
pub async fn post_completions(sim: &SimHandle, body: &Value) -> reqwest::Response {
    let url = format!("{}/v1/chat/completions", sim.completions_vendor_url());
    post_bearer(&url, Some(&sim.completions_vendor_api_key()), body).await
}

/// Every SSE event of a body, and whether the transfer failed.
#[derive(Debug, Default)]
pub struct SseRead {
    pub events: Vec<SseEvent>,
    pub transfer_failed: bool,
}

impl SseRead {
    /// `(event name, JSON data)` of the messages format.
    pub fn named(&self) -> Vec<(String, Value)> {
        self.events
            .iter()
            .map(|e| {
                let name = e.event.clone().unwrap_or_default().into_owned();
                (name, serde_json::from_str(&e.data).unwrap())
            })
            .collect()
    }

    /// The JSON chunks of the OpenAI format (without `[DONE]`).
    pub fn chunks(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| e.data != "[DONE]")
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect()
    }

    /// Whether the OpenAI-format stream ended with `[DONE]`.
    pub fn done(&self) -> bool {
        self.events.last().is_some_and(|e| e.data == "[DONE]")
    }

    /// Joined `text_delta`s of the messages format.
    pub fn anthropic_text(&self) -> String {
        self.named()
            .iter()
            .filter(|(_, v)| v["delta"]["type"] == "text_delta")
            .map(|(_, v)| v["delta"]["text"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Joined `content` deltas of the OpenAI format.
    pub fn openai_text(&self) -> String {
        self.chunks()
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }
}

/// Read the whole body (tolerating a cut connection) and parse its events.
pub async fn read_sse(mut resp: reqwest::Response) -> SseRead {
    let mut parser = SseParser::new();
    let mut out = SseRead::default();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => parser.feed(&chunk),
            Ok(None) => break,
            Err(_) => {
                out.transfer_failed = true;
                break;
            }
        }
        while let Some(e) = parser.next_event().unwrap() {
            out.events.push(e);
        }
    }
    while let Some(e) = parser.finish().unwrap() {
        out.events.push(e);
    }
    out
}

/// Status, headers and JSON body of an answer.
pub async fn json_of(resp: reqwest::Response) -> (u16, reqwest::header::HeaderMap, Value) {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json().await.unwrap();
    (status, headers, body)
}
