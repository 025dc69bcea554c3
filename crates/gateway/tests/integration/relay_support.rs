//! Helpers of the direct-relay tests (`relay_*` modules): a proxy-mode gateway
//! with vendor providers configured against the simulator, request bodies for
//! both client formats, and one normalized view of an answer ([`Answer`]) read
//! from either format, streamed or whole.

use serde_json::{json, Value};
use upstream_sim::{RecordedRequest, Service, SimHandle, Vendor};

use crate::common::{self, AnthropicStream, OpenAiStream, ProxyEnv};

/// The client formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    OpenAi,
    Anthropic,
}

impl Client {
    pub fn path(self) -> &'static str {
        match self {
            Client::OpenAi => "/v1/chat/completions",
            Client::Anthropic => "/v1/messages",
        }
    }
}

/// The gateway variables that point `vendor` at the simulator.
pub fn vendor_env(sim: &SimHandle, vendor: Vendor) -> Vec<(String, String)> {
    let pairs: Vec<(&str, String)> = match vendor {
        Vendor::Messages => vec![
            ("MESSAGES_VENDOR_BASE_URL", sim.messages_vendor_url()),
            ("MESSAGES_VENDOR_API_KEY", sim.messages_vendor_api_key()),
        ],
        // The gateway takes OpenAI's `/v1` root, as OpenAI's SDKs do.
        Vendor::Completions => vec![
            (
                "COMPLETIONS_VENDOR_BASE_URL",
                format!("{}/v1", sim.completions_vendor_url()),
            ),
            (
                "COMPLETIONS_VENDOR_API_KEY",
                sim.completions_vendor_api_key(),
            ),
        ],
        Vendor::Custom => {
            let mut v = vec![("CUSTOM_BASE_URL", sim.custom_url())];
            if let Some(key) = sim.custom_api_key() {
                v.push(("CUSTOM_API_KEY", key));
            }
            v
        }
        Vendor::Assistant => vec![
            (
                "ASSISTANT_VENDOR_TOKEN_URL",
                sim.assistant_vendor_token_url(),
            ),
            (
                "ASSISTANT_VENDOR_GITHUB_TOKEN",
                sim.assistant_vendor_github_token(),
            ),
        ],
    };
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// A proxy-mode gateway with `vendors` configured, plus `extra` variables.
pub async fn start(vendors: &[Vendor], extra: &[(&str, &str)]) -> ProxyEnv {
    start_with_sim(common::start_sim().await, vendors, extra).await
}

pub async fn start_with_sim(
    sim: SimHandle,
    vendors: &[Vendor],
    extra: &[(&str, &str)],
) -> ProxyEnv {
    let mut env: Vec<(String, String)> =
        vendors.iter().flat_map(|v| vendor_env(&sim, *v)).collect();
    env.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    ProxyEnv::start_with_sim(sim, &refs).await
}

/// The chat requests `vendor` received (its chat route only), oldest first.
pub fn vendor_chats(sim: &SimHandle, vendor: Vendor) -> Vec<RecordedRequest> {
    let (service, suffix) = match vendor {
        Vendor::Messages => (Service::MessagesVendor, "/v1/messages"),
        Vendor::Completions => (Service::CompletionsVendor, "/chat/completions"),
        Vendor::Custom => (Service::Custom, "/chat/completions"),
        Vendor::Assistant => (Service::AssistantVendorApi, "/chat/completions"),
    };
    sim.requests()
        .into_iter()
        .filter(|r| r.service == service && r.path.ends_with(suffix))
        .collect()
}

/// The one chat request `vendor` received.
pub fn only_chat(sim: &SimHandle, vendor: Vendor) -> RecordedRequest {
    let mut all = vendor_chats(sim, vendor);
    assert_eq!(all.len(), 1, "{vendor} chat requests: {all:?}");
    all.remove(0)
}

/// Whether `vendor` speaks the client's format natively.
pub fn native(client: Client, vendor: Vendor) -> bool {
    matches!(
        (client, vendor),
        (Client::Anthropic, Vendor::Messages)
            | (
                Client::OpenAi,
                Vendor::Completions | Vendor::Custom | Vendor::Assistant
            )
    )
}

/// A request body of `client`'s format with one user turn of `content`
/// (a string or the format's content blocks).
pub fn body(client: Client, model: &str, content: Value, stream: bool) -> Value {
    match client {
        Client::OpenAi => json!({
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "stream": stream,
        }),
        Client::Anthropic => json!({
            "model": model,
            "max_tokens": 2048,
            "messages": [{"role": "user", "content": content}],
            "stream": stream,
        }),
    }
}

/// Two tools in `client`'s format.
pub fn tools(client: Client) -> Value {
    let weather =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let time =
        json!({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]});
    match client {
        Client::OpenAi => json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city", "parameters": weather}},
            {"type": "function", "function": {"name": "get_time", "description": "Time in a zone", "parameters": time}},
        ]),
        Client::Anthropic => json!([
            {"name": "get_weather", "description": "Weather of a city", "input_schema": weather},
            {"name": "get_time", "description": "Time in a zone", "input_schema": time},
        ]),
    }
}

