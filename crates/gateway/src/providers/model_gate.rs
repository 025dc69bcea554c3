//! The model registry as every request of this replica sees it
//! (interfaces-full.md 4): which registry entries exist and which an
//! administrator disabled, with their names and limits. One immutable view
//! swapped whole when the store says the registry changed (at start, after
//! a change here, on the `models` announcement from other replicas).
//!
//! A request's model is looked up here after its provider is chosen:
//! the name of an entry is taken as it is (before `primary`'s alias
//! resolver), and a disabled entry is refused with 403 `model_disabled`
//! before any upstream call. A model without an entry is not restricted.

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::id::ProviderId;
use super::primary::models::{ModelCache, ResolvedModel};
use crate::cache::FastMap;
use crate::error::GatewayError;
use crate::store::model_registry::ModelEntry;
use crate::store::{Store, StoreError};
use crate::usage::prices::{PriceBook, PriceTable};

/// What a request needs of one entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryView {
    pub enabled: bool,
    pub display_name: Option<String>,
    /// An administrator gave the name (it wins over a listing's).
    pub admin_named: bool,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
}

impl EntryView {
    /// The name to show: an administrator's, else the listing's
    /// (`listed`), else the registry's.
    pub fn name_over(self, listed: Option<String>) -> Option<String> {
        if self.admin_named {
            self.display_name.or(listed)
        } else {
            listed.or(self.display_name)
        }
    }
}

/// The entries of every provider, by provider then model id ([`FastMap`]:
/// full deployment looks every chat request's model up here).
#[derive(Debug, Default)]
struct View {
    by_provider: FastMap<ProviderId, FastMap<String, EntryView>>,
}

/// The live view of the model registry.
#[derive(Debug, Default)]
pub struct ModelGate {
    view: ArcSwap<View>,
    /// The registry's prices, for the usage writer.
    prices: Arc<PriceBook>,
}

impl ModelGate {
    /// Read the registry from the store again.
    pub async fn reload(&self, store: &Store) -> Result<(), StoreError> {
        let entries = store.model_registry().list(None).await?;
        self.replace(&entries);
        Ok(())
    }

    /// The prices usage is costed at (kept with this view).
    pub(crate) fn price_book(&self) -> Arc<PriceBook> {
        self.prices.clone()
    }

    /// Swap in a view of `entries`.
    pub fn replace(&self, entries: &[ModelEntry]) {
        let mut by_provider: FastMap<ProviderId, FastMap<String, EntryView>> = FastMap::default();
        let mut prices = PriceTable::new();
        for e in entries {
            prices
                .entry(e.provider.clone())
                .or_default()
                .insert(e.model_id.clone(), e.prices());
            let Some(provider) = ProviderId::parse(&e.provider) else {
                continue;
            };
            by_provider.entry(provider).or_default().insert(
                e.model_id.clone(),
                EntryView {
                    enabled: e.enabled,
                    display_name: e.display_name.clone(),
                    admin_named: e.admin_named,
                    context_window: e.context_window.and_then(|n| u32::try_from(n).ok()),
                    max_output_tokens: e.max_output_tokens.and_then(|n| u32::try_from(n).ok()),
                },
            );
        }
        self.view.store(Arc::new(View { by_provider }));
        self.prices.replace(prices);
    }

    /// The entry of `model` of `provider`, if the registry has one.
    pub fn entry(&self, provider: ProviderId, model: &str) -> Option<EntryView> {
        self.view
            .load()
            .by_provider
            .get(&provider)
            .and_then(|m| m.get(model))
            .cloned()
    }

    /// Whether `model` of `provider` is disabled.
    pub fn is_disabled(&self, provider: ProviderId, model: &str) -> bool {
        self.view
            .load()
            .by_provider
            .get(&provider)
            .and_then(|m| m.get(model))
            .is_some_and(|e| !e.enabled)
    }

