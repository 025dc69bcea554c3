//! The model registry and each provider's visibility default (spec 2.9,
//! 3.6a; interfaces-full.md 4).
//!
//! - An entry is one model of one provider: `(provider, model_id)` is
//!   unique. A model without an entry is not restricted; a disabled entry is
//!   refused on `/v1` and hidden from the listings.
//! - [`ModelRegistry::merge`] is what populating writes: new models are
//!   added (enabled as the provider's visibility default says), known ones
//!   get the listing's name and limits; `enabled` of a known entry is never
//!   touched, so populating never re-enables what an administrator disabled.
//! - Every write is one transaction that announces [`MODELS_PAYLOAD`] on
//!   PostgreSQL, so every replica reloads its view of the registry.

use std::collections::{HashMap, HashSet};

use super::clock::now;
use super::ids::ModelEntryId;
use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, Store, StoreError};

/// The payload that makes replicas reload the registry.
pub const MODELS_PAYLOAD: &str = "models";

/// One registry entry.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ModelEntry {
    pub id: ModelEntryId,
    pub provider: String,
    pub model_id: String,
    /// `None`: the model id is its name.
    pub display_name: Option<String>,
    /// An administrator named it: populating keeps the name.
    pub admin_named: bool,
    pub enabled: bool,
    /// `listing`, `static` or `manual`.
    pub source: String,
    pub context_window: Option<i64>,
    pub max_output_tokens: Option<i64>,
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
    pub cache_read_price_per_mtok: Option<f64>,
    pub cache_write_price_per_mtok: Option<f64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl ModelEntry {
    /// Its prices.
    pub fn prices(&self) -> Prices {
        Prices {
            input: self.input_price_per_mtok,
            output: self.output_price_per_mtok,
            cache_read: self.cache_read_price_per_mtok,
            cache_write: self.cache_write_price_per_mtok,
        }
    }
}

/// Where a populated model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The provider's own model listing.
    Listing,
    /// The static list kept in the repository.
    Static,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Listing => "listing",
            Source::Static => "static",
        }
    }
}

/// Prices of one model, USD per million tokens (`None`: unknown).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prices {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

impl Prices {
    /// The cost in USD of these token counts, when any price is known.
    /// Cache tokens without their own price cost the input price (the
    /// counts are the canonical ones: input excludes cache tokens).
    pub fn cost(&self, input: i64, output: i64, cache_read: i64, cache_write: i64) -> Option<f64> {
        if *self == Prices::default() {
            return None;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52"
        )]
        let part = |tokens: i64, price: Option<f64>| tokens as f64 * price.unwrap_or(0.0);
        let input_price = self.input;
        let total = part(input, input_price)
            + part(output, self.output)
            + part(cache_read, self.cache_read.or(input_price))
            + part(cache_write, self.cache_write.or(input_price));
        Some(total / 1_000_000.0)
    }
}

/// One model as a listing (or the static list) describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundModel {
    pub model_id: String,
    pub display_name: Option<String>,
    pub context_window: Option<i64>,
    pub max_output_tokens: Option<i64>,
    /// The prices a new entry starts with (the static file's list prices).
    pub default_prices: Prices,
}

/// What a merge changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Merged {
    pub added: u32,
    pub updated: u32,
}

/// A change of an entry by an administrator: each `Some` replaces the
/// stored value (`Some(None)` on a price clears it).
#[derive(Debug, Clone, Default)]
pub struct EntryChange {
    pub enabled: Option<bool>,
    pub display_name: Option<Option<String>>,
    pub input_price_per_mtok: Option<Option<f64>>,
    pub output_price_per_mtok: Option<Option<f64>>,
    pub cache_read_price_per_mtok: Option<Option<f64>>,
    pub cache_write_price_per_mtok: Option<Option<f64>>,
}

/// One provider's visibility default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibilityDefault {
    pub provider: String,
    /// The model ids a new entry of the provider is enabled for.
    pub enabled_models: Vec<String>,
    pub updated_at: i64,
}

/// What applying a default changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Entries switched on.
    pub enabled: u32,
    /// Entries switched off.
    pub disabled: u32,
}

const COLUMNS: &str = "id, provider, model_id, display_name, admin_named, enabled, source, \
     context_window, max_output_tokens, input_price_per_mtok, output_price_per_mtok, \
     cache_read_price_per_mtok, cache_write_price_per_mtok, created_at, updated_at";

/// A provider's visibility default (`None`: it has none).
const VISIBLE_MODELS: &str =
    "SELECT enabled_models FROM model_visibility_defaults WHERE provider = $1";

/// The model-registry repository.
pub struct ModelRegistry<'a> {
    store: &'a Store,
}

