//! Fetching the primary provider's model list: `GET {api}/ListAvailableModels`
//! with `origin=AI_EDITOR` and, when known, `profileArn` (protocol doc 1.10,
//! fixing 10.1 item 4), following `nextToken` pages. The call goes through the
//! upstream retry policy, so a 403 refreshes the token once.

use axum::http::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION};
use axum::http::Uri;
use serde::Deserialize;

use super::ModelInfo;
use crate::error::GatewayError;
use crate::providers::primary::credentials::TokenManager;
use crate::providers::primary::request::bearer_header;
use crate::upstream::client::HttpClient;
use crate::upstream::http::{send_with_retry, Outgoing, RetryPolicy, UpstreamError};

/// At most this many pages are followed (a loop guard; real lists fit in one).
const MAX_PAGES: usize = 10;
/// Largest page read (real ones are a few kilobytes).
const MAX_PAGE_BYTES: usize = 16 * 1024 * 1024;

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
    pub http: HttpClient,
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
        let query = {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            query.append_pair("origin", "AI_EDITOR");
            if let Some(arn) = self.tokens.profile_arn() {
                query.append_pair("profileArn", &arn);
            }
            if let Some(t) = next_token {
                query.append_pair("nextToken", t);
            }
            query.finish()
        };
        let url = format!("{}/ListAvailableModels?{query}", self.api_endpoint);
        let url = Uri::try_from(url).map_err(GatewayError::internal)?;
        let resp = send_with_retry(
            "primary",
            &self.policy,
            &self.http,
            |_| {
                let url = url.clone();
                let tokens = self.tokens.clone();
                async move {
                    let token = tokens.access_token().await?;
                    let mut headers = HeaderMap::new();
                    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
                    headers.insert(AUTHORIZATION, bearer_header(&token)?);
                    Ok(Outgoing::get(url, headers))
                }
            },
            || {
                let tokens = self.tokens.clone();
                async move { tokens.force_refresh().await.map(|_| ()) }
            },
        )
        .await?;
        let bytes = resp
            .bytes(MAX_PAGE_BYTES)
            .await
            .map_err(|e| UpstreamError::Transport {
                message: format!("reading the model list failed: {e}"),
                timeout: false,
            })?;
        serde_json::from_slice(&bytes).map_err(|e| UpstreamError::Status {
            status: axum::http::StatusCode::BAD_GATEWAY,
            message: format!("model list not understood: {e}"),
            reason: None,
            retry_after: None,
        })
    }
}
