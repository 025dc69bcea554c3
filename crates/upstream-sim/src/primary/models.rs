//! The model catalogue: what `GET /ListAvailableModels` answers (with
//! `maxResults`/`nextToken` paging) and which `modelId`s chat accepts.

use serde::Serialize;
use serde_json::{json, Value};

/// One model as `ListAvailableModels` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub model_id: String,
    pub model_name: String,
    pub description: String,
    pub supported_input_types: Vec<String>,
    pub token_limits: TokenLimits,
}

/// `tokenLimits` of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenLimits {
    pub max_input_tokens: u64,
    pub max_output_tokens: u64,
}

impl ModelInfo {
    /// A model with text and image input.
    pub fn new(id: &str, name: &str, description: &str, max_in: u64, max_out: u64) -> Self {
        ModelInfo {
            model_id: id.to_owned(),
            model_name: name.to_owned(),
            description: description.to_owned(),
            supported_input_types: vec!["TEXT".to_owned(), "IMAGE".to_owned()],
            token_limits: TokenLimits {
                max_input_tokens: max_in,
                max_output_tokens: max_out,
            },
        }
    }

    fn text_only(mut self) -> Self {
        self.supported_input_types = vec!["TEXT".to_owned()];
        self
    }
}

/// A realistic catalogue, `auto` first.
pub fn default_models() -> Vec<ModelInfo> {
    vec![
        ModelInfo::new(
            "auto",
            "Auto",
            "Models chosen by task for optimal usage and consistent quality",
            200_000,
            64_000,
        ),
        ModelInfo::new(
            "claude-sonnet-4",
            "Claude Sonnet 4",
            "Hybrid reasoning and coding for regular use",
            200_000,
            64_000,
        ),
        ModelInfo::new(
            "claude-sonnet-4.5",
            "Claude Sonnet 4.5",
            "The latest Claude Sonnet model",
            200_000,
            64_000,
        ),
        ModelInfo::new(
            "claude-haiku-4.5",
            "Claude Haiku 4.5",
            "The latest Claude Haiku model",
            200_000,
            64_000,
        ),
        ModelInfo::new(
            "claude-opus-4.5",
            "Claude Opus 4.5",
            "The Claude Opus 4.5 model",
            200_000,
            32_000,
        ),
        ModelInfo::new(
            "deepseek-3.2",
            "DeepSeek 3.2",
            "Open-weight reasoning model",
            128_000,
            32_000,
        )
        .text_only(),
        ModelInfo::new(
            "glm-5",
            "GLM 5",
            "Open-weight coding model",
            128_000,
            32_000,
        )
        .text_only(),
        ModelInfo::new(
            "minimax-m2.1",
            "MiniMax M2.1",
            "Open-weight agentic model",
            192_000,
            32_000,
        )
        .text_only(),
        ModelInfo::new(
            "qwen3-coder-next",
            "Qwen3 Coder Next",
            "Open-weight coding model",
            256_000,
            64_000,
        )
        .text_only(),
    ]
}

/// The catalogue one simulator serves.
#[derive(Debug)]
pub(crate) struct ModelCatalog {
    models: Vec<ModelInfo>,
}

/// A `nextToken` value that does not come from this catalogue.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadNextToken;

/// Context window used for usage percentages of models not in the catalogue.
const FALLBACK_MAX_INPUT: u64 = 200_000;

impl ModelCatalog {
    pub fn new(models: Vec<ModelInfo>) -> Self {
        ModelCatalog { models }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.models.iter().any(|m| m.model_id == id)
    }

    pub fn max_input_tokens(&self, id: &str) -> u64 {
        self.models
            .iter()
            .find(|m| m.model_id == id)
            .map_or(FALLBACK_MAX_INPUT, |m| m.token_limits.max_input_tokens)
    }

    /// One page of the listing. `next_token` is the opaque token of a previous page.
    pub fn page(
        &self,
        max_results: Option<usize>,
        next_token: Option<&str>,
    ) -> Result<Value, BadNextToken> {
        let start = match next_token {
            None => 0,
            Some(t) => t
                .strip_prefix("page-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n > 0 && *n < self.models.len())
                .ok_or(BadNextToken)?,
        };
        let size = max_results.unwrap_or(self.models.len()).max(1);
        let end = start.saturating_add(size).min(self.models.len());
        let next = (end < self.models.len()).then(|| format!("page-{end}"));
        let default_model = self
            .models
            .first()
            .map_or(Value::Null, |m| json!({"modelId": m.model_id}));
        Ok(json!({
            "models": self.models.get(start..end).unwrap_or(&[]),
            "defaultModel": default_model,
            "nextToken": next,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_listing_has_the_real_shape() {
        let cat = ModelCatalog::new(default_models());
        let page = cat.page(None, None).unwrap();
        assert_eq!(page["defaultModel"], json!({"modelId": "auto"}));
        assert_eq!(page["nextToken"], Value::Null);
        let sonnet = &page["models"][2];
        assert_eq!(
            sonnet,
            &json!({
                "modelId": "claude-sonnet-4.5",
                "modelName": "Claude Sonnet 4.5",
                "description": "The latest Claude Sonnet model",
                "supportedInputTypes": ["TEXT", "IMAGE"],
                "tokenLimits": {"maxInputTokens": 200000, "maxOutputTokens": 64000}
            })
        );
        let ids: Vec<_> = page["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["modelId"].as_str().unwrap())
            .collect();
        for id in [
            "auto",
            "claude-sonnet-4",
            "claude-haiku-4.5",
            "claude-opus-4.5",
            "deepseek-3.2",
        ] {
            assert!(ids.contains(&id), "{id}");
        }
    }

    #[test]
    fn paging_walks_every_model_once() {
        let cat = ModelCatalog::new(default_models());
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = cat.page(Some(4), token.as_deref()).unwrap();
            for m in page["models"].as_array().unwrap() {
                seen.push(m["modelId"].as_str().unwrap().to_owned());
            }
            match page["nextToken"].as_str() {
                Some(t) => token = Some(t.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen.len(), default_models().len());
        assert_eq!(cat.page(None, Some("bogus")), Err(BadNextToken));
    }

    #[test]
    fn lookups() {
        let cat = ModelCatalog::new(default_models());
        assert!(cat.contains("claude-sonnet-4.5"));
        assert!(!cat.contains("claude-sonnet-4-5"));
        assert_eq!(cat.max_input_tokens("deepseek-3.2"), 128_000);
        assert_eq!(cat.max_input_tokens("unknown"), 200_000);
    }
}
