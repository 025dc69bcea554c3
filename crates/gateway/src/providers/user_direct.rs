//! Full deployment's direct providers of each user (spec 2.5, 4.4.3;
//! interfaces-full.md 2): the user's connected accounts, in their provider
//! order and then each account's priority, as [`DirectProvider`]s. Built
//! from the store on first use and cached per user for five minutes (spec
//! 2.5); dropped at once when the user's accounts change, on this replica by
//! the call that changed them and on the others by the store's
//! `accounts:<user id>` announcement.
//!
//! Accounts whose token is renewed (OAuth) or exchanged (the assistant
//! vendor) keep their session across list rebuilds, one per stored version
//! of the account: a refresh is single-flight per account, and an exchanged
//! token is used until it is due, not until the list's five minutes end.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use moka::future::Cache;

use super::direct::credentials::assistant_token::AssistantSession;
use super::direct::credentials::oauth::{OAuthSession, OAuthSettings, TokenHome};
use super::direct::{Auth, DirectProvider, UserBase};
use super::id::ProviderId;
use super::rate_limits::RateLimits;
use super::select;
use crate::cache::{Expiry, TtlCache};
use crate::config::{Config, RuntimeConfig};
use crate::error::GatewayError;
use crate::store::ids::{ProviderAccountId, UserId};
use crate::store::provider_accounts::UsableAccount;
use crate::store::Store;
use crate::telemetry::{self, CacheName};
use crate::upstream::build_user_url_client;
use crate::upstream::ssrf::ConnectGuard;

/// How long a user's provider list is kept.
const TTL: Duration = Duration::from_secs(300);
/// Users whose lists are kept at once.
const CAPACITY: usize = 10_000;
/// How long an unused token session is kept.
const SESSION_IDLE: Duration = Duration::from_secs(3600);

/// One stored version of an account: a change (a new token, a refresh
/// elsewhere) makes a new session.
type SessionKey = (ProviderAccountId, i64);

/// One user's direct providers, preferred first.
pub type Providers = Arc<Vec<Arc<DirectProvider>>>;

/// The API bases an account without its own uses.
#[derive(Debug, Clone)]
struct Bases {
    messages_vendor: String,
    completions_vendor: String,
}

/// What every provider built for an account shares.
#[derive(Debug, Clone)]
struct Shared<'a> {
    bases: &'a Bases,
    limits: &'a Arc<RateLimits>,
    user_base: &'a UserBase,
}

/// A new guarded client for users' base URLs (no pooled connections),
/// with `guard` following `runtime`.
fn user_base_client(runtime: &RuntimeConfig, guard: Arc<ConnectGuard>) -> UserBase {
    guard.set_allow_private(runtime.custom_allow_private_networks);
    let client = build_user_url_client(runtime, guard.clone());
    UserBase {
        client,
        guard,
        literal: None,
    }
}

/// What builds the token sessions of OAuth and exchanged-token accounts.
#[derive(Debug, Clone)]
struct SessionMaker {
    http: reqwest::Client,
    oauth: OAuthSettings,
    assistant_token_url: String,
    timeout: Duration,
    /// One session per stored version of an account.
    sessions: Cache<SessionKey, Auth>,
}

/// The per-user provider lists.
#[derive(Debug)]
pub struct UserDirect {
    cache: TtlCache<UserId, Providers>,
    bases: Bases,
    sessions: SessionMaker,
    /// What every account's rate-limit headers said.
    limits: Arc<RateLimits>,
    /// How base URLs users gave are called (replaced when private networks
    /// are disallowed again: pooled connections to them must go).
    user_base: std::sync::RwLock<UserBase>,
}

impl UserDirect {
    pub fn new(config: &Config, http: &reqwest::Client) -> Self {
        UserDirect {
            cache: TtlCache::new(CAPACITY, Expiry::AfterWrite(TTL)),
            bases: Bases {
                messages_vendor: config.upstream.messages_vendor_base_url.clone(),
                completions_vendor: config.upstream.completions_vendor_base_url.clone(),
            },
            sessions: SessionMaker {
                http: http.clone(),
                oauth: OAuthSettings::of(config),
                assistant_token_url: config.upstream.assistant_vendor_token_url.clone(),
                timeout: config.tuning.oidc_timeout,
                sessions: Cache::builder()
                    .max_capacity(CAPACITY as u64)
                    .time_to_idle(SESSION_IDLE)
                    .build(),
            },
            limits: Arc::default(),
            user_base: std::sync::RwLock::new(user_base_client(
                &config.runtime,
                Arc::new(ConnectGuard::default()),
            )),
        }
    }

