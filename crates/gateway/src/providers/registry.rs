//! The direct providers configured by the environment (proxy mode,
//! interfaces.md 3): one account each, built once at start ([`Registry`]),
//! and the choice of the provider for a request among the providers a
//! caller can reach ([`choose`], interfaces.md 5).

use std::sync::Arc;
use std::time::Duration;

use super::direct::credentials::assistant_token::AssistantSession;
use super::direct::credentials::oauth::{OAuthSession, OAuthSettings, TokenHome};
use super::direct::models;
use super::direct::{Auth, DirectProvider};
use super::id::ProviderId;
use super::primary::credentials::TokenFile;
use super::select::{self, Requested};
use crate::config::{Config, GatewayMode};
use crate::error::GatewayError;
use crate::upstream::Upstream;

/// File (under `DATA_DIR`) keeping rotated provider tokens.
pub const PROVIDER_TOKENS_FILE: &str = "provider_tokens.json";

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub provider: ProviderId,
    /// The model name as the provider is sent it (prefix removed).
    pub model: String,
    /// The client named the provider (`provider_id/model`).
    pub explicit: bool,
}

/// The configured direct providers; cheap to share.
#[derive(Debug, Default)]
pub struct Registry {
    messages_vendor: Option<Arc<DirectProvider>>,
    completions_vendor: Option<Arc<DirectProvider>>,
    assistant_vendor: Option<Arc<DirectProvider>>,
    custom: Option<Arc<DirectProvider>>,
}

impl Registry {
    /// The providers the configuration enables (proxy mode only).
    pub fn from_config(config: &Config, http: &reqwest::Client) -> Registry {
        if config.mode != GatewayMode::Proxy {
            return Registry::default();
        }
        let keys = &config.providers;
        let up = &config.upstream;
        let timeout = config.tuning.oidc_timeout;
        let mut registry = Registry::default();

        let oauth_token = keys.messages_vendor_oauth_token.clone();
        let refresh_token = keys.messages_vendor_refresh_token.clone();
        let messages_auth = match (&keys.messages_vendor_api_key, oauth_token, refresh_token) {
            (Some(key), oauth, refresh) => {
                if oauth.is_some() || refresh.is_some() {
                    tracing::warn!(
                        "MESSAGES_VENDOR_API_KEY is set: the messages_vendor OAuth tokens are not used"
                    );
                }
                Some(Auth::ApiKey(key.clone()))
            }
            (None, None, None) => None,
            (None, access, refresh) => {
                let settings = OAuthSettings::of(config);
                let file = TokenFile::new(config.data_dir.join(PROVIDER_TOKENS_FILE));
                let only_refresh = access.is_none();
                let mut session = OAuthSession::new(
                    http.clone(),
                    settings,
                    access.unwrap_or_default(),
                    refresh,
                    Some(TokenHome::File(file)),
                );
                if only_refresh {
                    // No access token yet: the first request refreshes.
                    session = session.with_expires_at(std::time::UNIX_EPOCH);
                }
                Some(Auth::OAuth(Arc::new(session)))
            }
        };
        registry.messages_vendor = messages_auth.map(|auth| {
            Arc::new(DirectProvider::new(
                ProviderId::MessagesVendor,
                up.messages_vendor_base_url.clone(),
                auth,
            ))
        });
        registry.completions_vendor = keys.completions_vendor_api_key.clone().map(|key| {
            Arc::new(DirectProvider::new(
                ProviderId::CompletionsVendor,
                up.completions_vendor_base_url.clone(),
                Auth::Bearer(Some(key)),
            ))
        });
        registry.assistant_vendor = keys.assistant_vendor_github_token.clone().map(|token| {
            let session = AssistantSession::new(
                http.clone(),
                up.assistant_vendor_token_url.clone(),
                token,
                timeout,
            );
            // The base comes with each exchanged token.
            Arc::new(DirectProvider::new(
                ProviderId::AssistantVendor,
                "",
                Auth::Assistant(Arc::new(session)),
            ))
        });
        registry.custom = keys.custom_base_url.clone().map(|base| {
            Arc::new(DirectProvider::new(
                ProviderId::Custom,
                base,
                Auth::Bearer(keys.custom_api_key.clone()),
            ))
        });
        for p in registry.configured() {
            tracing::info!(
                provider = %p.id,
                auth = p.auth.kind(),
                "direct provider configured"
            );
        }
        registry
    }

