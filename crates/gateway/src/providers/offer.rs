//! The models a caller can call now (`GET /v1/models`, `GET /_ui/api/models`):
//! first the primary models, under the ids the upstream listing gives;
//! then every direct provider's the caller reaches, with the provider as
//! prefix (`messages_vendor/claude-sonnet-4-5`, `custom/llama3`), from each
//! provider's listing (cached; a provider whose listing fails adds what was
//! known, with a warning in the log). Providers an administrator switched
//! off and models disabled in the registry are left out; the name an
//! administrator gave an entry wins over the listing's, the registry's
//! limits fill what the listing does not say.
//!
//! In full deployment a user sees what they can reach: the primary models
//! only when they connected primary (and the shared primary list is filled
//! from the upstream with their credentials when it is still the built-in
//! one or stale), then their own and the pool's providers.

use std::sync::Arc;
use std::time::Duration;

use super::accounts::Accounts;
use super::direct::{self, DirectProvider};
use super::id::ProviderId;
use super::model_gate::ModelGate;
use super::primary::models::ModelCache;
use crate::error::GatewayError;
use crate::store::ids::UserId;
use crate::upstream::Upstream;

/// One model a caller can call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    /// The name to send on `/v1` (`provider/model` for the direct providers).
    pub id: String,
    pub provider: ProviderId,
    pub display_name: Option<String>,
    pub description: Option<String>,
    /// Unix seconds.
    pub created: u64,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
}

/// What [`offered`] reads.
pub struct Sources<'a> {
    pub accounts: &'a Accounts,
    pub models: &'a ModelCache,
    pub gate: &'a ModelGate,
    pub upstream: &'a Upstream,
    /// How long a provider's listing is cached.
    pub ttl: Duration,
}

/// The models `user` (`None`: proxy mode's one caller) can call now.
pub async fn offered(src: &Sources<'_>, user: Option<UserId>) -> Vec<Offered> {
    let mut out = primary_models(src, user).await;
    let available = match user {
        None => Ok(src.accounts.env().configured().cloned().collect::<Vec<_>>()),
        Some(user) => src
            .accounts
            .direct_of_user(user)
            .await
            .map(|p| p.iter().cloned().collect()),
    };
    let available = match available {
        Ok(all) => all,
        Err(e) => {
            tracing::warn!("the caller's providers could not be read: {e}");
            return out;
        }
    };
    // One listing per provider (the preferred account's), none of a
    // provider an administrator switched off.
    let mut seen: Vec<ProviderId> = src.accounts.switches().disabled().to_vec();
    let available: Vec<Arc<DirectProvider>> = available
        .into_iter()
        .filter(|p| {
            let first = !seen.contains(&p.id);
            seen.push(p.id);
            first
        })
        .collect();
    let lists = futures::future::join_all(
        available
            .iter()
            .map(|p| direct::models::list(src.upstream, src.ttl, p)),
    )
    .await;
    let loaded = src.models.loaded_at_unix();
    for (p, list) in available.iter().zip(lists) {
        let id = p.id;
        for m in list.iter() {
            let entry = src.gate.entry(id, &m.id);
            if entry.as_ref().is_some_and(|e| !e.enabled) {
                continue;
            }
            let entry = entry.unwrap_or_default();
            out.push(Offered {
                id: format!("{id}/{}", m.id),
                provider: id,
                context_window: m.context_window.or(entry.context_window),
                max_output_tokens: m.max_output_tokens.or(entry.max_output_tokens),
                display_name: entry.name_over(m.display_name.clone()),
                description: None,
                created: m.created.unwrap_or(loaded),
            });
        }
    }
    out
}

/// The primary models `user` can call (all of them in proxy mode; none for
/// a user who has not connected primary).
async fn primary_models(src: &Sources<'_>, user: Option<UserId>) -> Vec<Offered> {
    if let Some(user) = user {
        match src.accounts.primary_of_user(user).await {
            Ok(auth) => {
                if let Some(fetcher) =
                    auth.model_fetcher(&src.upstream.http, src.upstream.policy.clone())
                {
                    src.models.fill_from(&fetcher, src.ttl).await;
                }
            }
            Err(GatewayError::ProviderNotConnected(_)) => return Vec::new(),
            Err(e) => {
                tracing::warn!("the caller's primary credentials could not be read: {e}");
                return Vec::new();
            }
        }
    }
    let loaded = src.models.loaded_at_unix();
    src.models
        .list()
        .into_iter()
        .filter_map(|m| {
            let entry = src.gate.entry(ProviderId::Primary, &m.id);
            if entry.as_ref().is_some_and(|e| !e.enabled) {
                return None;
            }
            let entry = entry.unwrap_or_default();
            Some(Offered {
                context_window: m.context_window.or(entry.context_window),
                max_output_tokens: m.max_output_tokens.or(entry.max_output_tokens),
                display_name: entry.name_over(m.name),
                id: m.id,
                provider: ProviderId::Primary,
                description: m.description,
                created: loaded,
            })
        })
        .collect()
}
