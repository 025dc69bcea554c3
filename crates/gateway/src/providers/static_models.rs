//! The models each provider is known to offer, from one data file in the
//! repository (`crates/gateway/data/static-models.json`, compiled in):
//! `primary`'s fallback model list, and what populating the model registry
//! adds for a provider whose listing cannot be reached.

use std::sync::LazyLock;

use serde::Deserialize;

use super::id::ProviderId;

/// One model of the static list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StaticModel {
    pub id: String,
    pub display_name: Option<String>,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
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
    }
}
