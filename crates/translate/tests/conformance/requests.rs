//! Cross-format request cells: a client request of one format, through
//! `ChatRequest`, into the request of a provider of another format (and into
//! the `primary` request), checked member by member: system prompts, tool
//! definitions, tool calls paired with their results, images, stop
//! sequences, `tool_choice`, and what each target deliberately drops.

use serde_json::{json, Value};
use translate::primary::{build_request, RequestOptions};
use translate::{anthropic, openai, ChatRequest, TranslateError};

use crate::fixtures;

/// Every request cell, by test name (for the document check).
pub const CELLS: &[&str] = &[
    "openai_request_to_anthropic_provider",
    "openai_request_to_primary",
    "anthropic_request_to_openai_provider",
    "anthropic_request_to_primary",
    "tool_choice_from_openai_clients",
    "tool_choice_from_anthropic_clients",
    "url_images_reach_anthropic_but_are_refused_for_primary",
    "thinking_requests_cross_over_as_effort_and_budget",
];

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const JPEG: &str = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==";

fn openai_request(body: &Value) -> ChatRequest {
    let req: wire::openai::ChatCompletionRequest = serde_json::from_value(body.clone()).unwrap();
    openai::into_chat_request(req).unwrap()
}

fn anthropic_request(body: &Value) -> ChatRequest {
    let req: wire::anthropic::MessagesRequest = serde_json::from_value(body.clone()).unwrap();
    anthropic::into_chat_request(req).unwrap()
}

fn fixture(name: &str) -> Value {
    serde_json::from_slice(&fixtures::read(&format!("requests/{name}.json"))).unwrap()
}

fn primary_options() -> RequestOptions {
    RequestOptions::new("conv-conformance-0001", "claude-sonnet-4.5")
}

fn to_primary(req: &ChatRequest) -> Result<Value, TranslateError> {
    build_request(req, &primary_options()).map(|r| serde_json::to_value(r).unwrap())
}

/// Asserts `actual == expected`, naming the first differing path.
fn assert_json(actual: &Value, expected: &Value) {
    fn walk(path: &str, a: &Value, e: &Value) {
        match (a, e) {
            (Value::Object(a), Value::Object(e)) => {
                let ak: Vec<_> = a.keys().collect();
                let ek: Vec<_> = e.keys().collect();
                let mut ak_sorted = ak.clone();
                let mut ek_sorted = ek.clone();
                ak_sorted.sort();
                ek_sorted.sort();
                assert_eq!(ak_sorted, ek_sorted, "members of {path}");
                for (k, ev) in e {
                    walk(&format!("{path}.{k}"), &a[k], ev);
                }
            }
            (Value::Array(a), Value::Array(e)) => {
                assert_eq!(a.len(), e.len(), "length of {path}: {a:?}");
                for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                    walk(&format!("{path}[{i}]"), av, ev);
                }
            }
            _ => assert_eq!(a, e, "value of {path}"),
        }
    }
    walk("$", actual, expected);
}

fn weather_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["city"]
    })
}

fn time_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

fn primary_tools() -> Value {
    json!([
        {"toolSpecification": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "inputSchema": {"json": weather_schema()}
        }},
        {"toolSpecification": {
            "name": "get_local_time",
            "description": "Local time in a city.",
            "inputSchema": {"json": time_schema()}
        }}
    ])
}

#[test]
fn openai_request_to_anthropic_provider() {
    let req = openai_request(&fixture("openai_client"));
    let out = serde_json::to_value(anthropic::from_chat_request(&req)).unwrap();
    assert_json(
        &out,
        &json!({
            "model": "gpt-4o",
            "max_tokens": 800,
            // system and developer messages, in order, as blocks.
            "system": [
                {"type": "text", "text": "Tu es un assistant de voyage. Réponds en français."},
                {"type": "text", "text": "Préfère les unités métriques."}
            ],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "Quel temps fait-il à Zürich, et quelle heure est-il à São Paulo ? Voici ma photo."},
                    // The data URL becomes a base64 source; `detail` has no equivalent.
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
                ]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_8fKq2ZrLw1XyQe5T", "name": "get_weather",
                     "input": {"city": "Zürich", "unit": "celsius"}},
                    {"type": "tool_use", "id": "call_Tn4v0HsPq9BdW2mK", "name": "get_local_time",
                     "input": {"city": "São Paulo"}}
                ]},
                // Both tool messages and the next user message: one user
                // turn, results first, paired by id with the calls above.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_8fKq2ZrLw1XyQe5T",
                     "content": "{\"temp_c\": 7, \"sky\": \"couvert\"}"},
                    {"type": "tool_result", "tool_use_id": "call_Tn4v0HsPq9BdW2mK", "content": "14:05"},
                    {"type": "text", "text": "Merci ! Résume en une phrase."}
                ]}
            ],
            "stream": true,
            "temperature": 0.3,
            "stop_sequences": ["\n\nFIN", "###"],
            "tools": [
                {"name": "get_weather", "description": "Current weather for a city.", "input_schema": weather_schema()},
                {"name": "get_local_time", "description": "Local time in a city.", "input_schema": time_schema()}
            ],
            // required -> any; parallel_tool_calls: false moves inside.
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true}
        }),
    );
}

