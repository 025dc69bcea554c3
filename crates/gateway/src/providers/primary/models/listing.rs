//! Fetching the primary provider's model list: `GET {api}/ListAvailableModels`
//! with `origin=AI_EDITOR` and, when known, `profileArn` (protocol doc 1.10,
//! fixing 10.1 item 4), following `nextToken` pages. The call goes through the
//! upstream retry policy, so a 403 refreshes the token once.

use serde::Deserialize;

use super::ModelInfo;
use crate::providers::primary::credentials::TokenManager;
use crate::upstream::http::{send_with_retry, RetryPolicy, UpstreamError};

/// At most this many pages are followed (a loop guard; real lists fit in one).
const MAX_PAGES: usize = 10;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListResponse {
    #[serde(default)]
    models: Vec<RawModel>,
    #[serde(default)]
    default_model: Option<RawDefault>,
    #[serde(default)]
    next_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawModel {
    model_id: String,
    #[serde(default)]
    model_name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    token_limits: Option<TokenLimits>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenLimits {
    #[serde(default)]
    max_input_tokens: Option<u32>,
    #[serde(default)]
    max_output_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDefault {
    model_id: String,
}

/// What the model refresher needs to call the upstream.
#[derive(Debug, Clone)]
pub struct ModelFetcher {
    pub http: reqwest::Client,
    /// Primary API base, without trailing `/`.
    pub api_endpoint: String,
    pub tokens: TokenManager,
    pub policy: RetryPolicy,
}

impl ModelFetcher {
    /// Every listed model, in the upstream's order; the default model (`auto`)
    /// is added when the list does not contain it.
    pub async fn fetch(&self) -> Result<Vec<ModelInfo>, UpstreamError> {
        let mut models: Vec<ModelInfo> = Vec::new();
        let mut default_model = None;
        let mut next: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.fetch_page(next.as_deref()).await?;
            default_model = default_model.or(page.default_model.map(|d| d.model_id));
            for raw in page.models {
                if raw.model_id.trim().is_empty() || models.iter().any(|m| m.id == raw.model_id) {
                    continue;
                }
                let limits = raw.token_limits;
                models.push(ModelInfo {
                    id: raw.model_id,
                    name: raw.model_name,
                    description: raw.description,
                    context_window: limits.as_ref().and_then(|l| l.max_input_tokens),
                    max_output_tokens: limits.as_ref().and_then(|l| l.max_output_tokens),
                });
            }
            next = page.next_token.filter(|t| !t.is_empty());
            if next.is_none() {
                break;
            }
        }
        if let Some(id) = default_model {
            if !models.iter().any(|m| m.id.eq_ignore_ascii_case(&id)) {
                models.insert(
                    0,
                    ModelInfo {
                        id,
                        name: Some("Auto (the upstream chooses)".into()),
                        description: None,
                        context_window: None,
                        max_output_tokens: None,
                    },
                );
            }
        }
        Ok(models)
    }

    async fn fetch_page(&self, next_token: Option<&str>) -> Result<ListResponse, UpstreamError> {
        let url = format!("{}/ListAvailableModels", self.api_endpoint);
        let profile_arn = self.tokens.profile_arn();
        let resp = send_with_retry(
            "primary",
            &self.policy,
            |_| {
                let mut query: Vec<(&str, String)> = vec![("origin", "AI_EDITOR".into())];
                if let Some(arn) = &profile_arn {
                    query.push(("profileArn", arn.clone()));
                }
                if let Some(t) = next_token {
                    query.push(("nextToken", t.to_owned()));
                }
                let req = self
                    .http
                    .get(&url)
                    .query(&query)
                    .header(reqwest::header::ACCEPT, "application/json");
                let tokens = self.tokens.clone();
                async move { Ok(req.bearer_auth(tokens.access_token().await?)) }
            },
            || {
                let tokens = self.tokens.clone();
                async move { tokens.force_refresh().await.map(|_| ()) }
            },
        )
        .await?;
        let bytes = resp.bytes().await.map_err(|e| UpstreamError::Transport {
            message: format!("reading the model list failed: {e}"),
            timeout: e.is_timeout(),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| UpstreamError::Status {
            status: axum::http::StatusCode::BAD_GATEWAY,
            message: format!("model list not understood: {e}"),
            reason: None,
            retry_after: None,
        })
    }
}
