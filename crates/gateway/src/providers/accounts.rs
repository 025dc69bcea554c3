//! The accounts a caller may use for each provider ([`Accounts`]): where a
//! request's credentials come from, chosen per request.
//!
//! - `primary`: proxy mode's one shared token manager, or in full deployment
//!   the caller's own upstream credentials (a user without them gets 403
//!   `forbidden` saying how to connect).
//! - The direct providers: proxy mode's environment accounts (one per
//!   configured provider, [`Registry`]); in full deployment the user's own
//!   connected accounts, in their provider order and then each account's
//!   priority ([`UserDirect`]). A request that names a provider the caller
//!   cannot reach is refused as not configured (proxy mode) or not
//!   connected (full deployment): [`Reach`].

use std::sync::Arc;

use super::cooldowns::Cooldowns;
use super::direct::DirectProvider;
use super::primary::credentials::per_user::{PrimaryAuth, UserTokens, NOT_CONNECTED};
use super::registry::{Reach, Registry};
use super::switches::Switches;
use super::user_direct::{Providers, UserDirect};
use crate::auth::Caller;
use crate::error::GatewayError;
use crate::store::ids::UserId;
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
    /// The same, preferred first, as every proxy-mode request sees them.
    env_list: Providers,
    /// Full deployment: each user's connected direct accounts.
    user_direct: UserDirect,
    /// The providers an administrator switched off (full deployment).
    switches: Switches,
    /// Accounts resting after a 429.
    cooldowns: Cooldowns,
}

impl Accounts {
    pub fn new(
        shared_primary: PrimaryAuth,
        user_tokens: UserTokens,
        store: Option<Store>,
        env: Registry,
        user_direct: UserDirect,
    ) -> Self {
        let env_list = Arc::new(env.configured().cloned().collect());
        Accounts {
            shared_primary,
            user_tokens,
            store,
            env,
            env_list,
            user_direct,
            switches: Switches::default(),
            cooldowns: Cooldowns::default(),
        }
    }

    fn store(&self) -> Result<&Store, GatewayError> {
        self.store
            .as_ref()
            .ok_or_else(|| GatewayError::Config("this deployment has no store (proxy mode)".into()))
    }

    /// The `primary` token source of `caller`: 403 `provider_not_connected`
    /// with [`NOT_CONNECTED`] for a user without upstream credentials.
    pub async fn primary(&self, caller: &Caller) -> Result<PrimaryAuth, GatewayError> {
        match caller {
            Caller::Proxy => Ok(self.shared_primary.clone()),
            Caller::User(owner) => self.primary_of_user(owner.user_id).await,
        }
    }

    /// The `primary` token source of `user` (full deployment), as
    /// [`Accounts::primary`].
    pub async fn primary_of_user(&self, user: UserId) -> Result<PrimaryAuth, GatewayError> {
        match self.user_tokens.source(self.store()?, user).await? {
            Some(source) => Ok(PrimaryAuth::User(source)),
            None => Err(GatewayError::ProviderNotConnected(NOT_CONNECTED.into())),
        }
    }

    /// The direct providers `caller` can use, preferred first (several
    /// of one provider when the user connected several accounts).
    pub async fn direct(&self, caller: &Caller) -> Result<Providers, GatewayError> {
        match caller {
            Caller::Proxy => Ok(self.env_list.clone()),
            Caller::User(owner) => self.direct_of_user(owner.user_id).await,
        }
    }

    /// The direct providers `user` can use (their own and the pool's), as
    /// [`Accounts::direct`].
    pub async fn direct_of_user(&self, user: UserId) -> Result<Providers, GatewayError> {
        self.user_direct.providers(self.store()?, user).await
    }

    /// The accounts resting after a 429.
    pub fn cooldowns(&self) -> &Cooldowns {
        &self.cooldowns
    }

    /// What the accounts' rate-limit headers said (this replica).
    pub fn rate_limits(&self) -> &super::rate_limits::RateLimits {
        self.user_direct.rate_limits()
    }

    /// The client and SSRF guard for base URLs users give.
    pub fn user_base(&self) -> super::direct::UserBase {
        self.user_direct.user_base()
    }

    /// Follow a new configuration: the SSRF guard's permission for private
    /// networks.
    pub fn follow_runtime(&self, runtime: &crate::config::RuntimeConfig) {
        self.user_direct.follow_runtime(runtime);
    }

    /// The administrator's provider switches.
    pub fn switches(&self) -> &Switches {
        &self.switches
    }

    /// How a provider `caller` cannot use is refused.
    pub fn reach(&self, caller: &Caller) -> Reach {
        match caller {
            Caller::Proxy => Reach::Environment,
            Caller::User(_) => Reach::Connected,
        }
    }

    /// Forget the cached direct providers of `user` (their accounts or
    /// order changed).
    pub fn invalidate_user(&self, user: UserId) {
        self.user_direct.invalidate(user);
    }

    /// Drop the expired cached provider lists.
    pub fn purge_expired_users(&self) {
        self.user_direct.purge_expired();
    }

    /// Forget every user's cached direct providers (notifications may have
    /// been missed).
    pub fn invalidate_all_users(&self) {
        self.user_direct.invalidate_all();
    }

    /// The first direct provider of `id` among `providers`.
    pub fn first_of(
        providers: &[Arc<DirectProvider>],
        id: super::id::ProviderId,
    ) -> Option<&Arc<DirectProvider>> {
        providers.iter().find(|p| p.id == id)
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