#[test]
fn openai_request_to_primary() {
    let req = openai_request(&fixture("openai_client"));
    let out = to_primary(&req).unwrap();
    assert_json(
        &out,
        &json!({"conversationState": {
            "chatTriggerType": "MANUAL",
            "conversationId": "conv-conformance-0001",
            "history": [
                {"userInputMessage": {
                    // System blocks joined and folded into the first user turn.
                    "content": "Tu es un assistant de voyage. Réponds en français.\nPréfère les unités métriques.\n\nQuel temps fait-il à Zürich, et quelle heure est-il à São Paulo ? Voici ma photo.",
                    "modelId": "claude-sonnet-4.5",
                    "origin": "AI_EDITOR",
                    "images": [{"format": "png", "source": {"bytes": PNG}}]
                }},
                {"assistantResponseMessage": {
                    "content": "(empty)",
                    "toolUses": [
                        {"toolUseId": "call_8fKq2ZrLw1XyQe5T", "name": "get_weather",
                         "input": {"city": "Zürich", "unit": "celsius"}},
                        {"toolUseId": "call_Tn4v0HsPq9BdW2mK", "name": "get_local_time",
                         "input": {"city": "São Paulo"}}
                    ]
                }}
            ],
            "currentMessage": {"userInputMessage": {
                // `required` has no field upstream: an instruction says it.
                "content": "Merci ! Résume en une phrase.\n\nAnswer this message by calling at least one of the available tools.",
                "modelId": "claude-sonnet-4.5",
                "origin": "AI_EDITOR",
                "userInputMessageContext": {
                    "tools": primary_tools(),
                    "toolResults": [
                        {"toolUseId": "call_8fKq2ZrLw1XyQe5T", "status": "success",
                         "content": [{"text": "{\"temp_c\": 7, \"sky\": \"couvert\"}"}]},
                        {"toolUseId": "call_Tn4v0HsPq9BdW2mK", "status": "success",
                         "content": [{"text": "14:05"}]}
                    ]
                }
            }}
        }}),
    );
    // Nothing carries stop sequences, sampling, the token limit or the user.
    let raw = out.to_string();
    for absent in ["FIN", "###", "temperature", "800", "user-2718"] {
        assert!(
            !raw.contains(absent),
            "{absent} reached the primary request"
        );
    }
}

