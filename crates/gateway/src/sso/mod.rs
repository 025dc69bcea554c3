//! Web sign-in with OpenID Connect (spec 5.3): the authorization-code flow
//! with PKCE S256, `state` and `nonce`, against the identity provider an
//! admin configured ([`settings`]).
//!
//! [`Sso::begin`] discovers the provider ([`discovery`]), makes the secrets of
//! one attempt ([`pkce`]), keeps them in the store for 10 minutes
//! ([`pending`]: any replica can finish the sign-in) and returns the
//! authorization URL ([`redirect`]). [`Sso::finish`] takes the attempt of the
//! callback's `state` out (once, on any replica), checks the browser binding, exchanges
//! the code ([`exchange`]) and verifies the ID token against the provider's
//! keys ([`jwks`], [`verify`]). What to do with the verified identity (domain
//! allowlist, account, session) is the caller's: `ui_api::sso`.
//!
//! The browser binding: `begin` also returns a random value that the caller
//! puts in a short-lived cookie; the attempt keeps only its digest. A
//! callback URL taken from one browser and opened in another (login CSRF:
//! signing a victim into the attacker's account) fails for want of the cookie.

pub(crate) mod discovery;
pub(crate) mod exchange;
pub(crate) mod jwks;
pub(crate) mod pending;
pub(crate) mod pkce;
pub(crate) mod redirect;
pub(crate) mod settings;
pub(crate) mod verify;

use std::sync::Arc;
use std::time::Duration;

use subtle::ConstantTimeEq as _;

pub(crate) use pending::Purpose;
pub(crate) use settings::SsoSettings;
pub(crate) use verify::{TokenProblem, VerifiedIdentity};

use discovery::DiscoveryCache;
use exchange::CodeExchange;
use jwks::{KeyCache, KeyCacheTiming};
use pending::PendingStore;
use pkce::FlowSecrets;
use redirect::AuthorizationRequest;

use crate::config::Secret;
use crate::store::sso_pending::NewSsoLogin;
use crate::store::Store;

/// Why a sign-in failed. [`SsoError::code`] is the `error` of the redirect to
/// the login page; the detail goes to the log only.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum SsoError {
    /// The issuer URL, client id or client secret is not set.
    #[error("single sign-on is not configured")]
    NotConfigured,
    /// The request itself cannot start a sign-in (no usable Host, ...).
    #[error("{0}")]
    BadRequest(String),
    /// The provider (discovery, keys or token endpoint) could not be used.
    #[error("identity provider unavailable: {0}")]
    Unavailable(String),
    /// The provider sent the person back with an error (`access_denied`, ...).
    #[error("the identity provider answered {0}")]
    Denied(String),
    /// No pending attempt for the callback's `state` (unknown, used, expired,
    /// another browser, or the provider configuration changed meanwhile).
    #[error("unknown or expired sign-in attempt")]
    StateInvalid,
    /// The token endpoint refused the code.
    #[error("the identity provider refused the code: {0}")]
    ExchangeRefused(String),
    #[error("invalid ID token: {0}")]
    InvalidToken(TokenProblem),
    /// No email, or `email_verified` is not true.
    #[error("the identity provider did not vouch for the email address")]
    EmailNotVerified,
    /// The email's domain is not on the allowlist.
    #[error("the email domain is not allowed")]
    DomainNotAllowed,
    /// Link mode: the account is gone or its email differs from the identity's.
    #[error("the identity cannot be linked to this account: {0}")]
    LinkRefused(String),
    /// Our own failure (store, ...).
    #[error("internal error: {0}")]
    Internal(String),
}

