//! The conformance matrix through the gateway: each client format x each
//! provider x streaming / whole x text, parallel tool calls, thinking, images
//! and errors, against the simulator. One row of the table below is one test;
//! a missing row is a visible gap (`docs/conformance.md` shows the same table,
//! and `the_matrix_has_no_gap` counts the rows).
//!
//! Every cell names the provider explicitly (`messages_vendor/...`,
//! `primary/...`) and checks both ends: what the provider received (its own
//! format, the model without prefix, the content carried over) and what the
//! client got back.
//!
//! Every cell runs twice: in proxy mode (the provider configured by the
//! environment) and in full deployment (`full_mode::*`: the provider reached
//! through a user's own account, connected by its connect flow; see
//! [`super::full_target`]).

use serde_json::Value;
use upstream_sim::Vendor;

use super::full_target::{self, FullTarget};
use super::relay_support::{
    body, image_content, native, only_chat, start, tools, Answer, Client, PNG_1X1,
};
use crate::common::ProxyEnv;

/// A deployment a cell runs against.
trait Deployment {
    fn sim(&self) -> &upstream_sim::SimHandle;
    async fn post(&self, path: &str, body: &Value) -> reqwest::Response;
}

impl Deployment for ProxyEnv {
    fn sim(&self) -> &upstream_sim::SimHandle {
        &self.sim
    }
    async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        ProxyEnv::post(self, path, body).await
    }
}

impl Deployment for FullTarget {
    fn sim(&self) -> &upstream_sim::SimHandle {
        &self.sim
    }
    async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        FullTarget::post(self, path, body).await
    }
}

/// The providers of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    Primary,
    Messages,
    Completions,
    Assistant,
    Custom,
}

impl Provider {
    fn vendor(self) -> Option<Vendor> {
        match self {
            Provider::Primary => None,
            Provider::Messages => Some(Vendor::Messages),
            Provider::Completions => Some(Vendor::Completions),
            Provider::Assistant => Some(Vendor::Assistant),
            Provider::Custom => Some(Vendor::Custom),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Text,
    Tools,
    Thinking,
    Images,
    Errors,
}

macro_rules! matrix {
    ($($name:ident: $client:ident, $vendor:ident, $stream:expr, $case:ident;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                let env = start(Provider::$vendor.vendor().as_slice(), &[]).await;
                cell(&env, Client::$client, Provider::$vendor, $stream, Case::$case).await;
            }
        )*

        /// The same cells in full deployment, through a user's own account.
        mod full_mode {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let env = full_target::connected(Provider::$vendor.vendor()).await;
                    cell(&env, Client::$client, Provider::$vendor, $stream, Case::$case).await;
                }
            )*
        }
    };
}

