//! The static model list used when the upstream listing cannot be fetched
//! (protocol doc 1.10, 1.11: the ancestor's fallback list), kept with the
//! other providers' in the repository's static model file
//! ([`crate::providers::static_models`]). Availability on a given account
//! may differ; the upstream has the last word on each request.

use super::ModelInfo;
use crate::providers::id::ProviderId;
use crate::providers::static_models;

/// The fallback list as model entries.
pub fn fallback_models() -> Vec<ModelInfo> {
    static_models::of(ProviderId::Primary)
        .iter()
        .map(|m| ModelInfo {
            id: m.id.clone(),
            name: m.display_name.clone(),
            description: None,
            context_window: m.context_window,
            max_output_tokens: m.max_output_tokens,
        })
        .collect()
}