impl SsoError {
    /// The code shown to the login page (`/_ui/login?error=<code>`).
    pub(crate) fn code(&self) -> &'static str {
        match self {
            SsoError::NotConfigured => "sso_not_configured",
            SsoError::BadRequest(_) => "sso_bad_request",
            SsoError::Unavailable(_) => "sso_unavailable",
            SsoError::Denied(_) => "sso_denied",
            SsoError::StateInvalid => "sso_state_invalid",
            SsoError::ExchangeRefused(_) => "sso_exchange_failed",
            SsoError::InvalidToken(_) => "sso_token_invalid",
            SsoError::EmailNotVerified => "sso_email_unverified",
            SsoError::DomainNotAllowed => "sso_domain_not_allowed",
            SsoError::LinkRefused(_) => "sso_link_refused",
            SsoError::Internal(_) => "sso_internal_error",
        }
    }
}

/// Timings of the flow; tests shorten them.
#[derive(Debug, Clone)]
pub(crate) struct SsoTuning {
    /// Lifetime of a pending attempt (spec 2.5a: 10 minutes), in whole
    /// seconds (rounded up).
    pub pending_ttl: Duration,
    /// Most pending attempts held (spec 2.5a: 10,000); when full, the
    /// oldest go.
    pub pending_capacity: u64,
    /// How long a discovery document is reused.
    pub discovery_ttl: Duration,
    /// How long a fetched key set is reused.
    pub jwks_ttl: Duration,
    /// Least time between two key refetches caused by an unknown `kid`.
    pub jwks_refetch_interval: Duration,
    /// Timeout of each call to the provider.
    pub http_timeout: Duration,
    /// Clock skew tolerated on `exp` and `iat`.
    pub leeway: Duration,
    /// Oldest `iat` accepted.
    pub max_token_age: Duration,
}

impl Default for SsoTuning {
    fn default() -> Self {
        SsoTuning {
            pending_ttl: Duration::from_secs(600),
            pending_capacity: 10_000,
            discovery_ttl: Duration::from_secs(3600),
            jwks_ttl: Duration::from_secs(3600),
            jwks_refetch_interval: Duration::from_secs(30),
            http_timeout: Duration::from_secs(10),
            leeway: Duration::from_secs(60),
            max_token_age: Duration::from_secs(600),
        }
    }
}

/// A started sign-in.
#[derive(Debug, Clone)]
pub(crate) struct Started {
    /// Where to send the browser.
    pub authorization_url: String,
    /// The browser-binding value for the flow cookie.
    pub binding: String,
}

/// What the provider sent back to the callback.
#[derive(Debug, Clone, Default)]
pub(crate) struct Callback {
    pub state: Option<String>,
    pub code: Option<String>,
    /// `error` of an error redirect (`access_denied`, ...).
    pub error: Option<String>,
    /// The flow cookie's value.
    pub binding: Option<String>,
}

/// A verified sign-in.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    pub identity: VerifiedIdentity,
    pub purpose: Purpose,
}

/// The sign-in service; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Sso(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    tuning: SsoTuning,
    discovery: DiscoveryCache,
    keys: KeyCache,
    pending: PendingStore,
}

impl Sso {
    /// The service over `store`, where pending attempts are kept.
    pub(crate) fn new(http: reqwest::Client, store: Store, tuning: SsoTuning) -> Self {
        Sso(Arc::new(Inner {
            discovery: DiscoveryCache::new(tuning.discovery_ttl),
            keys: KeyCache::new(KeyCacheTiming {
                ttl: tuning.jwks_ttl,
                refetch_interval: tuning.jwks_refetch_interval,
            }),
            pending: PendingStore::new(store, tuning.pending_ttl, tuning.pending_capacity),
            http,
            tuning,
        }))
    }