// client format, provider, streaming, case
matrix! {
    openai_to_primary_stream_text: OpenAi, Primary, true, Text;
    openai_to_primary_stream_tools: OpenAi, Primary, true, Tools;
    openai_to_primary_stream_thinking: OpenAi, Primary, true, Thinking;
    openai_to_primary_stream_images: OpenAi, Primary, true, Images;
    openai_to_primary_stream_errors: OpenAi, Primary, true, Errors;
    openai_to_primary_whole_text: OpenAi, Primary, false, Text;
    openai_to_primary_whole_tools: OpenAi, Primary, false, Tools;
    openai_to_primary_whole_thinking: OpenAi, Primary, false, Thinking;
    openai_to_primary_whole_images: OpenAi, Primary, false, Images;
    openai_to_primary_whole_errors: OpenAi, Primary, false, Errors;
    openai_to_messages_vendor_stream_text: OpenAi, Messages, true, Text;
    openai_to_messages_vendor_stream_tools: OpenAi, Messages, true, Tools;
    openai_to_messages_vendor_stream_thinking: OpenAi, Messages, true, Thinking;
    openai_to_messages_vendor_stream_images: OpenAi, Messages, true, Images;
    openai_to_messages_vendor_stream_errors: OpenAi, Messages, true, Errors;
    openai_to_messages_vendor_whole_text: OpenAi, Messages, false, Text;
    openai_to_messages_vendor_whole_tools: OpenAi, Messages, false, Tools;
    openai_to_messages_vendor_whole_thinking: OpenAi, Messages, false, Thinking;
    openai_to_messages_vendor_whole_images: OpenAi, Messages, false, Images;
    openai_to_messages_vendor_whole_errors: OpenAi, Messages, false, Errors;
    openai_to_completions_vendor_stream_text: OpenAi, Completions, true, Text;
    openai_to_completions_vendor_stream_tools: OpenAi, Completions, true, Tools;
    openai_to_completions_vendor_stream_thinking: OpenAi, Completions, true, Thinking;
    openai_to_completions_vendor_stream_images: OpenAi, Completions, true, Images;
    openai_to_completions_vendor_stream_errors: OpenAi, Completions, true, Errors;
    openai_to_completions_vendor_whole_text: OpenAi, Completions, false, Text;
    openai_to_completions_vendor_whole_tools: OpenAi, Completions, false, Tools;
    openai_to_completions_vendor_whole_thinking: OpenAi, Completions, false, Thinking;
    openai_to_completions_vendor_whole_images: OpenAi, Completions, false, Images;
    openai_to_completions_vendor_whole_errors: OpenAi, Completions, false, Errors;
    openai_to_assistant_vendor_stream_text: OpenAi, Assistant, true, Text;
    openai_to_assistant_vendor_stream_tools: OpenAi, Assistant, true, Tools;
    openai_to_assistant_vendor_stream_thinking: OpenAi, Assistant, true, Thinking;
    openai_to_assistant_vendor_stream_images: OpenAi, Assistant, true, Images;
    openai_to_assistant_vendor_stream_errors: OpenAi, Assistant, true, Errors;
    openai_to_assistant_vendor_whole_text: OpenAi, Assistant, false, Text;
    openai_to_assistant_vendor_whole_tools: OpenAi, Assistant, false, Tools;
    openai_to_assistant_vendor_whole_thinking: OpenAi, Assistant, false, Thinking;
    openai_to_assistant_vendor_whole_images: OpenAi, Assistant, false, Images;
    openai_to_assistant_vendor_whole_errors: OpenAi, Assistant, false, Errors;
    openai_to_custom_stream_text: OpenAi, Custom, true, Text;
    openai_to_custom_stream_tools: OpenAi, Custom, true, Tools;
    openai_to_custom_stream_thinking: OpenAi, Custom, true, Thinking;
    openai_to_custom_stream_images: OpenAi, Custom, true, Images;
    openai_to_custom_stream_errors: OpenAi, Custom, true, Errors;
    openai_to_custom_whole_text: OpenAi, Custom, false, Text;
    openai_to_custom_whole_tools: OpenAi, Custom, false, Tools;
    openai_to_custom_whole_thinking: OpenAi, Custom, false, Thinking;
    openai_to_custom_whole_images: OpenAi, Custom, false, Images;
    openai_to_custom_whole_errors: OpenAi, Custom, false, Errors;
    anthropic_to_primary_stream_text: Anthropic, Primary, true, Text;
    anthropic_to_primary_stream_tools: Anthropic, Primary, true, Tools;
    anthropic_to_primary_stream_thinking: Anthropic, Primary, true, Thinking;
    anthropic_to_primary_stream_images: Anthropic, Primary, true, Images;
    anthropic_to_primary_stream_errors: Anthropic, Primary, true, Errors;
    anthropic_to_primary_whole_text: Anthropic, Primary, false, Text;
    anthropic_to_primary_whole_tools: Anthropic, Primary, false, Tools;
    anthropic_to_primary_whole_thinking: Anthropic, Primary, false, Thinking;
    anthropic_to_primary_whole_images: Anthropic, Primary, false, Images;
    anthropic_to_primary_whole_errors: Anthropic, Primary, false, Errors;
    anthropic_to_messages_vendor_stream_text: Anthropic, Messages, true, Text;
    anthropic_to_messages_vendor_stream_tools: Anthropic, Messages, true, Tools;
    anthropic_to_messages_vendor_stream_thinking: Anthropic, Messages, true, Thinking;
    anthropic_to_messages_vendor_stream_images: Anthropic, Messages, true, Images;
    anthropic_to_messages_vendor_stream_errors: Anthropic, Messages, true, Errors;
    anthropic_to_messages_vendor_whole_text: Anthropic, Messages, false, Text;
    anthropic_to_messages_vendor_whole_tools: Anthropic, Messages, false, Tools;
    anthropic_to_messages_vendor_whole_thinking: Anthropic, Messages, false, Thinking;
    anthropic_to_messages_vendor_whole_images: Anthropic, Messages, false, Images;
    anthropic_to_messages_vendor_whole_errors: Anthropic, Messages, false, Errors;
    anthropic_to_completions_vendor_stream_text: Anthropic, Completions, true, Text;
    anthropic_to_completions_vendor_stream_tools: Anthropic, Completions, true, Tools;
    anthropic_to_completions_vendor_stream_thinking: Anthropic, Completions, true, Thinking;
    anthropic_to_completions_vendor_stream_images: Anthropic, Completions, true, Images;
    anthropic_to_completions_vendor_stream_errors: Anthropic, Completions, true, Errors;
    anthropic_to_completions_vendor_whole_text: Anthropic, Completions, false, Text;
    anthropic_to_completions_vendor_whole_tools: Anthropic, Completions, false, Tools;
    anthropic_to_completions_vendor_whole_thinking: Anthropic, Completions, false, Thinking;
    anthropic_to_completions_vendor_whole_images: Anthropic, Completions, false, Images;
    anthropic_to_completions_vendor_whole_errors: Anthropic, Completions, false, Errors;
    anthropic_to_assistant_vendor_stream_text: Anthropic, Assistant, true, Text;
    anthropic_to_assistant_vendor_stream_tools: Anthropic, Assistant, true, Tools;
    anthropic_to_assistant_vendor_stream_thinking: Anthropic, Assistant, true, Thinking;
    anthropic_to_assistant_vendor_stream_images: Anthropic, Assistant, true, Images;
    anthropic_to_assistant_vendor_stream_errors: Anthropic, Assistant, true, Errors;
    anthropic_to_assistant_vendor_whole_text: Anthropic, Assistant, false, Text;
    anthropic_to_assistant_vendor_whole_tools: Anthropic, Assistant, false, Tools;
    anthropic_to_assistant_vendor_whole_thinking: Anthropic, Assistant, false, Thinking;
    anthropic_to_assistant_vendor_whole_images: Anthropic, Assistant, false, Images;
    anthropic_to_assistant_vendor_whole_errors: Anthropic, Assistant, false, Errors;
    anthropic_to_custom_stream_text: Anthropic, Custom, true, Text;
    anthropic_to_custom_stream_tools: Anthropic, Custom, true, Tools;
    anthropic_to_custom_stream_thinking: Anthropic, Custom, true, Thinking;
    anthropic_to_custom_stream_images: Anthropic, Custom, true, Images;
    anthropic_to_custom_stream_errors: Anthropic, Custom, true, Errors;
    anthropic_to_custom_whole_text: Anthropic, Custom, false, Text;
    anthropic_to_custom_whole_tools: Anthropic, Custom, false, Tools;
    anthropic_to_custom_whole_thinking: Anthropic, Custom, false, Thinking;
    anthropic_to_custom_whole_images: Anthropic, Custom, false, Images;
    anthropic_to_custom_whole_errors: Anthropic, Custom, false, Errors;
}