#[test]
fn anthropic_request_to_openai_provider() {
    let req = anthropic_request(&fixture("anthropic_client"));
    let out = serde_json::to_value(openai::from_chat_request(&req)).unwrap();
    assert_json(
        &out,
        &json!({
            "model": "claude-sonnet-4-5",
            "messages": [
                // System blocks joined into one leading system message;
                // cache_control has no place in OpenAI.
                {"role": "system", "content": "Du bist ein Reiseassistent.\n\nAntworte knapp."},
                {"role": "user", "content": [
                    {"type": "text", "text": "Wie ist das Wetter in Zürich? Hier ein Foto vom Himmel."},
                    {"type": "image_url", "image_url": {"url": format!("data:image/jpeg;base64,{JPEG}")}}
                ]},
                // Thinking is dropped; text and calls stay in one message.
                {"role": "assistant", "content": "Ich frage beide Dienste ab.", "tool_calls": [
                    {"id": "toolu_01A09q90qw90lq917835lq9", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Zürich\",\"unit\":\"celsius\"}"}},
                    {"id": "toolu_01B7fQ2mNcV8pXsL4dKe3Wz", "type": "function",
                     "function": {"name": "get_local_time", "arguments": "{\"city\":\"Zürich\"}"}}
                ]},
                // Results become tool messages right after, paired by id;
                // the error flag becomes an `Error: ` prefix.
                {"role": "tool", "tool_call_id": "toolu_01A09q90qw90lq917835lq9", "content": "7 °C, bedeckt"},
                {"role": "tool", "tool_call_id": "toolu_01B7fQ2mNcV8pXsL4dKe3Wz",
                 "content": "Error: Zeitdienst nicht erreichbar"},
                // Tool messages take text only: the result's image moves
                // to the user message that follows them.
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}},
                    {"type": "text", "text": "Und jetzt bitte eine Zusammenfassung."}
                ]}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.2,
            "max_completion_tokens": 2048,
            "stop": "</antwort>",
            "tools": [
                {"type": "function", "function": {"name": "get_weather",
                 "description": "Current weather for a city.", "parameters": weather_schema()}},
                {"type": "function", "function": {"name": "get_local_time",
                 "description": "Local time in a city.", "parameters": time_schema()}}
            ],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "parallel_tool_calls": false,
            // metadata.user_id travels as `user`; top_k has no equivalent.
            "user": "user-3141"
        }),
    );
}

#[test]
fn anthropic_request_to_primary() {
    let req = anthropic_request(&fixture("anthropic_client"));
    let out = to_primary(&req).unwrap();
    assert_json(
        &out,
        &json!({"conversationState": {
            "chatTriggerType": "MANUAL",
            "conversationId": "conv-conformance-0001",
            "history": [
                {"userInputMessage": {
                    "content": "Du bist ein Reiseassistent.\nAntworte knapp.\n\nWie ist das Wetter in Zürich? Hier ein Foto vom Himmel.",
                    "modelId": "claude-sonnet-4.5",
                    "origin": "AI_EDITOR",
                    "images": [{"format": "jpeg", "source": {"bytes": JPEG}}]
                }},
                // Earlier reasoning is not sent back.
                {"assistantResponseMessage": {
                    "content": "Ich frage beide Dienste ab.",
                    "toolUses": [
                        {"toolUseId": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                         "input": {"city": "Zürich", "unit": "celsius"}},
                        {"toolUseId": "toolu_01B7fQ2mNcV8pXsL4dKe3Wz", "name": "get_local_time",
                         "input": {"city": "Zürich"}}
                    ]
                }}
            ],
            "currentMessage": {"userInputMessage": {
                "content": "Und jetzt bitte eine Zusammenfassung.\n\nAnswer this message by calling the tool `get_weather`.",
                "modelId": "claude-sonnet-4.5",
                "origin": "AI_EDITOR",
                // Results carry text only: the image moves to the message.
                "images": [{"format": "png", "source": {"bytes": PNG}}],
                "userInputMessageContext": {
                    "tools": primary_tools(),
                    "toolResults": [
                        {"toolUseId": "toolu_01A09q90qw90lq917835lq9", "status": "success",
                         "content": [{"text": "7 °C, bedeckt"}, {"text": "(image attached to this message)"}]},
                        {"toolUseId": "toolu_01B7fQ2mNcV8pXsL4dKe3Wz", "status": "error",
                         "content": [{"text": "Zeitdienst nicht erreichbar"}]}
                    ]
                }
            }}
        }}),
    );
    let raw = out.to_string();
    for absent in [
        "</antwort>",
        "user-3141",
        "Ich brauche",
        "ephemeral",
        "temperature",
    ] {
        assert!(
            !raw.contains(absent),
            "{absent} reached the primary request"
        );
    }
}

fn small_openai(tool_choice: Value) -> Value {
    json!({
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "Wetter in Zürich?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
                   "description": "Current weather for a city.", "parameters": weather_schema()}}],
        "tool_choice": tool_choice
    })
}

fn small_anthropic(tool_choice: Value) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": "Wetter in Zürich?"}],
        "tools": [{"name": "get_weather", "description": "Current weather for a city.",
                   "input_schema": weather_schema()}],
        "tool_choice": tool_choice
    })
}

/// What `tool_choice` becomes upstream in `primary`: the current message's
/// content and whether the tools are sent.
fn primary_choice(req: &ChatRequest) -> (String, bool) {
    let out = to_primary(req).unwrap();
    let msg = &out["conversationState"]["currentMessage"]["userInputMessage"];
    let tools_sent = msg["userInputMessageContext"]["tools"].is_array();
    (msg["content"].as_str().unwrap().to_owned(), tools_sent)
}

