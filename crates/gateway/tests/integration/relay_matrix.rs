//! The conformance matrix through the gateway: each client format x each
//! direct provider x streaming / whole x text, parallel tool calls, thinking,
//! images and errors, against the simulator. One row of the table below is
//! one test; a missing row is a visible gap (`docs/conformance.md` shows the
//! same table).
//!
//! Every cell names the provider explicitly (`messages_vendor/...`) and checks
//! both ends: what the provider received (its own format, the model without
//! prefix, the content carried over) and what the client got back.

use serde_json::Value;
use upstream_sim::Vendor;

use super::relay_support::{
    body, image_content, native, only_chat, start, tools, Answer, Client, PNG_1X1,
};

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
                cell(Client::$client, Vendor::$vendor, $stream, Case::$case).await;
            }
        )*
    };
}

// client format, provider, streaming, case
matrix! {
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

/// The model a cell asks for, and the name the provider must receive.
fn model(vendor: Vendor) -> (String, &'static str) {
    let upstream = match vendor {
        Vendor::Messages => "claude-sonnet-4-5",
        Vendor::Completions => "gpt-4o",
        Vendor::Assistant => "gpt-4o",
        Vendor::Custom => "llama3",
    };
    (format!("{}/{upstream}", vendor.id()), upstream)
}

async fn cell(client: Client, vendor: Vendor, stream: bool, case: Case) {
    let env = start(&[vendor], &[]).await;
    let (model, upstream_model) = model(vendor);
    let text = match (case, stream) {
        (Case::Text, _) => "Hello relay: é ✓ 你好 — \"quoted\" \\ back\nsim: echo chunk=3",
        (Case::Tools, _) => "Use both tools.\nsim: tools n=2 fragments=3 interleave=true",
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

    // What the provider received.
    let sent = only_chat(&env.sim, vendor);
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