#[test]
fn the_matrix_has_no_gap() {
    let source = include_str!("relay_matrix.rs");
    let rows = source
        .lines()
        .filter(|l| {
            l.trim_start().starts_with("openai_to_") || l.trim_start().starts_with("anthropic_to_")
        })
        .count();
    // 2 client formats x 5 providers x 2 modes x 5 cases.
    assert_eq!(rows, 2 * 5 * 2 * 5);
    let doc = include_str!("../../../../docs/conformance.md");
    for line in source.lines().map(str::trim_start) {
        if line.starts_with("openai_to_") || line.starts_with("anthropic_to_") {
            let name = line.split(':').next().unwrap();
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/conformance.md lacks {name}"
            );
        }
    }
}

/// The model a cell asks for, and the name the provider must receive.
fn model(provider: Provider) -> (String, &'static str) {
    let (id, upstream) = match provider {
        Provider::Primary => ("primary", "claude-sonnet-4.5"),
        Provider::Messages => ("messages_vendor", "claude-sonnet-4-5"),
        Provider::Completions => ("completions_vendor", "gpt-4o"),
        Provider::Assistant => ("assistant_vendor", "gpt-4o"),
        Provider::Custom => ("custom", "llama3"),
    };
    (format!("{id}/{upstream}"), upstream)
}