const REQUIRED: &str =
    "Wetter in Zürich?\n\nAnswer this message by calling at least one of the available tools.";
const NAMED: &str = "Wetter in Zürich?\n\nAnswer this message by calling the tool `get_weather`.";

#[test]
fn tool_choice_from_openai_clients() {
    let table = [
        (
            json!("auto"),
            json!({"type": "auto"}),
            ("Wetter in Zürich?", true),
        ),
        // `none` sends no tools at all upstream: the only sure way.
        (
            json!("none"),
            json!({"type": "none"}),
            ("Wetter in Zürich?", false),
        ),
        (json!("required"), json!({"type": "any"}), (REQUIRED, true)),
        (
            json!({"type": "function", "function": {"name": "get_weather"}}),
            json!({"type": "tool", "name": "get_weather"}),
            (NAMED, true),
        ),
    ];
    for (client, to_anthropic, (content, tools_sent)) in table {
        let req = openai_request(&small_openai(client.clone()));
        let out = serde_json::to_value(anthropic::from_chat_request(&req)).unwrap();
        assert_eq!(out["tool_choice"], to_anthropic, "{client}");
        assert_eq!(
            primary_choice(&req),
            (content.to_owned(), tools_sent),
            "{client}"
        );
    }
}

#[test]
fn tool_choice_from_anthropic_clients() {
    let table = [
        (
            json!({"type": "auto"}),
            json!("auto"),
            ("Wetter in Zürich?", true),
        ),
        (
            json!({"type": "none"}),
            json!("none"),
            ("Wetter in Zürich?", false),
        ),
        (json!({"type": "any"}), json!("required"), (REQUIRED, true)),
        (
            json!({"type": "tool", "name": "get_weather"}),
            json!({"type": "function", "function": {"name": "get_weather"}}),
            (NAMED, true),
        ),
    ];
    for (client, to_openai, (content, tools_sent)) in table {
        let req = anthropic_request(&small_anthropic(client.clone()));
        let out = serde_json::to_value(openai::from_chat_request(&req)).unwrap();
        assert_eq!(out["tool_choice"], to_openai, "{client}");
        assert!(out.get("parallel_tool_calls").is_none(), "{client}");
        assert_eq!(
            primary_choice(&req),
            (content.to_owned(), tools_sent),
            "{client}"
        );
    }
}

#[test]
fn url_images_reach_anthropic_but_are_refused_for_primary() {
    let body = json!({
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Was zeigt dieses Bild?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/himmel.png"}}
        ]}]
    });
    let req = openai_request(&body);
    let out = serde_json::to_value(anthropic::from_chat_request(&req)).unwrap();
    assert_eq!(
        out["messages"][0]["content"][1],
        json!({"type": "image", "source": {"type": "url", "url": "https://example.com/himmel.png"}})
    );
    // The primary upstream cannot fetch URLs: a typed error naming the part.
    match to_primary(&req) {
        Err(TranslateError::Invalid { field, .. }) => {
            assert_eq!(field, "messages[0].content[1]")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn thinking_requests_cross_over_as_effort_and_budget() {
    // Anthropic thinking budget -> OpenAI reasoning_effort.
    let mut body = small_anthropic(json!({"type": "auto"}));
    body["max_tokens"] = json!(16000);
    body["thinking"] = json!({"type": "enabled", "budget_tokens": 10000});
    let out = serde_json::to_value(openai::from_chat_request(&anthropic_request(&body))).unwrap();
    assert_eq!(out["reasoning_effort"], "medium");
    assert_eq!(out["max_completion_tokens"], 16000);

    // OpenAI reasoning_effort -> Anthropic thinking budget; temperature is
    // dropped because extended thinking forbids it.
    let mut body = small_openai(json!("auto"));
    body["reasoning_effort"] = json!("high");
    body["temperature"] = json!(0.7);
    let out = serde_json::to_value(anthropic::from_chat_request(&openai_request(&body))).unwrap();
    assert_eq!(
        out["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    assert!(
        out["max_tokens"].as_u64().unwrap() > 8192,
        "room for the answer"
    );
    assert!(out.get("temperature").is_none());
}
