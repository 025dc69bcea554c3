//! The providers an administrator switched off (interfaces-full.md 3), as
//! every request of this replica sees them: a set swapped whole when the
//! store says it changed (at start, after a change here, and on the
//! `switches` announcement from other replicas).

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::id::ProviderId;
use crate::error::GatewayError;
use crate::store::{Store, StoreError};

/// The switched-off providers.
#[derive(Debug, Default)]
pub struct Switches {
    disabled: ArcSwap<Vec<ProviderId>>,
}

impl Switches {
    /// Whether `id` is switched off.
    pub fn is_disabled(&self, id: ProviderId) -> bool {
        self.disabled.load().contains(&id)
    }

    /// The switched-off providers now.
    pub fn disabled(&self) -> Arc<Vec<ProviderId>> {
        self.disabled.load_full()
    }

    /// Read the switches from the store again.
    pub async fn reload(&self, store: &Store) -> Result<(), StoreError> {
        let ids: Vec<ProviderId> = store
            .provider_switches()
            .disabled()
            .await?
            .iter()
            .filter_map(|p| ProviderId::parse(p))
            .collect();
        self.disabled.store(Arc::new(ids));
        Ok(())
    }

    /// 403 `provider_disabled` when `id` is switched off.
    pub fn check(&self, id: ProviderId) -> Result<(), GatewayError> {
        if self.is_disabled(id) {
            return Err(GatewayError::ProviderDisabled(format!(
                "the provider '{id}' is disabled by an administrator"
            )));
        }
        Ok(())
    }
}