async fn cell(env: &impl Deployment, client: Client, provider: Provider, stream: bool, case: Case) {
    let (model, upstream_model) = model(provider);
    // The primary simulator has no `interleave` (its calls never interleave).
    let tools_line = match provider {
        Provider::Primary => "Use both tools.\nsim: tools n=2 fragments=3",
        _ => "Use both tools.\nsim: tools n=2 fragments=3 interleave=true",
    };
    let text = match (case, stream) {
        (Case::Text, _) => "Hello relay: é ✓ 你好 — \"quoted\" \\ back\nsim: echo chunk=3",
        (Case::Tools, _) => tools_line,
        (Case::Thinking, _) => "Think first.\nsim: thinking thinking_len=120 len=80 chunk=20",
        (Case::Images, _) => "Describe the image.\nsim: echo chunk=4",
        (Case::Errors, true) => "Go on.\nsim: text len=200 chunk=10 error_after=5",
        (Case::Errors, false) => "Go on.\nsim: status code=400",
    };
    let content = match case {
        Case::Images => image_content(client, text),
        _ => Value::String(text.to_owned()),
    };
    let mut req = body(client, &model, content, stream);
    match case {
        Case::Tools => req["tools"] = tools(client),
        Case::Thinking => match client {
            Client::OpenAi => req["reasoning_effort"] = "low".into(),
            Client::Anthropic => {
                req["thinking"] = serde_json::json!({"type": "enabled", "budget_tokens": 1024})
            }
        },
        _ => {}
    }
    let resp = env.post(client.path(), &req).await;

    if case == Case::Errors && !stream {
        let status = resp.status().as_u16();
        let v: Value = resp.json().await.unwrap();
        assert_eq!(status, 400, "{v}");
        assert_eq!(v["error"]["type"], "upstream_api_error", "{v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty(), "{v}");
        return;
    }
    let answer = Answer::read(client, stream, resp).await;
    let Some(vendor) = provider.vendor() else {
        return check_primary(env.sim(), client, stream, case, text, &answer);
    };

    // What the provider received.
    let sent = only_chat(env.sim(), vendor);
    let sent_json = sent.json().unwrap();
    assert_eq!(sent_json["model"], upstream_model, "{sent_json}");
    assert_eq!(
        sent_json["stream"].as_bool().unwrap_or(false),
        stream,
        "{sent_json}"
    );
    if vendor == Vendor::Messages {
        assert!(sent_json["max_tokens"].as_u64().unwrap() > 0);
    } else if stream {
        assert_eq!(
            sent_json["stream_options"]["include_usage"], true,
            "{sent_json}"
        );
    }
    if !native(client, vendor) {
        assert!(
            sent_json.get("reasoning_effort").is_none() || vendor != Vendor::Messages,
            "no chat-completions field reaches the messages vendor: {sent_json}"
        );
    }

    match case {
        Case::Text => {
            assert_eq!(answer.text, text);
            assert_eq!(answer.stop.as_deref(), Some(stop_word(client, false)));
            assert!(answer.clean_end && answer.error.is_none());
            assert_usage(client, &answer);
        }
        Case::Tools => {
            let names: Vec<_> = answer.calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["get_weather", "get_time"], "{answer:?}");
            for call in &answer.calls {
                let args: Value = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|e| panic!("arguments {:?}: {e}", call.arguments));
                assert!(args.is_object(), "{args}");
                assert!(!call.id.is_empty());
            }
            assert_ne!(answer.calls[0].id, answer.calls[1].id);
            if client == Client::OpenAi && stream {
                assert_eq!(answer.call_indexes, [0, 1]);
            }
            assert_eq!(
                answer.text,
                upstream_sim::vendor_common::answer::TOOLS_PREAMBLE
            );
            assert_eq!(answer.stop.as_deref(), Some(stop_word(client, true)));
            // The tools reached the provider in its own format.
            let offered = sent_json["tools"].as_array().unwrap();
            assert_eq!(offered.len(), 2);
            if vendor == Vendor::Messages {
                assert_eq!(offered[0]["name"], "get_weather");
                assert!(offered[0]["input_schema"].is_object());
            } else {
                assert_eq!(offered[0]["function"]["name"], "get_weather");
                assert!(offered[0]["function"]["parameters"].is_object());
            }
        }
        Case::Thinking => {
            assert_eq!(answer.thinking.chars().count(), 120, "{answer:?}");
            assert_eq!(answer.text.chars().count(), 80, "{answer:?}");
            if client == Client::Anthropic && vendor == Vendor::Messages {
                assert_eq!(answer.signatures.len(), 1, "the signature survives");
                assert!(!answer.signatures[0].is_empty());
            }
            if vendor == Vendor::Messages {
                assert_eq!(sent_json["thinking"]["type"], "enabled", "{sent_json}");
                assert!(sent_json["thinking"]["budget_tokens"].as_u64().unwrap() >= 1024);
            } else {
                assert_eq!(sent_json["reasoning_effort"], "low", "{sent_json}");
            }
            assert!(answer.clean_end);
        }
        Case::Images => {
            assert_eq!(answer.text, text);
            let turn = &sent_json["messages"].as_array().unwrap().last().unwrap()["content"];
            let parts = turn.as_array().unwrap();
            if vendor == Vendor::Messages {
                let image = parts
                    .iter()
                    .find(|p| p["type"] == "image")
                    .expect("an image block");
                assert_eq!(image["source"]["data"], PNG_1X1);
                assert_eq!(image["source"]["media_type"], "image/png");
            } else {
                let image = parts
                    .iter()
                    .find(|p| p["type"] == "image_url")
                    .expect("an image_url part");
                assert_eq!(
                    image["image_url"]["url"],
                    format!("data:image/png;base64,{PNG_1X1}")
                );
            }
            if vendor == Vendor::Assistant {
                assert_eq!(sent.header("copilot-vision-request"), Some("true"));
            }
        }
        Case::Errors => {
            assert!(!answer.text.is_empty(), "content came before the error");
            assert!(
                answer.error.is_some(),
                "the stream ends with an error event: {answer:?}"
            );
            assert!(!answer.clean_end, "never a clean end for a broken answer");
        }
    }
}