    /// 403 `model_disabled` when `model` of `provider` is disabled.
    pub fn check(&self, provider: ProviderId, model: &str) -> Result<(), GatewayError> {
        if self.is_disabled(provider, model) {
            return Err(disabled(provider, model));
        }
        Ok(())
    }

    /// Resolve a client's model name for `primary`: an entry of that name
    /// first, then the alias resolver of `cache`; refused when the result
    /// is disabled.
    pub fn resolve_primary(
        &self,
        cache: &ModelCache,
        name: &str,
    ) -> Result<ResolvedModel, GatewayError> {
        let view = self.view.load();
        let entries = view.by_provider.get(&ProviderId::Primary);
        let resolved = match entries.and_then(|m| m.get(name)) {
            Some(entry) => ResolvedModel {
                id: name.to_owned(),
                context_window: entry
                    .context_window
                    .or_else(|| cache.resolve(name).ok().and_then(|m| m.context_window)),
            },
            None => cache.resolve(name)?,
        };
        if entries
            .and_then(|m| m.get(&resolved.id))
            .is_some_and(|e| !e.enabled)
        {
            return Err(disabled(ProviderId::Primary, &resolved.id));
        }
        Ok(resolved)
    }
}

fn disabled(provider: ProviderId, model: &str) -> GatewayError {
    let shown = if provider == ProviderId::Primary {
        model.to_owned()
    } else {
        format!("{provider}/{model}")
    };
    GatewayError::ModelDisabled(format!(
        "model '{shown}' is disabled by an administrator; GET /v1/models lists the available models"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ids::ModelEntryId;

    fn entry(provider: &str, model: &str, enabled: bool) -> ModelEntry {
        ModelEntry {
            id: ModelEntryId::new(),
            provider: provider.into(),
            model_id: model.into(),
            display_name: None,
            admin_named: false,
            enabled,
            source: "listing".into(),
            context_window: Some(1000),
            max_output_tokens: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
            cache_read_price_per_mtok: None,
            cache_write_price_per_mtok: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn a_disabled_entry_is_refused_and_others_pass() {
        let gate = ModelGate::default();
        gate.replace(&[
            entry("custom", "llama3", false),
            entry("custom", "qwen", true),
            entry("nobody", "x", false),
        ]);
        let err = gate.check(ProviderId::Custom, "llama3").unwrap_err();
        assert_eq!(err.kind(), "model_disabled");
        assert_eq!(err.status(), 403);
        assert!(err.to_string().contains("'custom/llama3'"), "{err}");
        assert!(gate.check(ProviderId::Custom, "qwen").is_ok());
        assert!(gate.check(ProviderId::Custom, "not-registered").is_ok());
        assert!(gate.check(ProviderId::MessagesVendor, "llama3").is_ok());
    }

    #[test]
    fn primary_names_meet_the_registry_first_then_the_resolver() {
        let cache = ModelCache::with_fallback();
        let gate = ModelGate::default();
        // An alias resolving to a disabled model is refused too.
        gate.replace(&[
            entry("primary", "claude-sonnet-4.5", false),
            entry("primary", "my-private-model", true),
        ]);
        let err = gate
            .resolve_primary(&cache, "claude-sonnet-4-5-20250929")
            .unwrap_err();
        assert_eq!(err.kind(), "model_disabled");
        assert_eq!(
            gate.resolve_primary(&cache, "claude-sonnet-4.5")
                .unwrap_err()
                .kind(),
            "model_disabled"
        );
        // An entry the listing does not have is taken by its name.
        let m = gate.resolve_primary(&cache, "my-private-model").unwrap();
        assert_eq!(
            (m.id.as_str(), m.context_window),
            ("my-private-model", Some(1000))
        );
        assert_eq!(
            gate.resolve_primary(&cache, "claude-haiku-4.5").unwrap().id,
            "claude-haiku-4.5"
        );
        assert_eq!(
            gate.resolve_primary(&cache, "nonsense-model")
                .unwrap_err()
                .kind(),
            "invalid_model"
        );
    }
}