    /// The client and guard for a base URL a user gives.
    pub fn user_base(&self) -> UserBase {
        self.user_base
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Follow the administrator's `custom_allow_private_networks`. When it
    /// is withdrawn, the client is replaced (its pooled connections may
    /// lead to internal addresses) and every user's providers are rebuilt.
    pub fn follow_runtime(&self, runtime: &RuntimeConfig) {
        let allow = runtime.custom_allow_private_networks;
        let mut current = self.user_base.write().unwrap_or_else(|p| p.into_inner());
        let was = current.guard.allows_private();
        current.guard.set_allow_private(allow);
        if was && !allow {
            *current = user_base_client(runtime, current.guard.clone());
            drop(current);
            self.invalidate_all();
        }
    }

    /// What the accounts' rate-limit headers said (this replica).
    pub fn rate_limits(&self) -> &RateLimits {
        &self.limits
    }

    /// The direct providers `user` can use now, preferred first.
    pub async fn providers(&self, store: &Store, user: UserId) -> Result<Providers, GatewayError> {
        if let Some(found) = self.cache.get(&user) {
            telemetry::meters().cache_lookup(CacheName::Credentials, true);
            return Ok(found);
        }
        telemetry::meters().cache_lookup(CacheName::Credentials, false);
        // Boxed: a miss is rare, and its store reads inline would size the
        // future of every request that asks for the list.
        Box::pin(self.load(store, user)).await
    }

    /// Build the list of `user` from the store and cache it.
    async fn load(&self, store: &Store, user: UserId) -> Result<Providers, GatewayError> {
        let accounts = store.provider_accounts();
        let mut usable = accounts.usable(user).await?;
        usable.extend(accounts.usable_pool().await?);
        let order = accounts.order(user).await?;
        let mut sessions = Vec::with_capacity(usable.len());
        for account in &usable {
            sessions.push(self.sessions.session(store, account).await);
        }
        let user_base = self.user_base();
        let shared = Shared {
            bases: &self.bases,
            limits: &self.limits,
            user_base: &user_base,
        };
        let built: Providers = Arc::new(build(&shared, usable, sessions, &order));
        self.cache.insert(user, built.clone());
        Ok(built)
    }

    /// Drop the expired lists.
    pub fn purge_expired(&self) {
        self.cache.purge_expired();
    }

    /// Forget every user's list.
    pub fn invalidate_all(&self) {
        self.cache.clear();
    }

    /// Forget the list of `user` (their accounts or order changed).
    pub fn invalidate(&self, user: UserId) {
        self.cache.remove(&user);
    }
}

/// The providers of `accounts` (the user's own by priority, then the pool's
/// by priority) in the order of `order` (provider ids; the ones not named
/// after, in the registry's default order): within a provider the user's own
/// accounts come before the pool's. Accounts this build cannot call yet are
/// left out.
fn build(
    shared: &Shared<'_>,
    accounts: Vec<UsableAccount>,
    sessions: Vec<Option<Auth>>,
    order: &[String],
) -> Vec<Arc<DirectProvider>> {
    let rank = |id: ProviderId| -> (usize, u32) {
        let named = order.iter().position(|o| o == id.as_str());
        (named.unwrap_or(usize::MAX), select::default_priority(id))
    };
    let mut providers: Vec<(usize, Arc<DirectProvider>)> = accounts
        .into_iter()
        .zip(sessions)
        .enumerate()
        .filter_map(|(at, (usable, session))| {
            provider_of(shared, usable, session).map(|p| (at, Arc::new(p)))
        })
        .collect();
    // Stable: accounts of one provider keep their order (own, then pool).
    providers.sort_by_key(|(at, p)| (rank(p.id), *at));
    providers.into_iter().map(|(_, p)| p).collect()
}

/// The provider one account reaches (`session`: its token session, for the
/// kinds that have one), if this build can call it.
fn provider_of(
    shared: &Shared<'_>,
    usable: UsableAccount,
    session: Option<Auth>,
) -> Option<DirectProvider> {
    let bases = shared.bases;
    let UsableAccount {
        account,
        access_token,
        ..
    } = usable;
    let id = ProviderId::parse(&account.provider)?;
    // The assistant vendor's base comes from its token exchange, not a user.
    let user_given = account.base_url.is_some() && id != ProviderId::AssistantVendor;
    let (base, auth) = match (id, account.auth_kind.as_str()) {
        (ProviderId::CompletionsVendor, "api_key") => (
            account
                .base_url
                .unwrap_or_else(|| bases.completions_vendor.clone()),
            Auth::Bearer(Some(access_token)),
        ),
        (ProviderId::Custom, "api_key") => (account.base_url?, Auth::Bearer(Some(access_token))),
        (ProviderId::MessagesVendor, "api_key") => (
            account
                .base_url
                .unwrap_or_else(|| bases.messages_vendor.clone()),
            Auth::ApiKey(access_token),
        ),
        (ProviderId::MessagesVendor, "oauth_pkce") => (
            account
                .base_url
                .unwrap_or_else(|| bases.messages_vendor.clone()),
            session?,
        ),
        // The API base comes with each exchanged token.
        (ProviderId::AssistantVendor, "oauth_code_host") => (String::new(), session?),
        _ => {
            tracing::debug!(
                account_id = %account.id,
                provider = %account.provider,
                auth_kind = %account.auth_kind,
                "account kind not callable yet; skipped"
            );
            return None;
        }
    };
    let provider =
        DirectProvider::new(id, base, auth).for_account(account.id, shared.limits.clone());
    Some(if user_given {
        provider.user_given(shared.user_base.clone())
    } else {
        provider
    })
}

impl SessionMaker {
    /// The token session of `usable`, for the kinds that have one: the one
    /// of its stored version when there is one, else a new one.
    async fn session(&self, store: &Store, usable: &UsableAccount) -> Option<Auth> {
        let account = &usable.account;
        let make = match (account.provider.as_str(), account.auth_kind.as_str()) {
            ("messages_vendor", "oauth_pkce") => Kind::OAuth,
            ("assistant_vendor", "oauth_code_host") => Kind::Assistant,
            _ => return None,
        };
        let key = (account.id, account.updated_at);
        let built = self
            .sessions
            .get_with(key, async {
                match make {
                    Kind::OAuth => {
                        let mut session = OAuthSession::new(
                            self.http.clone(),
                            self.oauth.clone(),
                            usable.access_token.clone(),
                            usable.refresh_token.clone(),
                            Some(TokenHome::Account {
                                store: store.clone(),
                                id: account.id,
                            }),
                        );
                        if let Some(at) = account.expires_at.and_then(|s| u64::try_from(s).ok()) {
                            session = session.with_expires_at(UNIX_EPOCH + Duration::from_secs(at));
                        }
                        Auth::OAuth(Arc::new(session))
                    }
                    Kind::Assistant => Auth::Assistant(Arc::new(AssistantSession::new(
                        self.http.clone(),
                        self.assistant_token_url.clone(),
                        usable.access_token.clone(),
                        self.timeout,
                    ))),
                }
            })
            .await;
        Some(built)
    }
}

/// The account kinds with a token session.
#[derive(Clone, Copy)]
enum Kind {
    OAuth,
    Assistant,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;
    use crate::store::ids::ProviderAccountId;
    use crate::store::provider_accounts::ProviderAccount;

