//! Populating the model registry (interfaces-full.md 4, `POST
//! /_ui/api/models/registry/populate`): each provider's models are asked of
//! its own listing with whatever credentials reach it, and merged into the
//! registry; when no listing answers, the provider's static list
//! ([`super::static_models`]) is merged instead.
//!
//! Credentials, in order: for `primary`, the administrator's own connected
//! credentials, else the shared model list when a user's request filled it
//! from the upstream; for a direct provider, each of the administrator's
//! own and the pool's accounts of it, preferred first. Merging is
//! idempotent and never changes whether a known entry is enabled.

use super::accounts::Accounts;
use super::direct;
use super::id::ProviderId;
use super::primary::models::{CatalogSource, ModelCache};
use super::static_models;
use crate::error::GatewayError;
use crate::store::ids::UserId;
use crate::store::model_registry::{FoundModel, Merged, Source};
use crate::store::{Store, StoreError};
use crate::upstream::Upstream;

/// How one provider was populated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub provider: ProviderId,
    /// `None`: neither a listing nor a static list gave any model.
    pub source: Option<Source>,
    pub merged: Merged,
    /// Why the listing was not used (or nothing was found).
    pub error: Option<String>,
}

/// What populating reads.
pub struct Populate<'a> {
    pub store: &'a Store,
    pub accounts: &'a Accounts,
    pub models: &'a ModelCache,
    pub upstream: &'a Upstream,
    /// Whose credentials may ask the listings (`None`: no user's; the
    /// start-up seeding).
    pub admin: Option<UserId>,
}

impl Populate<'_> {
    /// Populate `providers` in order.
    pub async fn run(&self, providers: &[ProviderId]) -> Result<Vec<Outcome>, StoreError> {
        let mut out = Vec::with_capacity(providers.len());
        for &provider in providers {
            out.push(self.one(provider).await?);
        }
        Ok(out)
    }

    async fn one(&self, provider: ProviderId) -> Result<Outcome, StoreError> {
        if self.accounts.switches().is_disabled(provider) {
            return Ok(Outcome {
                provider,
                source: None,
                merged: Merged::default(),
                error: Some(format!(
                    "the provider '{provider}' is disabled by an administrator"
                )),
            });
        }
        let registry = self.store.model_registry();
        let (found, why_not) = match self.listing(provider).await {
            Ok(found) if !found.is_empty() => {
                let merged = registry
                    .merge(provider.as_str(), Source::Listing, &found)
                    .await?;
                return Ok(Outcome {
                    provider,
                    source: Some(Source::Listing),
                    merged,
                    error: None,
                });
            }
            Ok(_) => (
                static_list(provider),
                "its listing named no model".to_owned(),
            ),
            Err(why) => (static_list(provider), why),
        };
        if found.is_empty() {
            return Ok(Outcome {
                provider,
                source: None,
                merged: Merged::default(),
                error: Some(format!(
                    "{why_not}; no static list is kept for '{provider}'"
                )),
            });
        }
        let merged = registry
            .merge(provider.as_str(), Source::Static, &found)
            .await?;
        Ok(Outcome {
            provider,
            source: Some(Source::Static),
            merged,
            error: Some(format!("{why_not}: the static list was used")),
        })
    }

    /// The provider's own listing, or why it could not be read.
    async fn listing(&self, provider: ProviderId) -> Result<Vec<FoundModel>, String> {
        if provider == ProviderId::Primary {
            return self.primary_listing().await;
        }
        let Some(admin) = self.admin else {
            return Err("no account reaches its listing".to_owned());
        };
        let accounts = self
            .accounts
            .direct_of_user(admin)
            .await
            .map_err(|e| e.to_string())?;
        let mut last = "no connected or pool account reaches its listing".to_owned();
        for p in accounts.iter().filter(|p| p.id == provider) {
            match direct::models::fetch(self.upstream, p).await {
                Ok(models) => {
                    return Ok(models
                        .into_iter()
                        .map(|m| FoundModel {
                            default_prices: static_models::prices_of(provider, &m.id),
                            model_id: m.id,
                            display_name: m.display_name,
                            context_window: m.context_window.map(i64::from),
                            max_output_tokens: m.max_output_tokens.map(i64::from),
                        })
                        .collect())
                }
                Err(e) => last = format!("its listing could not be read: {e}"),
            }
        }
        Err(last)
    }

    /// `primary`'s listing: with the administrator's credentials (the
    /// shared list takes the answer too), else the shared list when it came
    /// from the upstream.
    async fn primary_listing(&self) -> Result<Vec<FoundModel>, String> {
        let mut why = "no connected credentials reach its listing".to_owned();
        if let Some(admin) = self.admin {
            match self.accounts.primary_of_user(admin).await {
                Ok(auth) => {
                    if let Some(fetcher) =
                        auth.model_fetcher(&self.upstream.http, self.upstream.policy.clone())
                    {
                        match self.models.refresh(&fetcher).await {
                            Ok(_) => {}
                            Err(e) => why = format!("its listing could not be read: {e}"),
                        }
                    }
                }
                Err(GatewayError::ProviderNotConnected(_)) => {}
                Err(e) => why = e.to_string(),
            }
        }
        if self.models.source() != CatalogSource::Upstream {
            return Err(why);
        }
        Ok(self
            .models
            .list()
            .into_iter()
            .map(|m| FoundModel {
                default_prices: static_models::prices_of(ProviderId::Primary, &m.id),
                model_id: m.id,
                display_name: m.name,
                context_window: m.context_window.map(i64::from),
                max_output_tokens: m.max_output_tokens.map(i64::from),
            })
            .collect())
    }
}

/// `provider`'s static list as found models.
fn static_list(provider: ProviderId) -> Vec<FoundModel> {
    static_models::of(provider)
        .iter()
        .map(|m| FoundModel {
            default_prices: m.prices(),
            model_id: m.id.clone(),
            display_name: m.display_name.clone(),
            context_window: m.context_window.map(i64::from),
            max_output_tokens: m.max_output_tokens.map(i64::from),
        })
        .collect()
}

/// The first start with the model registry (a new deployment, or one
/// upgraded from before it): every enabled provider is populated from what
/// the gateway already knows without a user's credentials (`primary`'s
/// current list, the static lists), so the registry starts with the models
/// that worked before. Runs once per store, on one replica.
pub async fn seed_once(
    store: &Store,
    accounts: &Accounts,
    models: &ModelCache,
    upstream: &Upstream,
) -> Result<(), StoreError> {
    if !store.meta().claim_registry_seeding().await? {
        return Ok(());
    }
    let outcomes = Populate {
        store,
        accounts,
        models,
        upstream,
        admin: None,
    }
    .run(&ProviderId::ALL)
    .await?;
    let added: u32 = outcomes.iter().map(|o| o.merged.added).sum();
    tracing::info!(added, "model registry seeded from the known model lists");
    Ok(())
}
