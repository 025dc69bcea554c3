//! Model listings of the direct providers: parsing each format's list and a
//! small cache per provider (`model_cache_refresh` long; a failed fetch keeps
//! what was known and is not repeated for a minute, so a broken provider does
//! not slow every `/v1/models` call).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::request::{CallExtras, DirectProvider, Endpoint};
use crate::providers::id::WireFormat;
use crate::telemetry::{self, CacheName};
use crate::upstream::Upstream;

/// A failed fetch is not repeated sooner than this.
const RETRY_FAILED_AFTER: Duration = Duration::from_secs(60);
/// Time limit of one model-list fetch (a listing must not hold up `/v1/models`).
const MODEL_LIST_TIMEOUT: Duration = Duration::from_secs(10);
/// Most pages read from a paginated listing.
const MAX_MODEL_PAGES: usize = 10;
/// Largest page of a listing read (real ones are a few hundred kilobytes).
const MAX_PAGE_BYTES: usize = 16 * 1024 * 1024;

/// The model list of `p` (cached for `ttl`; empty when unknown).
pub async fn list(
    upstream: &Upstream,
    ttl: Duration,
    p: &DirectProvider,
) -> Arc<Vec<ProviderModel>> {
    p.models
        .get(ttl, p.id.as_str(), || fetch(upstream, p))
        .await
}

/// Read a provider's whole listing (following the messages format's pages).
pub async fn fetch(upstream: &Upstream, p: &DirectProvider) -> Result<Vec<ProviderModel>, String> {
    let mut policy = upstream.policy.clone();
    policy.max_retries = policy.max_retries.min(1);
    policy.request_timeout = policy.request_timeout.min(MODEL_LIST_TIMEOUT);
    let paged = p.format() == WireFormat::Anthropic;
    let mut all = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_MODEL_PAGES {
        let query = match (&after, paged) {
            (_, false) => String::new(),
            (None, true) => "?limit=1000".to_owned(),
            (Some(id), true) => {
                let mut q = url::form_urlencoded::Serializer::for_suffix("?".to_owned(), 1);
                q.append_pair("limit", "1000").append_pair("after_id", id);
                q.finish()
            }
        };
        let extras = CallExtras::default();
        let resp = p
            .send(
                &upstream.http,
                &policy,
                Endpoint::Models,
                &query,
                None,
                &extras,
            )
            .await
            .map_err(|e| e.to_string())?;
        let body = tokio::time::timeout(MODEL_LIST_TIMEOUT, resp.bytes(MAX_PAGE_BYTES))
            .await
            .map_err(|_| "the model list did not arrive in time".to_owned())?
            .map_err(|e| e.to_string())?;
        let page = parse_page(p.format(), &body)?;
        all.extend(page.models);
        match page.next_after {
            Some(next) if paged => after = Some(next),
            _ => break,
        }
    }
    Ok(all)
}

/// One model of a provider's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderModel {
    pub id: String,
    pub display_name: Option<String>,
    /// Unix seconds, when the provider says.
    pub created: Option<u64>,
    /// Tokens of context, when the listing says (the assistant vendor's
    /// `capabilities.limits.max_context_window_tokens`, or a top-level
    /// `context_window` / `context_length` of OpenAI-style servers).
    pub context_window: Option<u32>,
    /// Tokens of output, when the listing says.
    pub max_output_tokens: Option<u32>,
}

/// One page of a listing, and the cursor of the next page (messages format).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Page {
    pub models: Vec<ProviderModel>,
    pub next_after: Option<String>,
}

/// Read one page: the messages format (`data[].id`, `display_name`,
/// `created_at` RFC 3339, `has_more` / `last_id`) or the chat-completions
/// format (`data[].id`, `created`). Entries whose `capabilities.type` says
/// they are not chat models (embeddings) are left out.
pub fn parse_page(format: WireFormat, body: &[u8]) -> Result<Page, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("model list is not JSON: {e}"))?;
    let Some(data) = value.get("data").and_then(Value::as_array) else {
        return Err("model list has no `data` array".to_owned());
    };
    let mut models = Vec::with_capacity(data.len());
    for entry in data {
        let Some(id) = entry
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let kind = entry
            .get("capabilities")
            .and_then(|c| c.get("type"))
            .and_then(Value::as_str);
        if kind.is_some_and(|k| k != "chat") {
            continue;
        }
        let created = entry.get("created").and_then(Value::as_u64).or_else(|| {
            entry
                .get("created_at")
                .and_then(Value::as_str)
                .and_then(parse_rfc3339)
        });
        let display_name = entry
            .get("display_name")
            .or_else(|| entry.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let limits = entry.get("capabilities").and_then(|c| c.get("limits"));
        let context_window = first_count(
            limits,
            entry,
            &["max_context_window_tokens"],
            &["context_window", "context_length", "max_input_tokens"],
        );
        let max_output_tokens = first_count(
            limits,
            entry,
            &["max_output_tokens"],
            &["max_output_tokens"],
        );
        models.push(ProviderModel {
            id: id.to_owned(),
            display_name,
            created,
            context_window,
            max_output_tokens,
        });
    }
    let next_after = match format {
        WireFormat::Anthropic if value.get("has_more").and_then(Value::as_bool) == Some(true) => {
            value
                .get("last_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }
        _ => None,
    };
    Ok(Page { models, next_after })
}

/// The first of `in_limits` (under `limits`) or `top` (on `entry`) that is a
/// token count.
fn first_count(
    limits: Option<&Value>,
    entry: &Value,
    in_limits: &[&str],
    top: &[&str],
) -> Option<u32> {
    let count = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    in_limits
        .iter()
        .find_map(|k| count(limits.and_then(|l| l.get(k))))
        .or_else(|| top.iter().find_map(|k| count(entry.get(k))))
}

fn parse_rfc3339(text: &str) -> Option<u64> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.unix_timestamp()).ok())
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    ok: bool,
    models: Arc<Vec<ProviderModel>>,
}