/// The `primary` row: the same client-side checks, and what the upstream got.
fn check_primary(
    sim: &upstream_sim::SimHandle,
    client: Client,
    stream: bool,
    case: Case,
    text: &str,
    answer: &Answer,
) {
    let sent: Vec<Value> = sim
        .requests_to("/generateAssistantResponse")
        .iter()
        .map(|r| r.json().cloned().expect("a JSON chat body"))
        .collect();
    assert_eq!(sent.len(), 1, "one upstream call");
    let current = &sent[0]["conversationState"]["currentMessage"]["userInputMessage"];
    assert_eq!(current["modelId"], "claude-sonnet-4.5");
    // The primary echo answers the whole upstream message, which starts with
    // the fake-reasoning instructions; the client's text must end it intact.
    match case {
        Case::Text => {
            assert!(answer.text.ends_with(text), "{:?}", answer.text);
            assert_eq!(answer.stop.as_deref(), Some(stop_word(client, false)));
            assert!(answer.clean_end && answer.error.is_none());
            assert_usage(client, answer);
        }
        Case::Tools => {
            let names: Vec<_> = answer.calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["get_weather", "get_time"], "{answer:?}");
            for call in &answer.calls {
                let args: Value = serde_json::from_str(&call.arguments).unwrap();
                assert!(args.is_object(), "{args}");
            }
            assert_ne!(answer.calls[0].id, answer.calls[1].id);
            if client == Client::OpenAi && stream {
                assert_eq!(answer.call_indexes, [0, 1]);
            }
            assert_eq!(answer.stop.as_deref(), Some(stop_word(client, true)));
            let offered = current["userInputMessageContext"]["tools"]
                .as_array()
                .unwrap();
            assert_eq!(offered.len(), 2);
        }
        Case::Thinking => {
            assert_eq!(answer.thinking.chars().count(), 120, "{answer:?}");
            assert_eq!(answer.text.chars().count(), 80, "{answer:?}");
            assert!(answer.clean_end);
        }
        Case::Images => {
            assert!(answer.text.ends_with(text), "{:?}", answer.text);
            let images = current["images"]
                .as_array()
                .expect("images reach the upstream");
            assert_eq!(images[0]["format"], "png");
            assert_eq!(images[0]["source"]["bytes"], PNG_1X1);
        }
        Case::Errors => {
            assert!(!answer.text.is_empty(), "content came before the error");
            assert!(
                answer.error.is_some(),
                "the stream ends with an error event"
            );
            assert!(!answer.clean_end);
        }
    }
}

fn stop_word(client: Client, tools: bool) -> &'static str {
    match (client, tools) {
        (Client::OpenAi, false) => "stop",
        (Client::OpenAi, true) => "tool_calls",
        (Client::Anthropic, false) => "end_turn",
        (Client::Anthropic, true) => "tool_use",
    }
}

fn assert_usage(client: Client, answer: &Answer) {
    let usage = answer.usage.as_ref().expect("usage reaches the client");
    let (input, output) = match client {
        Client::OpenAi => ("prompt_tokens", "completion_tokens"),
        Client::Anthropic => ("input_tokens", "output_tokens"),
    };
    assert!(usage[input].as_u64().unwrap() > 0, "{usage}");
    assert!(usage[output].as_u64().unwrap() > 0, "{usage}");
}
