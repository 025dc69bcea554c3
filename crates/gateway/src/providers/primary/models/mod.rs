//! The primary provider's models: the [`ModelCache`] (filled at start from the
//! upstream listing, refreshed every `model_cache_refresh`, a static list when
//! the listing fails), and name resolution against it ([`resolver`]).
//!
//! The cache holds one immutable [`Catalog`] behind `ArcSwap`: a refresh builds
//! a new catalog and swaps it in whole, so a request never sees half a list.

pub mod fallback;
pub mod listing;
pub mod resolver;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

pub use listing::ModelFetcher;

use crate::cache::FastMap;
use crate::error::GatewayError;
use crate::upstream::http::UpstreamError;

/// Context window assumed for the hidden legacy models.
const HIDDEN_CONTEXT_WINDOW: u32 = 200_000;

/// One model of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    /// The upstream `modelId` (`claude-sonnet-4.5`).
    pub id: String,
    /// Display name (`Claude Sonnet 4.5`).
    pub name: Option<String>,
    pub description: Option<String>,
    /// `tokenLimits.maxInputTokens`.
    pub context_window: Option<u32>,
    /// `tokenLimits.maxOutputTokens`.
    pub max_output_tokens: Option<u32>,
}

/// The result of resolving a client's model name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedModel {
    /// The upstream `modelId` to send.
    pub id: String,
    pub context_window: Option<u32>,
}

/// Where the current list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogSource {
    Upstream,
    Fallback,
}

/// One immutable model list with its lookup index.
#[derive(Debug)]
pub struct Catalog {
    models: Vec<ModelInfo>,
    /// Lower-case id -> position in `models` (looked up twice a request:
    /// a fast hash, not SipHash).
    index: FastMap<String, usize>,
    source: CatalogSource,
    loaded_at: SystemTime,
}

impl Catalog {
    pub fn new(models: Vec<ModelInfo>, source: CatalogSource) -> Self {
        let mut index = FastMap::with_capacity_and_hasher(models.len(), Default::default());
        for (i, m) in models.iter().enumerate() {
            index.entry(m.id.to_ascii_lowercase()).or_insert(i);
        }
        Catalog {
            models,
            index,
            source,
            loaded_at: SystemTime::now(),
        }
    }

    fn get(&self, lower: &str) -> Option<&ModelInfo> {
        self.index.get(lower).and_then(|&i| self.models.get(i))
    }

    /// Resolve a client's model name (see [`resolver`]).
    pub fn resolve(&self, name: &str) -> Result<ResolvedModel, GatewayError> {
        match resolver::resolve(name, |lower| self.get(lower).map(|m| m.id.as_str())) {
            Some(resolver::Resolution::Known(id)) => {
                let context_window = self
                    .get(&id.to_ascii_lowercase())
                    .and_then(|m| m.context_window);
                Ok(ResolvedModel { id, context_window })
            }
            Some(resolver::Resolution::Hidden(id)) => Ok(ResolvedModel {
                id: id.to_owned(),
                context_window: Some(HIDDEN_CONTEXT_WINDOW),
            }),
            None => Err(GatewayError::InvalidModel(unknown_model_message(name))),
        }
    }
}

fn unknown_model_message(name: &str) -> String {
    let shown: String = name.trim().chars().take(100).collect();
    if shown.is_empty() {
        "model is required".to_owned()
    } else {
        format!("model '{shown}' is not available; GET /v1/models lists the available models")
    }
}

/// The shared, swappable model list; cheap to clone.
#[derive(Debug, Clone)]
pub struct ModelCache {
    current: Arc<ArcSwap<Catalog>>,
    /// One fill from a user's credentials at a time (full deployment).
    filling: Arc<tokio::sync::Mutex<()>>,
}

impl Default for ModelCache {
    fn default() -> Self {
        Self::with_fallback()
    }
}

impl ModelCache {
    /// A cache holding the static fallback list.
    pub fn with_fallback() -> Self {
        Self::with_models(fallback::fallback_models(), CatalogSource::Fallback)
    }

    pub fn with_models(models: Vec<ModelInfo>, source: CatalogSource) -> Self {
        ModelCache {
            current: Arc::new(ArcSwap::from_pointee(Catalog::new(models, source))),
            filling: Arc::default(),
        }
    }

    /// Resolve a client's model name to the upstream id (400 `invalid_model` when unknown).
    pub fn resolve(&self, name: &str) -> Result<ResolvedModel, GatewayError> {
        self.current.load().resolve(name)
    }

    /// The models for `/v1/models`, in the upstream's order.
    pub fn list(&self) -> Vec<ModelInfo> {
        self.current.load().models.clone()
    }