/// The cached listing of one provider; fetches are single-flight.
#[derive(Debug, Default)]
pub struct ModelListCache {
    entry: tokio::sync::Mutex<Option<Entry>>,
}

impl ModelListCache {
    /// The cached list when fresh, else the result of `fetch` (on failure the
    /// last known list, possibly empty, with a warning in the log).
    pub async fn get<F, Fut>(
        &self,
        ttl: Duration,
        provider: &str,
        fetch: F,
    ) -> Arc<Vec<ProviderModel>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Vec<ProviderModel>, String>>,
    {
        let mut entry = self.entry.lock().await;
        if let Some(e) = entry.as_ref() {
            let age = e.at.elapsed();
            if (e.ok && age < ttl) || (!e.ok && age < RETRY_FAILED_AFTER) {
                telemetry::meters().cache_lookup(CacheName::Models, true);
                return e.models.clone();
            }
        }
        telemetry::meters().cache_lookup(CacheName::Models, false);
        match fetch().await {
            Ok(models) => {
                tracing::info!(provider, count = models.len(), "provider model list loaded");
                let models = Arc::new(models);
                *entry = Some(Entry {
                    at: Instant::now(),
                    ok: true,
                    models: models.clone(),
                });
                models
            }
            Err(e) => {
                let known = entry.as_ref().map(|e| e.models.clone()).unwrap_or_default();
                tracing::warn!(
                    provider,
                    known = known.len(),
                    "could not load the provider's model list: {e}"
                );
                *entry = Some(Entry {
                    at: Instant::now(),
                    ok: false,
                    models: known.clone(),
                });
                known
            }
        }
    }

    /// The last known list without fetching.
    pub async fn known(&self) -> Arc<Vec<ProviderModel>> {
        self.entry
            .lock()
            .await
            .as_ref()
            .map(|e| e.models.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_messages_format_with_its_cursor() {
        let body = br#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}"#;
        let page = parse_page(WireFormat::Anthropic, body).unwrap();
        assert_eq!(page.models.len(), 1);
        assert_eq!(page.models[0].id, "claude-sonnet-4-5");
        assert_eq!(
            page.models[0].display_name.as_deref(),
            Some("Claude Sonnet 4.5")
        );
        assert_eq!(page.models[0].created, Some(1_759_104_000));
        assert_eq!(page.next_after.as_deref(), Some("claude-sonnet-4-5"));
    }

    #[test]
    fn reads_the_chat_completions_format_and_skips_embeddings() {
        let body = br#"{"object":"list","data":[
            {"id":"gpt-4o","object":"model","created":1715367049,"owned_by":"system"},
            {"id":"text-embedding-3-small","object":"model","capabilities":{"type":"embeddings"}},
            {"id":"claude-sonnet-4.5","name":"Claude Sonnet 4.5","capabilities":{"type":"chat"}},
            {"object":"model"}
        ]}"#;
        let page = parse_page(WireFormat::OpenAi, body).unwrap();
        let ids: Vec<_> = page.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["gpt-4o", "claude-sonnet-4.5"]);
        assert_eq!(page.models[0].created, Some(1_715_367_049));
        assert_eq!(page.next_after, None);
        assert_eq!(page.models[1].context_window, None);
        assert!(parse_page(WireFormat::OpenAi, b"{}").is_err());
        assert!(parse_page(WireFormat::OpenAi, b"<html>").is_err());
    }

    #[test]
    fn reads_the_limits_a_listing_gives() {
        let body = br#"{"data":[
            {"id":"gpt-4.1","capabilities":{"type":"chat","limits":{"max_context_window_tokens":128000,"max_output_tokens":16384}}},
            {"id":"llama3","context_length":8192},
            {"id":"big","context_window":99999999999}
        ]}"#;
        let page = parse_page(WireFormat::OpenAi, body).unwrap();
        let m = &page.models;
        assert_eq!(
            (m[0].context_window, m[0].max_output_tokens),
            (Some(128_000), Some(16_384))
        );
        assert_eq!(
            (m[1].context_window, m[1].max_output_tokens),
            (Some(8192), None)
        );
        assert_eq!(m[2].context_window, None, "not a u32: unknown");
    }

    #[tokio::test]
    async fn a_failure_keeps_what_was_known_and_is_not_repeated_at_once() {
        let cache = ModelListCache::default();
        let ttl = Duration::ZERO; // every call would fetch again when fresh data expired
        let one = vec![ProviderModel {
            id: "m".into(),
            display_name: None,
            created: None,
            context_window: None,
            max_output_tokens: None,
        }];
        let got = cache.get(ttl, "p", || async { Ok(one.clone()) }).await;
        assert_eq!(got.len(), 1);
        let got = cache
            .get(ttl, "p", || async { Err("down".to_owned()) })
            .await;
        assert_eq!(got.len(), 1, "the known list survives a failure");
        let mut called = false;
        let got = cache
            .get(ttl, "p", || {
                called = true;
                async { Ok(Vec::new()) }
            })
            .await;
        assert!(!called, "a failed fetch is not repeated within a minute");
        assert_eq!(got.len(), 1);
    }
}
