//! The assistant vendor's model list: the OpenAI list shape with the extra
//! fields the real one carries (`name`, `vendor`, `version`, `preview`,
//! `model_picker_enabled`, and `capabilities` with family, type, tokenizer,
//! limits and supported features). Chat models use dotted versions
//! (`claude-sonnet-4.5`), as the real list does; one embeddings model is in it.

use serde_json::{json, Value};

/// One model of the list.
struct Model {
    id: &'static str,
    name: &'static str,
    vendor: &'static str,
    version: &'static str,
    family: &'static str,
    kind: &'static str,
    tokenizer: &'static str,
    context: u64,
    output: u64,
    prompt: u64,
    vision: bool,
    preview: bool,
}

const MODELS: &[Model] = &[
    Model {
        id: "gpt-4.1",
        name: "GPT-4.1",
        vendor: "Azure OpenAI",
        version: "gpt-4.1-2025-04-14",
        family: "gpt-4.1",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 128_000,
        output: 16_384,
        prompt: 128_000,
        vision: true,
        preview: false,
    },
    Model {
        id: "gpt-4o",
        name: "GPT-4o",
        vendor: "Azure OpenAI",
        version: "gpt-4o-2024-11-20",
        family: "gpt-4o",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 128_000,
        output: 4_096,
        prompt: 64_000,
        vision: true,
        preview: false,
    },
    Model {
        id: "gpt-5-mini",
        name: "GPT-5 mini",
        vendor: "Azure OpenAI",
        version: "gpt-5-mini",
        family: "gpt-5-mini",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 264_000,
        output: 64_000,
        prompt: 128_000,
        vision: true,
        preview: false,
    },
    Model {
        id: "claude-sonnet-4",
        name: "Claude Sonnet 4",
        vendor: "Anthropic",
        version: "claude-sonnet-4",
        family: "claude-sonnet-4",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 216_000,
        output: 16_000,
        prompt: 128_000,
        vision: true,
        preview: false,
    },
    Model {
        id: "claude-sonnet-4.5",
        name: "Claude Sonnet 4.5",
        vendor: "Anthropic",
        version: "claude-sonnet-4.5",
        family: "claude-sonnet-4.5",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 144_000,
        output: 16_000,
        prompt: 128_000,
        vision: true,
        preview: false,
    },
    Model {
        id: "gemini-2.5-pro",
        name: "Gemini 2.5 Pro",
        vendor: "Google",
        version: "gemini-2.5-pro",
        family: "gemini-2.5-pro",
        kind: "chat",
        tokenizer: "o200k_base",
        context: 128_000,
        output: 64_000,
        prompt: 128_000,
        vision: true,
        preview: true,
    },
    Model {
        id: "text-embedding-3-small",
        name: "Embedding V3 small",
        vendor: "Azure OpenAI",
        version: "text-embedding-3-small",
        family: "text-embedding-3-small",
        kind: "embeddings",
        tokenizer: "cl100k_base",
        context: 8_191,
        output: 0,
        prompt: 8_191,
        vision: false,
        preview: false,
    },
];

fn model_json(m: &Model) -> Value {
    let chat = m.kind == "chat";
    let supports = if chat {
        json!({"streaming": true, "tool_calls": true, "parallel_tool_calls": true,
            "structured_outputs": true, "vision": m.vision})
    } else {
        json!({"dimensions": true})
    };
    let limits = if chat {
        json!({"max_context_window_tokens": m.context, "max_output_tokens": m.output,
            "max_prompt_tokens": m.prompt})
    } else {
        json!({"max_inputs": 512})
    };
    json!({
        "id": m.id,
        "name": m.name,
        "object": "model",
        "vendor": m.vendor,
        "version": m.version,
        "preview": m.preview,
        "model_picker_enabled": chat,
        "capabilities": {
            "family": m.family, "type": m.kind, "object": "model_capabilities",
            "tokenizer": m.tokenizer, "limits": limits, "supports": supports,
        },
    })
}

/// `GET /models`.
pub fn list() -> Value {
    json!({"object": "list", "data": MODELS.iter().map(model_json).collect::<Vec<_>>()})
}

/// Whether chat serves `model` (strict models): listed chat models only.
pub fn known(model: &str) -> bool {
    MODELS.iter().any(|m| m.id == model && m.kind == "chat")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_shape() {
        let l = list();
        assert_eq!(l["object"], "list");
        let first = &l["data"][0];
        assert_eq!(first["object"], "model");
        assert_eq!(first["capabilities"]["supports"]["tool_calls"], true);
        assert!(first["capabilities"]["limits"]["max_prompt_tokens"].is_u64());
        assert!(known("claude-sonnet-4.5"));
        assert!(!known("text-embedding-3-small"));
        assert!(!known("claude-sonnet-4-5"));
    }
}