/// A 1x1 PNG, base64.
pub const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A user turn with an image and a text, in `client`'s format.
pub fn image_content(client: Client, text: &str) -> Value {
    match client {
        Client::OpenAi => json!([
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_1X1}")}},
        ]),
        Client::Anthropic => json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1}},
            {"type": "text", "text": text},
        ]),
    }
}

/// One tool call of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// An answer read from either format, streamed or whole.
#[derive(Debug, Default)]
pub struct Answer {
    pub text: String,
    pub thinking: String,
    pub signatures: Vec<String>,
    pub calls: Vec<Call>,
    /// `finish_reason` or `stop_reason` as the client saw it.
    pub stop: Option<String>,
    pub usage: Option<Value>,
    /// The error event (streams) that ended the answer.
    pub error: Option<Value>,
    /// Chat completions: `[DONE]` came; messages: `message_stop` came.
    pub clean_end: bool,
    /// Tool-call indexes in order of first appearance (chat-completions streams).
    pub call_indexes: Vec<u64>,
}

impl Answer {
    /// Read a successful response of `client`'s format.
    pub async fn read(client: Client, stream: bool, resp: reqwest::Response) -> Answer {
        assert_eq!(resp.status(), 200, "expected 200");
        match (client, stream) {
            (Client::OpenAi, true) => Answer::from_openai_stream(OpenAiStream::read(resp).await),
            (Client::Anthropic, true) => {
                Answer::from_anthropic_stream(AnthropicStream::read(resp).await)
            }
            (Client::OpenAi, false) => Answer::from_openai_json(&resp.json().await.unwrap()),
            (Client::Anthropic, false) => Answer::from_anthropic_json(&resp.json().await.unwrap()),
        }
    }

