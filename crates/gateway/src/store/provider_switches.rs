//! The administrator's provider switches (spec 4.3; interfaces-full.md 3):
//! a provider without a row is enabled. A change is announced as `switches`
//! on PostgreSQL so every replica reloads them.

use super::clock::now;
use super::ids::UserId;
use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, Store, StoreError};

/// The payload that makes replicas reload the switches.
pub const SWITCHES_PAYLOAD: &str = "switches";

/// The provider-switch repository.
pub struct ProviderSwitches<'a> {
    store: &'a Store,
}

impl<'a> ProviderSwitches<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        ProviderSwitches { store }
    }

    /// The providers an administrator switched off.
    pub async fn disabled(&self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT provider FROM provider_switches WHERE enabled = $1 ORDER BY provider")
                .bind(false)
                .fetch_all(p)
                .await?
        });
        Ok(rows.into_iter().map(|(p,)| p).collect())
    }

    /// Switch `provider` on or off.
    pub async fn set(&self, provider: &str, enabled: bool, by: UserId) -> Result<(), StoreError> {
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query(
                "INSERT INTO provider_switches (provider, enabled, updated_by, updated_at) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (provider) DO UPDATE SET enabled = $2, updated_by = $3, updated_at = $4",
            )
            .bind(provider)
            .bind(enabled)
            .bind(by)
            .bind(now())
            .execute(&mut *tx)
            .await?;
            tx.announce(SWITCHES_PAYLOAD).await?;
            Ok(())
        }));
        Ok(())
    }
}