    /// A registry with exactly these providers (tests, and full mode later).
    pub fn with(providers: Vec<DirectProvider>) -> Registry {
        let mut r = Registry::default();
        for p in providers {
            let slot = match p.id {
                ProviderId::MessagesVendor => &mut r.messages_vendor,
                ProviderId::CompletionsVendor => &mut r.completions_vendor,
                ProviderId::AssistantVendor => &mut r.assistant_vendor,
                ProviderId::Custom => &mut r.custom,
                ProviderId::Primary => continue,
            };
            *slot = Some(Arc::new(p));
        }
        r
    }

    /// The configured direct provider `id`.
    pub fn get(&self, id: ProviderId) -> Option<&Arc<DirectProvider>> {
        match id {
            ProviderId::Primary => None,
            ProviderId::MessagesVendor => self.messages_vendor.as_ref(),
            ProviderId::CompletionsVendor => self.completions_vendor.as_ref(),
            ProviderId::AssistantVendor => self.assistant_vendor.as_ref(),
            ProviderId::Custom => self.custom.as_ref(),
        }
    }

    /// Configured direct providers, lowest priority first.
    pub fn configured(&self) -> impl Iterator<Item = &Arc<DirectProvider>> {
        let mut all: Vec<&Arc<DirectProvider>> = [
            &self.messages_vendor,
            &self.completions_vendor,
            &self.assistant_vendor,
            &self.custom,
        ]
        .into_iter()
        .flatten()
        .collect();
        all.sort_by_key(|p| select::default_priority(p.id));
        all.into_iter()
    }

    /// Choose the provider for the client's model name among this
    /// registry's providers (interfaces.md 5); see [`choose`].
    pub async fn select(
        &self,
        upstream: &Upstream,
        ttl: Duration,
        name: &str,
    ) -> Result<Route, GatewayError> {
        let available: Vec<Arc<DirectProvider>> = self.configured().cloned().collect();
        choose(upstream, ttl, name, &available, Reach::Environment, &[]).await
    }
}

/// How a request that names a provider the caller cannot reach is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Proxy mode: the environment did not configure it (400 `invalid_model`).
    Environment,
    /// Full deployment: the user has not connected it (403
    /// `provider_not_connected`).
    Connected,
}

impl Reach {
    fn refuse(self, name: &str, provider: ProviderId) -> GatewayError {
        match self {
            Reach::Environment => GatewayError::InvalidModel(format!(
                "model '{name}' names provider '{provider}', which is not configured: {}",
                provider.how_to_configure()
            )),
            Reach::Connected => GatewayError::ProviderNotConnected(format!(
                "model '{name}' names provider '{provider}', which you have not connected: \
                 connect an account in the web console (Providers), or with \
                 POST /_ui/api/providers/{provider}/accounts"
            )),
        }
    }
}

/// Choose the provider for the client's model name (interfaces.md 5) among
/// the direct providers the caller can reach (`available`, priority order).
///
/// An explicit prefix must name an available provider (`primary` always
/// is). Otherwise the available providers are tried in order: one takes the
/// model when it is its native family, or, for the listing-based providers,
/// when its model list (cached for `ttl`) has the name. Nothing takes it:
/// `primary`.
pub async fn choose(
    upstream: &Upstream,
    ttl: Duration,
    name: &str,
    available: &[Arc<DirectProvider>],
    reach: Reach,
    disabled: &[ProviderId],
) -> Result<Route, GatewayError> {
    match select::parse_model(name) {
        Requested::Explicit { provider, model } => {
            if model.trim().is_empty() {
                return Err(GatewayError::InvalidModel(format!(
                    "model '{name}' names provider '{provider}' but no model after the '/'"
                )));
            }
            if disabled.contains(&provider) {
                return Err(GatewayError::ProviderDisabled(format!(
                    "model '{name}' names provider '{provider}', which an administrator disabled"
                )));
            }
            if provider != ProviderId::Primary && !available.iter().any(|p| p.id == provider) {
                return Err(reach.refuse(name, provider));
            }
            Ok(Route {
                provider,
                model: select::upstream_model(provider, model),
                explicit: true,
            })
        }
        Requested::Bare(model) => {
            let family = select::native_family(model);
            for p in available.iter().filter(|p| !disabled.contains(&p.id)) {
                let takes = if select::serves_by_listing(p.id) {
                    models::list(upstream, ttl, p)
                        .await
                        .iter()
                        .any(|m| m.id == model)
                } else {
                    family == Some(p.id)
                };
                if takes {
                    return Ok(Route {
                        provider: p.id,
                        model: select::upstream_model(p.id, model),
                        explicit: false,
                    });
                }
            }
            Ok(Route {
                provider: ProviderId::Primary,
                model: model.to_owned(),
                explicit: false,
            })
        }
    }
}