    /// Start a sign-in that comes back to `redirect_uri`.
    pub(crate) async fn begin(
        &self,
        settings: &SsoSettings,
        redirect_uri: &str,
        purpose: Purpose,
    ) -> Result<Started, SsoError> {
        let inner = &self.0;
        let meta = inner
            .discovery
            .get(&inner.http, &settings.issuer_url, inner.tuning.http_timeout)
            .await?;
        let secrets = FlowSecrets::generate();
        let authorization_url = redirect::authorization_url(&AuthorizationRequest {
            authorization_endpoint: &meta.authorization_endpoint,
            client_id: &settings.client_id,
            redirect_uri,
            state: &secrets.state,
            nonce: &secrets.nonce,
            code_challenge: &pkce::s256_challenge(&secrets.code_verifier),
        })?;
        let (code_verifier, nonce) = (
            Secret::new(secrets.code_verifier),
            Secret::new(secrets.nonce),
        );
        inner
            .pending
            .insert(&NewSsoLogin {
                state: &secrets.state,
                code_verifier: &code_verifier,
                nonce: &nonce,
                binding_digest: &pkce::digest_hex(&secrets.binding),
                redirect_uri,
                issuer: &settings.issuer_url,
                client_id: &settings.client_id,
                link_user: purpose.link_user(),
            })
            .await?;
        Ok(Started {
            authorization_url,
            binding: secrets.binding,
        })
    }

    /// Complete a sign-in from its callback: the verified identity and what
    /// the attempt was for.
    pub(crate) async fn finish(
        &self,
        settings: &SsoSettings,
        callback: &Callback,
    ) -> Result<Finished, SsoError> {
        let inner = &self.0;
        let state = callback.state.as_deref().ok_or(SsoError::StateInvalid)?;
        // Taken out first: a state is spent by its first callback, whatever
        // follows, on whichever replica it arrives.
        let pending = inner
            .pending
            .take(state)
            .await?
            .ok_or(SsoError::StateInvalid)?;
        let bound = callback
            .binding
            .as_deref()
            // Constant time, as every comparison with a secret's digest.
            .is_some_and(|b| {
                bool::from(
                    pkce::digest_hex(b)
                        .as_bytes()
                        .ct_eq(pending.binding_digest.as_bytes()),
                )
            });
        if !bound {
            return Err(SsoError::StateInvalid);
        }
        if pending.issuer != settings.issuer_url || pending.client_id != settings.client_id {
            return Err(SsoError::StateInvalid);
        }
        if let Some(error) = &callback.error {
            return Err(SsoError::Denied(error.clone()));
        }
        let code = callback
            .code
            .as_deref()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| SsoError::Denied("no code in the callback".into()))?;

        let meta = inner
            .discovery
            .get(&inner.http, &settings.issuer_url, inner.tuning.http_timeout)
            .await?;
        let id_token = exchange::exchange_code(
            &inner.http,
            &meta,
            settings,
            &CodeExchange {
                code,
                code_verifier: pending.code_verifier.expose(),
                redirect_uri: &pending.redirect_uri,
            },
            inner.tuning.http_timeout,
        )
        .await?;
        let header = verify::read_header(&id_token)?;
        let key = inner
            .keys
            .key(
                &inner.http,
                &meta.jwks_uri,
                header.kid.as_deref(),
                inner.tuning.http_timeout,
            )
            .await?;
        let identity = verify::verify(
            &id_token,
            &key,
            &verify::Expectations {
                issuer: &meta.issuer,
                client_id: &settings.client_id,
                nonce: pending.nonce.expose(),
                leeway: inner.tuning.leeway,
                max_age: inner.tuning.max_token_age,
            },
        )?;
        Ok(Finished {
            identity,
            purpose: Purpose::of(pending.link_user),
        })
    }
}

/// GET a JSON document from the provider: its body, or `Unavailable`.
async fn get_json_body(
    http: &reqwest::Client,
    url: &str,
    timeout: Duration,
) -> Result<bytes::Bytes, SsoError> {
    let response = http
        .get(url)
        .timeout(timeout)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| SsoError::Unavailable(format!("{url}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        return Err(SsoError::Unavailable(format!("{url}: HTTP {status}")));
    }
    response
        .bytes()
        .await
        .map_err(|e| SsoError::Unavailable(format!("{url}: {e}")))
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod service_tests;
