//! The accounts a caller may use for each provider ([`Accounts`]): where a
//! request's credentials come from, chosen per request.
//!
//! - `primary`: proxy mode's one shared token manager, or in full deployment
//!   the caller's own upstream credentials (a user without them gets 403
//!   `forbidden` saying how to connect).
//! - The direct providers: proxy mode's environment accounts (one per
//!   configured provider, [`Registry`]). Full deployment has no per-user
//!   direct accounts yet, so its callers reach `primary` only and a request
//!   that names another provider is refused as not configured.
//!
//! This is the one seam per-user, multi-account selection (spec 4.4.3) grows
//! from: more accounts per provider, in the caller's priority order, behind
//! the same calls.

use std::sync::Arc;

use super::direct::DirectProvider;
use super::primary::credentials::per_user::{PrimaryAuth, UserTokens, NOT_CONNECTED};
use super::registry::Registry;
use crate::auth::Caller;
use crate::error::GatewayError;
use crate::store::Store;

/// Every source of provider credentials of this deployment.
#[derive(Debug)]
pub struct Accounts {
    /// Proxy mode's shared `primary` credentials.
    shared_primary: PrimaryAuth,
    /// Full deployment: each user's `primary` token source.
    user_tokens: UserTokens,
    store: Option<Store>,
    /// The direct providers configured by the environment (proxy mode).
    env: Registry,
}

impl Accounts {
    pub fn new(
        shared_primary: PrimaryAuth,
        user_tokens: UserTokens,
        store: Option<Store>,
        env: Registry,
    ) -> Self {
        Accounts {
            shared_primary,
            user_tokens,
            store,
            env,
        }
    }

    /// The `primary` token source of `caller`: 403 `forbidden` with
    /// [`NOT_CONNECTED`] for a user without upstream credentials.
    pub async fn primary(&self, caller: &Caller) -> Result<PrimaryAuth, GatewayError> {
        match caller {
            Caller::Proxy => Ok(self.shared_primary.clone()),
            Caller::User(owner) => {
                let store = self.store.as_ref().ok_or_else(|| {
                    GatewayError::Config("this deployment has no store (proxy mode)".into())
                })?;
                match self.user_tokens.source(store, owner.user_id).await? {
                    Some(source) => Ok(PrimaryAuth::User(source)),
                    None => Err(GatewayError::Forbidden(NOT_CONNECTED.into())),
                }
            }
        }
    }

    /// The direct providers `caller` can use, in priority order.
    pub fn direct(&self, caller: &Caller) -> Vec<Arc<DirectProvider>> {
        match caller {
            Caller::Proxy => self.env.configured().cloned().collect(),
            Caller::User(_) => Vec::new(),
        }
    }

    /// The environment's direct providers (proxy mode).
    pub fn env(&self) -> &Registry {
        &self.env
    }

    /// The per-user `primary` token sources (full deployment).
    pub fn user_tokens(&self) -> &UserTokens {
        &self.user_tokens
    }

    /// Proxy mode's shared `primary` credentials.
    pub fn shared_primary(&self) -> &PrimaryAuth {
        &self.shared_primary
    }
}
