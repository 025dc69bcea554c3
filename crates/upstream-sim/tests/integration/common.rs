//! Helpers shared by the integration tests: start a simulator, build chat
//! bodies, call the API with reqwest, and decode answers with the project's
//! event-stream decoder.

use bytes::BytesMut;
use serde_json::{json, Value};
use upstream_sim::{start, SimConfig, SimHandle};
use wire::eventstream::{Decoder, EventStreamError, Message};

pub async fn sim() -> SimHandle {
    sim_with(SimConfig::default()).await
}

pub async fn sim_with(config: SimConfig) -> SimHandle {
    start(config).await.unwrap()
}

pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// A minimal valid chat body.
pub fn chat_body(content: &str) -> Value {
    json!({
        "conversationState": {
            "chatTriggerType": "MANUAL",
            "conversationId": "5b0e6f0c-2f1e-4c8e-9d0a-4a3f2c1b7e90",
            "currentMessage": {"userInputMessage": {
                "content": content, "modelId": "claude-sonnet-4.5", "origin": "AI_EDITOR"}}
        }
    })
}

/// A chat body offering `read_file` and `list_dir`.
pub fn chat_body_with_tools(content: &str) -> Value {
    let mut body = chat_body(content);
    let tool = |name: &str| {
        json!({"toolSpecification": {"name": name, "description": "A tool",
            "inputSchema": {"json": {"type": "object",
                "properties": {"path": {"type": "string"}}, "required": ["path"]}}}})
    };
    body["conversationState"]["currentMessage"]["userInputMessage"]["userInputMessageContext"] =
        json!({"tools": [tool("read_file"), tool("list_dir")]});
    body
}

pub async fn chat(sim: &SimHandle, token: &str, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/generateAssistantResponse", sim.base_url()))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Event(String, Value),
    Exception(String, Value),
    Error(String, String),
}

impl Frame {
    pub fn event_type(&self) -> &str {
        match self {
            Frame::Event(t, _) | Frame::Exception(t, _) | Frame::Error(t, _) => t,
        }
    }
}

/// Everything the body held: decoded frames, a decoder error, whether the
/// transfer itself failed.
#[derive(Debug, Default)]
pub struct Decoded {
    pub frames: Vec<Frame>,
    pub decode_error: Option<EventStreamError>,
    pub transfer_failed: bool,
}

impl Decoded {
    pub fn events(&self, event_type: &str) -> Vec<&Value> {
        self.frames
            .iter()
            .filter_map(|f| match f {
                Frame::Event(t, v) if t == event_type => Some(v),
                _ => None,
            })
            .collect()
    }

    pub fn text(&self) -> String {
        self.events("assistantResponseEvent")
            .iter()
            .map(|v| v["content"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn types(&self) -> Vec<&str> {
        self.frames.iter().map(Frame::event_type).collect()
    }

    /// Tool calls assembled per `toolUseId`: (name, joined input, stopped).
    pub fn tool_calls(&self) -> Vec<(String, String, bool)> {
        let mut calls: Vec<(String, String, String, bool)> = Vec::new();
        for v in self.events("toolUseEvent") {
            // The gateway's own payload type must read every frame.
            let typed: wire::primary::ToolUseEvent = serde_json::from_value(v.clone()).unwrap();
            let piece = typed
                .input
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let stop = typed.stop.unwrap_or(false);
            match calls.iter_mut().find(|c| c.0 == typed.tool_use_id) {
                Some(c) => {
                    c.2.push_str(&piece);
                    c.3 |= stop;
                }
                None => calls.push((typed.tool_use_id, typed.name, piece, stop)),
            }
        }
        calls.into_iter().map(|(_, n, i, s)| (n, i, s)).collect()
    }
}

/// Read the whole body (tolerating a cut connection) and decode it.
pub async fn decode(mut resp: reqwest::Response) -> Decoded {
    let mut buf = BytesMut::new();
    let mut out = Decoded::default();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) => {
                out.transfer_failed = true;
                break;
            }
        }
    }
    decode_bytes(&mut buf, &mut out);
    out
}

pub fn decode_bytes(buf: &mut BytesMut, out: &mut Decoded) {
    let mut decoder = Decoder::new();
    loop {
        match decoder.decode(buf) {
            Ok(Some(frame)) => {
                let decoded = match frame.message().unwrap() {
                    Message::Event {
                        event_type,
                        payload,
                    } => {
                        // Every event must parse with the gateway's payload types too.
                        wire::primary::Event::parse(event_type, payload).unwrap();
                        Frame::Event(
                            event_type.to_owned(),
                            serde_json::from_slice(payload).unwrap(),
                        )
                    }
                    Message::Exception {
                        exception_type,
                        payload,
                    } => Frame::Exception(
                        exception_type.to_owned(),
                        serde_json::from_slice(payload).unwrap(),
                    ),
                    Message::Error { code, message } => {
                        Frame::Error(code.to_owned(), message.to_owned())
                    }
                };
                out.frames.push(decoded);
            }
            Ok(None) => {
                assert!(buf.is_empty(), "{} trailing bytes", buf.len());
                return;
            }
            Err(e) => {
                out.decode_error = Some(e);
                return;
            }
        }
    }
}

/// The JSON body of an error answer, with status and `x-amzn-ErrorType`.
pub async fn error_of(resp: reqwest::Response) -> (u16, Option<String>, Value) {
    let status = resp.status().as_u16();
    let kind = resp
        .headers()
        .get("x-amzn-errortype")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = resp.json().await.unwrap();
    (status, kind, body)
}

/// Wait (at most 3 s) until `cond` holds.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..300 {
        if cond() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    cond()
}
