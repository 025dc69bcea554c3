//! The static model list used when the upstream listing cannot be fetched
//! (protocol doc 1.10, 1.11: the ancestor's fallback list). Availability on a
//! given account may differ; the upstream has the last word on each request.

use super::ModelInfo;

/// (id, display name, context window)
const MODELS: [(&str, &str, Option<u32>); 13] = [
    ("auto", "Auto (the upstream chooses)", None),
    ("claude-sonnet-4", "Claude Sonnet 4", Some(200_000)),
    ("claude-sonnet-4.5", "Claude Sonnet 4.5", Some(200_000)),
    ("claude-sonnet-4.6", "Claude Sonnet 4.6", Some(200_000)),
    ("claude-haiku-4.5", "Claude Haiku 4.5", Some(200_000)),
    ("claude-opus-4.5", "Claude Opus 4.5", Some(200_000)),
    ("claude-opus-4.6", "Claude Opus 4.6", Some(200_000)),
    ("claude-opus-4.7", "Claude Opus 4.7", Some(200_000)),
    ("deepseek-3.2", "DeepSeek 3.2", None),
    ("glm-5", "GLM 5", None),
    ("minimax-m2.1", "MiniMax M2.1", None),
    ("minimax-m2.5", "MiniMax M2.5", None),
    ("qwen3-coder-next", "Qwen3 Coder Next", None),
];

/// The fallback list as model entries.
pub fn fallback_models() -> Vec<ModelInfo> {
    MODELS
        .iter()
        .map(|(id, name, context)| ModelInfo {
            id: (*id).to_owned(),
            name: Some((*name).to_owned()),
            description: None,
            context_window: *context,
            max_output_tokens: None,
        })
        .collect()
}