    fn from_openai_stream(s: OpenAiStream) -> Answer {
        let mut a = Answer {
            clean_end: s.done,
            error: s.error.clone(),
            ..Answer::default()
        };
        let mut by_index: Vec<(u64, Call)> = Vec::new();
        for chunk in &s.chunks {
            if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
                a.usage = Some(u.clone());
            }
            let Some(choice) = chunk["choices"].get(0) else {
                continue;
            };
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str() {
                a.text.push_str(t);
            }
            if let Some(t) = delta["reasoning_content"].as_str() {
                a.thinking.push_str(t);
            }
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = tc["index"]
                    .as_u64()
                    .expect("tool call chunks carry an index");
                if !a.call_indexes.contains(&index) {
                    a.call_indexes.push(index);
                    by_index.push((
                        index,
                        Call {
                            id: tc["id"].as_str().unwrap_or_default().to_owned(),
                            name: tc["function"]["name"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                            arguments: String::new(),
                        },
                    ));
                }
                let call = &mut by_index.iter_mut().find(|(i, _)| *i == index).unwrap().1;
                if let Some(args) = tc["function"]["arguments"].as_str() {
                    call.arguments.push_str(args);
                }
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                a.stop = Some(r.to_owned());
            }
        }
        a.calls = by_index.into_iter().map(|(_, c)| c).collect();
        a
    }

    fn from_anthropic_stream(s: AnthropicStream) -> Answer {
        let mut a = Answer::default();
        // Open blocks by index: (type, call position).
        let mut blocks: Vec<(u64, String, Option<usize>)> = Vec::new();
        for (name, data) in &s.events {
            match name.as_str() {
                "content_block_start" => {
                    let index = data["index"].as_u64().unwrap();
                    let block = &data["content_block"];
                    let kind = block["type"].as_str().unwrap().to_owned();
                    let mut call = None;
                    match kind.as_str() {
                        "tool_use" => {
                            a.calls.push(Call {
                                id: block["id"].as_str().unwrap().to_owned(),
                                name: block["name"].as_str().unwrap().to_owned(),
                                arguments: String::new(),
                            });
                            call = Some(a.calls.len() - 1);
                        }
                        "text" => a.text.push_str(block["text"].as_str().unwrap_or_default()),
                        "thinking" => a
                            .thinking
                            .push_str(block["thinking"].as_str().unwrap_or_default()),
                        _ => {}
                    }
                    blocks.push((index, kind, call));
                }
                "content_block_delta" => {
                    let index = data["index"].as_u64().unwrap();
                    let delta = &data["delta"];
                    match delta["type"].as_str().unwrap() {
                        "text_delta" => a.text.push_str(delta["text"].as_str().unwrap()),
                        "thinking_delta" => {
                            a.thinking.push_str(delta["thinking"].as_str().unwrap())
                        }
                        "signature_delta" => a
                            .signatures
                            .push(delta["signature"].as_str().unwrap().to_owned()),
                        "input_json_delta" => {
                            let (_, _, call) = blocks
                                .iter()
                                .rev()
                                .find(|(i, _, _)| *i == index)
                                .expect("a delta of an open block");
                            let call = call.expect("input_json_delta of a tool_use block");
                            a.calls[call]
                                .arguments
                                .push_str(delta["partial_json"].as_str().unwrap());
                        }
                        _ => {}
                    }
                }
                "message_start" => a.usage = Some(data["message"]["usage"].clone()),
                "message_delta" => {
                    if let Some(r) = data["delta"]["stop_reason"].as_str() {
                        a.stop = Some(r.to_owned());
                    }
                    if let (Some(Value::Object(start)), Some(Value::Object(more))) =
                        (a.usage.as_mut(), data.get("usage"))
                    {
                        for (k, v) in more {
                            start.insert(k.clone(), v.clone());
                        }
                    }
                }
                "message_stop" => a.clean_end = true,
                "error" => a.error = Some(data.clone()),
                _ => {}
            }
        }
        a
    }

    fn from_openai_json(v: &Value) -> Answer {
        let msg = &v["choices"][0]["message"];
        Answer {
            text: msg["content"].as_str().unwrap_or_default().to_owned(),
            thinking: msg["reasoning_content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            calls: msg["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|tc| Call {
                    id: tc["id"].as_str().unwrap().to_owned(),
                    name: tc["function"]["name"].as_str().unwrap().to_owned(),
                    arguments: tc["function"]["arguments"].as_str().unwrap().to_owned(),
                })
                .collect(),
            stop: v["choices"][0]["finish_reason"].as_str().map(str::to_owned),
            usage: v.get("usage").cloned(),
            clean_end: true,
            ..Answer::default()
        }
    }

    fn from_anthropic_json(v: &Value) -> Answer {
        let mut a = Answer {
            stop: v["stop_reason"].as_str().map(str::to_owned),
            usage: v.get("usage").cloned(),
            clean_end: true,
            ..Answer::default()
        };
        for block in v["content"].as_array().unwrap() {
            match block["type"].as_str().unwrap() {
                "text" => a.text.push_str(block["text"].as_str().unwrap()),
                "thinking" => {
                    a.thinking.push_str(block["thinking"].as_str().unwrap());
                    if let Some(sig) = block["signature"].as_str().filter(|s| !s.is_empty()) {
                        a.signatures.push(sig.to_owned());
                    }
                }
                "tool_use" => a.calls.push(Call {
                    id: block["id"].as_str().unwrap().to_owned(),
                    name: block["name"].as_str().unwrap().to_owned(),
                    arguments: block["input"].to_string(),
                }),
                _ => {}
            }
        }
        a
    }
}
