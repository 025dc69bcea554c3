//! The models each provider is known to offer, from one data file in the
//! repository (`crates/gateway/data/static-models.json`, compiled in):
//! `primary`'s fallback model list, and what populating the model registry
//! adds for a provider whose listing cannot be reached.

use std::sync::LazyLock;

use serde::Deserialize;

use super::id::ProviderId;
use crate::store::model_registry::Prices;

/// One model of the static list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StaticModel {
    pub id: String,
    pub display_name: Option<String>,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
    /// List prices, USD per million tokens (absent: unknown).
    #[serde(default)]
    pub input_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub output_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub cache_read_price_per_mtok: Option<f64>,
    #[serde(default)]
    pub cache_write_price_per_mtok: Option<f64>,
}

impl StaticModel {
    /// Its list prices.
    pub fn prices(&self) -> Prices {
        Prices {
            input: self.input_price_per_mtok,
            output: self.output_price_per_mtok,
            cache_read: self.cache_read_price_per_mtok,
            cache_write: self.cache_write_price_per_mtok,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct File {
    providers: Providers,
}

#[derive(Debug, Default, Deserialize)]
struct Providers {
    primary: Vec<StaticModel>,
    messages_vendor: Vec<StaticModel>,
    completions_vendor: Vec<StaticModel>,
    assistant_vendor: Vec<StaticModel>,
    custom: Vec<StaticModel>,
}

const DATA: &str = include_str!("../../data/static-models.json");

/// Parsed on first use; a test proves the file parses, so the empty
/// fallback is never what runs.
static LISTS: LazyLock<Providers> = LazyLock::new(|| {
    serde_json::from_str::<File>(DATA)
        .unwrap_or_default()
        .providers
});

/// The static model list of `provider` (empty when none is kept).
pub fn of(provider: ProviderId) -> &'static [StaticModel] {
    let lists = &*LISTS;
    match provider {
        ProviderId::Primary => &lists.primary,
        ProviderId::MessagesVendor => &lists.messages_vendor,
        ProviderId::CompletionsVendor => &lists.completions_vendor,
        ProviderId::AssistantVendor => &lists.assistant_vendor,
        ProviderId::Custom => &lists.custom,
    }
}

/// The list prices of `model_id` of `provider` (all unknown when the file
/// does not name it).
pub fn prices_of(provider: ProviderId, model_id: &str) -> Prices {
    of(provider)
        .iter()
        .find(|m| m.id == model_id)
        .map(StaticModel::prices)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses_and_names_each_model_once() {
        let file: File = serde_json::from_str(DATA).unwrap();
        assert!(!file.providers.primary.is_empty());
        for id in ProviderId::ALL {
            let list = of(id);
            let mut ids: Vec<&str> = list.iter().map(|m| m.id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), list.len(), "{id} names a model twice");
            assert!(list.iter().all(|m| !m.id.trim().is_empty()), "{id}");
        }
        assert!(of(ProviderId::MessagesVendor)
            .iter()
            .all(|m| !m.id.contains('.')));
        // Prices are non-negative where given.
        for id in ProviderId::ALL {
            for m in of(id) {
                let p = m.prices();
                for v in [p.input, p.output, p.cache_read, p.cache_write]
                    .into_iter()
                    .flatten()
                {
                    assert!(v.is_finite() && v >= 0.0, "{id}/{}", m.id);
                }
            }
        }
        assert_eq!(
            prices_of(ProviderId::CompletionsVendor, "gpt-4o").input,
            Some(2.5)
        );
        assert_eq!(prices_of(ProviderId::Primary, "auto"), Prices::default());
    }
}