impl<'a> ModelRegistry<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ModelRegistry { store }
    }

    /// Every entry (of `provider` when given), by provider then model id.
    pub async fn list(&self, provider: Option<&str>) -> Result<Vec<ModelEntry>, StoreError> {
        Ok(with_pool!(self.store, p => {
            match provider {
                Some(provider) => sqlx::query_as(&format!(
                    "SELECT {COLUMNS} FROM model_registry WHERE provider = $1 ORDER BY model_id"
                ))
                .bind(provider)
                .fetch_all(p)
                .await?,
                None => sqlx::query_as(&format!(
                    "SELECT {COLUMNS} FROM model_registry ORDER BY provider, model_id"
                ))
                .fetch_all(p)
                .await?,
            }
        }))
    }

    /// Whether the registry holds no entry at all.
    pub async fn is_empty(&self) -> Result<bool, StoreError> {
        let any: Option<i64> = with_pool!(self.store, p => {
            sqlx::query_scalar("SELECT 1 FROM model_registry LIMIT 1")
                .fetch_optional(p)
                .await?
        });
        Ok(any.is_none())
    }

    /// Merge what a listing (or the static list) of `provider` says, in one
    /// transaction: unknown models are added, enabled as the provider's
    /// visibility default says; a known entry takes the found name (unless
    /// an administrator named it) and limits, and `listing` as its source
    /// when the listing found it. A static merge never overwrites what a
    /// listing wrote. `enabled` of a known entry is never changed.
    pub async fn merge(
        &self,
        provider: &str,
        source: Source,
        found: &[FoundModel],
    ) -> Result<Merged, StoreError> {
        let now = now();
        let merged = with_pool!(self.store, p => write_tx!(p, tx => {
            let rows: Vec<ModelEntry> = sqlx::query_as(&format!(
                "SELECT {COLUMNS} FROM model_registry WHERE provider = $1"
            ))
            .bind(provider)
            .fetch_all(&mut *tx)
            .await?;
            let visible: Option<Vec<String>> = sqlx::query_as(VISIBLE_MODELS)
                .bind(provider)
                .fetch_optional(&mut *tx)
                .await?
                .map(|(json,): (String,)| parse_models(&json));
            let known: HashMap<&str, &ModelEntry> =
                rows.iter().map(|e| (e.model_id.as_str(), e)).collect();
            let mut merged = Merged::default();
            let mut seen = HashSet::new();
            for m in found {
                if !seen.insert(m.model_id.as_str()) {
                    continue;
                }
                match known.get(m.model_id.as_str()) {
                    None => {
                        let enabled = visible.as_ref().is_none_or(|v| v.contains(&m.model_id));
                        sqlx::query(
                            "INSERT INTO model_registry (id, provider, model_id, display_name, \
                             enabled, source, context_window, max_output_tokens, \
                             input_price_per_mtok, output_price_per_mtok, \
                             cache_read_price_per_mtok, cache_write_price_per_mtok, \
                             created_at, updated_at) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
                        )
                        .bind(ModelEntryId::new())
                        .bind(provider)
                        .bind(&m.model_id)
                        .bind(&m.display_name)
                        .bind(enabled)
                        .bind(source.as_str())
                        .bind(m.context_window)
                        .bind(m.max_output_tokens)
                        .bind(m.default_prices.input)
                        .bind(m.default_prices.output)
                        .bind(m.default_prices.cache_read)
                        .bind(m.default_prices.cache_write)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                        merged.added += 1;
                    }
                    Some(entry) => {
                        let Some(next) = refreshed(entry, source, m) else {
                            continue;
                        };
                        sqlx::query(
                            "UPDATE model_registry SET display_name = $1, source = $2, \
                             context_window = $3, max_output_tokens = $4, updated_at = $5 \
                             WHERE id = $6",
                        )
                        .bind(&next.display_name)
                        .bind(&next.source)
                        .bind(next.context_window)
                        .bind(next.max_output_tokens)
                        .bind(now)
                        .bind(entry.id)
                        .execute(&mut *tx)
                        .await?;
                        merged.updated += 1;
                    }
                }
            }
            if merged != Merged::default() {
                tx.announce(MODELS_PAYLOAD).await?;
            }
            Ok(merged)
        }));
        Ok(merged)
    }

    /// Change one entry; `None` when there is no such entry.
    pub async fn update(
        &self,
        id: ModelEntryId,
        change: &EntryChange,
    ) -> Result<Option<ModelEntry>, StoreError> {
        let now = now();
        let entry = with_pool!(self.store, p => write_tx!(p, tx => {
            let current: Option<ModelEntry> = sqlx::query_as(&format!(
                "SELECT {COLUMNS} FROM model_registry WHERE id = $1"
            ))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(mut e) = current else {
                return Ok(None);
            };
            if let Some(enabled) = change.enabled {
                e.enabled = enabled;
            }
            if let Some(name) = &change.display_name {
                e.admin_named = name.is_some();
                e.display_name.clone_from(name);
            }
            let prices = [
                (&mut e.input_price_per_mtok, change.input_price_per_mtok),
                (&mut e.output_price_per_mtok, change.output_price_per_mtok),
                (&mut e.cache_read_price_per_mtok, change.cache_read_price_per_mtok),
                (&mut e.cache_write_price_per_mtok, change.cache_write_price_per_mtok),
            ];
            for (stored, new) in prices {
                if let Some(new) = new {
                    *stored = new;
                }
            }
            e.updated_at = now;
            sqlx::query(
                "UPDATE model_registry SET enabled = $1, display_name = $2, admin_named = $3, \
                 input_price_per_mtok = $4, output_price_per_mtok = $5, \
                 cache_read_price_per_mtok = $6, cache_write_price_per_mtok = $7, updated_at = $8 \
                 WHERE id = $9",
            )
            .bind(e.enabled)
            .bind(&e.display_name)
            .bind(e.admin_named)
            .bind(e.input_price_per_mtok)
            .bind(e.output_price_per_mtok)
            .bind(e.cache_read_price_per_mtok)
            .bind(e.cache_write_price_per_mtok)
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            tx.announce(MODELS_PAYLOAD).await?;
            Ok(Some(e))
        }));
        Ok(entry)
    }

    /// Delete one entry; false when there was none.
    pub async fn delete(&self, id: ModelEntryId) -> Result<bool, StoreError> {
        let deleted = with_pool!(self.store, p => write_tx!(p, tx => {
            let n = sqlx::query("DELETE FROM model_registry WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n > 0 {
                tx.announce(MODELS_PAYLOAD).await?;
            }
            Ok(n > 0)
        }));
        Ok(deleted)
    }

    /// Every provider's visibility default, by provider.
    pub async fn defaults(&self) -> Result<Vec<VisibilityDefault>, StoreError> {
        let rows: Vec<(String, String, i64)> = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT provider, enabled_models, updated_at FROM model_visibility_defaults \
                 ORDER BY provider",
            )
            .fetch_all(p)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(|(provider, json, updated_at)| VisibilityDefault {
                provider,
                enabled_models: parse_models(&json),
                updated_at,
            })
            .collect())
    }

    /// Set `provider`'s visibility default (existing entries stay as they
    /// are until it is applied).
    pub async fn set_default(
        &self,
        provider: &str,
        enabled_models: &[String],
    ) -> Result<VisibilityDefault, StoreError> {
        let mut models: Vec<String> = enabled_models.to_vec();
        models.sort();
        models.dedup();
        let json = serde_json::to_string(&models).unwrap_or_else(|_| "[]".to_owned());
        let now = now();
        with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO model_visibility_defaults (provider, enabled_models, updated_at) \
                 VALUES ($1, $2, $3) \
                 ON CONFLICT (provider) DO UPDATE SET enabled_models = $2, updated_at = $3",
            )
            .bind(provider)
            .bind(&json)
            .bind(now)
            .execute(p)
            .await?;
        });
        Ok(VisibilityDefault {
            provider: provider.to_owned(),
            enabled_models: models,
            updated_at: now,
        })
    }

    /// Remove `provider`'s visibility default; false when it had none.
    pub async fn delete_default(&self, provider: &str) -> Result<bool, StoreError> {
        let n = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM model_visibility_defaults WHERE provider = $1")
                .bind(provider)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(n > 0)
    }

    /// Bring `provider`'s entries in line with its visibility default (every
    /// entry enabled when it has none), in one transaction.
    pub async fn apply_default(&self, provider: &str) -> Result<Applied, StoreError> {
        let now = now();
        let applied = with_pool!(self.store, p => write_tx!(p, tx => {
            let visible: Option<Vec<String>> = sqlx::query_as(VISIBLE_MODELS)
                .bind(provider)
                .fetch_optional(&mut *tx)
                .await?
                .map(|(json,): (String,)| parse_models(&json));
            let rows: Vec<(ModelEntryId, String, bool)> = sqlx::query_as(
                "SELECT id, model_id, enabled FROM model_registry WHERE provider = $1",
            )
            .bind(provider)
            .fetch_all(&mut *tx)
            .await?;
            let mut applied = Applied::default();
            for (id, model_id, enabled) in rows {
                let wanted = visible.as_ref().is_none_or(|v| v.contains(&model_id));
                if wanted == enabled {
                    continue;
                }
                sqlx::query("UPDATE model_registry SET enabled = $1, updated_at = $2 WHERE id = $3")
                    .bind(wanted)
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                if wanted {
                    applied.enabled += 1;
                } else {
                    applied.disabled += 1;
                }
            }
            if applied != Applied::default() {
                tx.announce(MODELS_PAYLOAD).await?;
            }
            Ok(applied)
        }));
        Ok(applied)
    }
}

/// The stored JSON array of model ids (an unreadable value counts as empty).
fn parse_models(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// The stored fields a merge would write for `entry`, or `None` when it
/// would change nothing.
fn refreshed(entry: &ModelEntry, source: Source, found: &FoundModel) -> Option<ModelEntry> {
    // What a listing wrote is not overwritten by the static list.
    if source == Source::Static && entry.source != Source::Static.as_str() {
        return None;
    }
    let mut next = entry.clone();
    if !entry.admin_named && found.display_name.is_some() {
        next.display_name.clone_from(&found.display_name);
    }
    if found.context_window.is_some() {
        next.context_window = found.context_window;
    }
    if found.max_output_tokens.is_some() {
        next.max_output_tokens = found.max_output_tokens;
    }
    if entry.source != "manual" {
        source.as_str().clone_into(&mut next.source);
    }
    (next != *entry).then_some(next)
}
