//! The administrator's fallback chains (issue 21): the models tried in turn
//! when a model fails before its answer begins. The set is replaced whole
//! and announced as `fallbacks` on PostgreSQL, so every replica reloads it.

use super::upstream_credentials::Announce as _;
use super::{with_pool, write_tx, Store, StoreError};

/// The payload that makes replicas reload the chains.
pub const FALLBACKS_PAYLOAD: &str = "fallbacks";

/// One chain: a model and the models that stand in for it, in order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "FallbackChain"))]
pub struct Chain {
    pub model: String,
    pub fallbacks: Vec<String>,
}

/// The fallback-chain repository.
pub struct Fallbacks<'a> {
    store: &'a Store,
}

impl<'a> Fallbacks<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Fallbacks { store }
    }

    /// Every chain, in the administrator's order.
    pub async fn list(&self) -> Result<Vec<Chain>, StoreError> {
        let rows: Vec<(String, String)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT model, fallbacks FROM model_fallbacks ORDER BY position")
                .fetch_all(p)
                .await?
        });
        Ok(rows
            .into_iter()
            .map(|(model, json)| Chain {
                model,
                // Written by `replace` only; unreadable means empty.
                fallbacks: serde_json::from_str(&json).unwrap_or_default(),
            })
            .collect())
    }

    /// Replace every chain with `chains` (one transaction).
    pub async fn replace(&self, chains: &[Chain]) -> Result<(), StoreError> {
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query("DELETE FROM model_fallbacks").execute(&mut *tx).await?;
            for (position, chain) in chains.iter().enumerate() {
                let json = serde_json::to_string(&chain.fallbacks)
                    .unwrap_or_else(|_| "[]".to_owned());
                sqlx::query("INSERT INTO model_fallbacks (model, fallbacks, position) VALUES ($1, $2, $3)")
                    .bind(&chain.model)
                    .bind(json)
                    .bind(i64::try_from(position).unwrap_or(i64::MAX))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.announce(FALLBACKS_PAYLOAD).await?;
            Ok(())
        }));
        Ok(())
    }
}