    fn usable(provider: &str, base_url: Option<&str>) -> UsableAccount {
        UsableAccount {
            account: ProviderAccount {
                id: ProviderAccountId::new(),
                user_id: UserId::new(),
                provider: provider.to_owned(),
                label: String::new(),
                auth_kind: "api_key".to_owned(),
                expires_at: None,
                base_url: base_url.map(str::to_owned),
                priority: 100,
                pool: false,
                enabled: true,
                last_error: None,
                last_used_at: None,
                created_at: 0,
                updated_at: 0,
            },
            access_token: Secret::new("k"),
            refresh_token: None,
        }
    }

    fn bases() -> Bases {
        Bases {
            messages_vendor: "https://m.example".into(),
            completions_vendor: "https://c.example/v1".into(),
        }
    }

    fn build_with(accounts: Vec<UsableAccount>, order: &[String]) -> Vec<Arc<DirectProvider>> {
        let bases = bases();
        let limits = Arc::default();
        let user_base = UserBase {
            client: crate::upstream::client::HttpClient::direct(Duration::from_secs(5)),
            guard: Arc::default(),
            literal: None,
        };
        let sessions = vec![None; accounts.len()];
        build(
            &Shared {
                bases: &bases,
                limits: &limits,
                user_base: &user_base,
            },
            accounts,
            sessions,
            order,
        )
    }

    #[test]
    fn the_users_order_comes_first_then_the_registry_order() {
        let accounts = || {
            vec![
                usable("custom", Some("https://a.example/v1")),
                usable("completions_vendor", None),
                usable("custom", Some("https://b.example/v1")),
                usable("messages_vendor", None),
            ]
        };
        let ids = |ps: &[Arc<DirectProvider>]| ps.iter().map(|p| p.id).collect::<Vec<_>>();
        let default = build_with(accounts(), &[]);
        assert_eq!(
            ids(&default),
            [
                ProviderId::MessagesVendor,
                ProviderId::CompletionsVendor,
                ProviderId::Custom,
                ProviderId::Custom
            ]
        );
        let ordered = build_with(accounts(), &["custom".into()]);
        assert_eq!(ordered[0].id, ProviderId::Custom);
        assert_eq!(ordered[1].id, ProviderId::Custom);
        // Within a provider, the accounts keep their priority order.
        assert_eq!(ordered[0].base(), "https://a.example/v1");
        assert_eq!(ordered[1].base(), "https://b.example/v1");
        assert_eq!(ordered[2].id, ProviderId::MessagesVendor);
    }

    #[test]
    fn accounts_without_a_base_or_session_and_unknown_kinds_are_left_out() {
        let mut oauth = usable("assistant_vendor", None);
        oauth.account.auth_kind = "oauth_code_host".into();
        let built = build_with(
            vec![usable("custom", None), oauth, usable("nope", None)],
            &[],
        );
        assert!(built.is_empty());
    }
}