    pub fn source(&self) -> CatalogSource {
        self.current.load().source
    }

    /// When the current list was loaded, in Unix seconds (the `created` of `/v1/models`).
    pub fn loaded_at_unix(&self) -> u64 {
        self.current
            .load()
            .loaded_at
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    /// Swap in a new list.
    pub fn replace(&self, models: Vec<ModelInfo>, source: CatalogSource) {
        self.current.store(Arc::new(Catalog::new(models, source)));
    }

    /// Fetch the list from the upstream and swap it in; on failure (or an empty
    /// list) the current list stays and the error is returned.
    pub async fn refresh(&self, fetcher: &ModelFetcher) -> Result<usize, UpstreamError> {
        let models = fetcher.fetch().await?;
        if models.is_empty() {
            return Err(UpstreamError::Transport {
                message: "the upstream listed no models".into(),
                timeout: false,
            });
        }
        let n = models.len();
        self.replace(models, CatalogSource::Upstream);
        Ok(n)
    }

    /// Refresh, logging the outcome (start-up and periodic refreshes).
    pub async fn refresh_logged(&self, fetcher: &ModelFetcher) {
        match self.refresh(fetcher).await {
            Ok(n) => tracing::info!(models = n, "model list loaded from the upstream"),
            Err(e) => tracing::warn!(
                source = ?self.source(),
                "model list could not be fetched, keeping the current list: {e}"
            ),
        }
    }

    /// Full deployment has no shared credentials: the list is filled from
    /// the upstream listing with a user's (`fetcher`) when it is still the
    /// built-in one or older than `every`. One fill at a time; a caller that
    /// finds one under way goes on with the current list.
    pub async fn fill_from(&self, fetcher: &ModelFetcher, every: Duration) {
        let fresh = self.source() == CatalogSource::Upstream
            && self
                .current
                .load()
                .loaded_at
                .elapsed()
                .is_ok_and(|age| age < every);
        if fresh {
            return;
        }
        let Ok(_filling) = self.filling.try_lock() else {
            return;
        };
        self.refresh_logged(fetcher).await;
    }

    /// Refresh every `every` until `cancel` fires.
    pub fn spawn_refresher(
        &self,
        fetcher: ModelFetcher,
        every: Duration,
        cancel: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let cache = self.clone();
        #[expect(
            clippy::disallowed_methods,
            reason = "tracked: serve() awaits this handle at shutdown"
        )]
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(every) => cache.refresh_logged(&fetcher).await,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, ctx: Option<u32>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            name: None,
            description: None,
            context_window: ctx,
            max_output_tokens: None,
        }
    }

    #[test]
    fn resolution_uses_the_current_list() {
        let cache = ModelCache::with_models(
            vec![
                model("claude-sonnet-4.5", Some(200_000)),
                model("deepseek-3.2", Some(128_000)),
            ],
            CatalogSource::Upstream,
        );
        assert_eq!(
            cache.resolve("claude-sonnet-4-5-20250929").unwrap(),
            ResolvedModel {
                id: "claude-sonnet-4.5".into(),
                context_window: Some(200_000)
            }
        );
        assert_eq!(cache.resolve("DeepSeek-3.2").unwrap().id, "deepseek-3.2");
        let err = cache.resolve("claude-haiku-4-5").unwrap_err();
        assert_eq!(err.kind(), "invalid_model");
        assert!(err.to_string().contains("claude-haiku-4-5"));
        assert_eq!(
            cache.resolve("").unwrap_err().to_string(),
            "model is required"
        );
        assert_eq!(
            cache.resolve("claude-3-7-sonnet-20250219").unwrap().id,
            "CLAUDE_3_7_SONNET_20250219_V1_0"
        );

        cache.replace(
            vec![model("claude-haiku-4.5", None)],
            CatalogSource::Upstream,
        );
        assert_eq!(
            cache.resolve("claude-haiku-4-5").unwrap().id,
            "claude-haiku-4.5"
        );
        assert!(cache.resolve("claude-sonnet-4.5").is_err());
    }

    #[test]
    fn the_fallback_list_resolves_the_common_names() {
        let cache = ModelCache::with_fallback();
        assert_eq!(cache.source(), CatalogSource::Fallback);
        for name in [
            "auto",
            "claude-sonnet-4-5",
            "claude-opus-4-5",
            "claude-haiku-4.5",
            "glm-5",
        ] {
            assert!(cache.resolve(name).is_ok(), "{name}");
        }
        assert!(cache.list().iter().any(|m| m.id == "claude-sonnet-4.5"));
        assert!(cache.loaded_at_unix() > 1_600_000_000);
    }
}
