//! OAuth access tokens of `messages_vendor` (protocol doc 5.3): a subscription
//! access token used as a bearer, refreshed with its refresh token.
//!
//! - A token is refreshed when less than `refresh_ahead` (300 s) of its life
//!   is left (half its life for a token issued for less than twice that, so
//!   a short-lived token is not refreshed again right away), and after the
//!   vendor rejects it (401).
//! - One refresh at a time (single flight): callers that find a refresh under
//!   way wait for it and take its result, so 50 concurrent requests with an
//!   expiring token cause one refresh. The `generation` counter tells a waiter
//!   that the token it would refresh has been replaced already.
//! - The vendor rotates refresh tokens, so the latest pair is kept
//!   ([`TokenHome`]): a user's account row in full deployment (encrypted,
//!   announced to the other replicas, which then build their sessions from
//!   it); in proxy mode `$DATA_DIR/provider_tokens.json` (atomic, 0600)
//!   under `messages_vendor`, tagged with a hash of the configured refresh
//!   token: after a restart the stored pair is used while the configuration
//!   still names the same original token, and ignored once the operator
//!   configures a new one.
//! - The expiry of the configured access token is unknown; it is used until
//!   the vendor rejects it or the first refresh tells the real expiry.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::config::Secret;
use crate::error::GatewayError;
use crate::providers::primary::credentials::TokenFile;
use crate::store::ids::ProviderAccountId;
use crate::store::Store;

/// Public client id of the vendor's command-line client (protocol doc 5.3).
pub const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
/// The vendor's token endpoint when `MESSAGES_VENDOR_OAUTH_BASE_URL` is unset.
pub const DEFAULT_TOKEN_URL: &str = "https://console.anthropic.com/v1/oauth/token";
/// Path of the token endpoint under `MESSAGES_VENDOR_OAUTH_BASE_URL`.
pub const TOKEN_PATH: &str = "/v1/oauth/token";
/// Key of this provider's entry in the token file.
const FILE_KEY: &str = "messages_vendor";
/// Lifetime assumed when a refresh answer has no `expires_in` (the vendor's usual hour).
const DEFAULT_EXPIRES_IN: u64 = 3600;

/// Where and how refreshes happen.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    pub token_url: String,
    pub client_id: String,
    /// Refresh when less than this is left.
    pub refresh_ahead: Duration,
    /// Time limit of one refresh call.
    pub timeout: Duration,
}

#[derive(Debug)]
struct State {
    access: Secret,
    refresh: Option<Secret>,
    expires_at: Option<SystemTime>,
    /// Refresh when less than this is left.
    margin: Duration,
    /// Incremented by every successful refresh.
    generation: u64,
    /// The token file has been read (it is read once, lazily).
    loaded: bool,
}

/// Where a session keeps the pair a refresh gave it.
#[derive(Debug)]
pub enum TokenHome {
    /// Proxy mode: the token file, tied to the configured refresh token.
    File(TokenFile),
    /// Full deployment: the row of a user's (or the pool's) account.
    Account { store: Store, id: ProviderAccountId },
}

impl OAuthSettings {
    /// The settings of this deployment: the token endpoint under
    /// `MESSAGES_VENDOR_OAUTH_BASE_URL` (the vendor's own when unset).
    pub fn of(config: &crate::config::Config) -> Self {
        OAuthSettings {
            token_url: token_url(config.upstream.messages_vendor_oauth_base_url.as_deref()),
            client_id: CLIENT_ID.to_owned(),
            refresh_ahead: config.tuning.token_refresh_ahead,
            timeout: config.tuning.oidc_timeout,
        }
    }
}

/// The token endpoint under an OAuth base (the vendor's own for `None`).
pub fn token_url(oauth_base: Option<&str>) -> String {
    oauth_base
        .map(|b| format!("{b}{TOKEN_PATH}"))
        .unwrap_or_else(|| DEFAULT_TOKEN_URL.to_owned())
}

/// The OAuth credentials of one account.
#[derive(Debug)]
pub struct OAuthSession {
    http: reqwest::Client,
    settings: OAuthSettings,
    home: Option<TokenHome>,
    /// SHA-256 (hex) of the configured refresh token: ties the stored pair to it.
    seed: String,
    state: Mutex<State>,
    refresh_lock: tokio::sync::Mutex<()>,
}

/// A bearer token and the generation it belongs to (for [`OAuthSession::rejected`]).
#[derive(Debug, Clone)]
pub struct Bearer {
    pub token: Secret,
    pub generation: u64,
}

#[derive(Deserialize)]
struct Grant {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl OAuthSession {
    /// A session starting from the configured (or stored) tokens; `home`
    /// keeps rotated pairs.
    pub fn new(
        http: reqwest::Client,
        settings: OAuthSettings,
        access: Secret,
        refresh: Option<Secret>,
        home: Option<TokenHome>,
    ) -> Self {
        let seed = refresh
            .as_ref()
            .map(|r| hex_sha256(r.expose()))
            .unwrap_or_default();
        let margin = settings.refresh_ahead;
        // Only the token file holds something newer than what was given.
        let loaded = !matches!(home, Some(TokenHome::File(_)));
        OAuthSession {
            http,
            settings,
            home: home.filter(|_| refresh.is_some()),
            seed,
            state: Mutex::new(State {
                access,
                refresh,
                expires_at: None,
                margin,
                generation: 0,
                loaded,
            }),
            refresh_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// Start with a known expiry of the configured access token.
    pub fn with_expires_at(self, at: SystemTime) -> Self {
        self.state().expires_at = Some(at);
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Plain data: a panic elsewhere cannot leave it half-updated in a way that matters.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a refresh token is configured.
    pub fn can_refresh(&self) -> bool {
        self.state().refresh.is_some()
    }

    /// The token to send now, refreshed first when it is close to expiry.
    pub async fn bearer(&self) -> Result<Bearer, GatewayError> {
        let now = SystemTime::now();
        let (seen, usable) = {
            let s = self.state();
            let usable = s.loaded && !needs_refresh(&s, now);
            (s.generation, usable)
        };
        if usable || !self.can_refresh() {
            return Ok(self.current());
        }
        let _flight = self.refresh_lock.lock().await;
        self.load_stored().await;
        let now = SystemTime::now();
        {
            let s = self.state();
            // Another caller refreshed while this one waited: take its token.
            let replaced = s.generation != seen && s.expires_at.is_none_or(|e| now < e);
            if replaced || !needs_refresh(&s, now) {
                return Ok(bearer_of(&s));
            }
        }
        match self.refresh_now().await {
            Ok(()) => Ok(self.current()),
            Err(e) => {
                let s = self.state();
                if s.expires_at.is_some_and(|at| now >= at) {
                    return Err(e);
                }
                // Still valid for a while: use it and try again on the next request.
                tracing::warn!(
                    "messages_vendor OAuth refresh failed; using the current token: {e}"
                );
                Ok(bearer_of(&s))
            }
        }
    }

    /// The vendor refused the token of `generation`: refresh unless that
    /// happened already. Errors when there is nothing to refresh with.
    pub async fn rejected(&self, generation: u64) -> Result<(), GatewayError> {
        if !self.can_refresh() {
            return Err(GatewayError::upstream(
                StatusCode::UNAUTHORIZED,
                format!(
                    "messages_vendor rejected the OAuth token and there is no refresh token; {}",
                    self.renew_hint()
                ),
            ));
        }
        let _flight = self.refresh_lock.lock().await;
        if self.state().generation != generation {
            return Ok(());
        }
        self.refresh_now().await
    }

    fn current(&self) -> Bearer {
        bearer_of(&self.state())
    }

    /// What the person who can fix a dead token should do.
    fn renew_hint(&self) -> &'static str {
        match self.home {
            Some(TokenHome::Account { .. }) => {
                "connect messages_vendor again (GET /_ui/api/providers/messages_vendor/auth)"
            }
            _ => "configure a new MESSAGES_VENDOR_OAUTH_TOKEN and MESSAGES_VENDOR_REFRESH_TOKEN",
        }
    }

    /// Read the stored pair once (under the refresh lock).
    async fn load_stored(&self) {
        if self.state().loaded {
            return;
        }
        let stored = match &self.home {
            Some(TokenHome::File(file)) => match file.read_object().await {
                Ok(obj) => obj.and_then(|mut o| o.remove(FILE_KEY)),
                Err(e) => {
                    tracing::warn!("reading stored messages_vendor tokens: {e}");
                    None
                }
            },
            _ => None,
        };
        let mut s = self.state();
        s.loaded = true;
        let Some(entry) = stored else {
            return;
        };
        let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_owned);
        if text("seed").as_deref() != Some(self.seed.as_str()) {
            return;
        }
        if let (Some(access), Some(refresh)) = (text("access_token"), text("refresh_token")) {
            s.access = Secret::new(access);
            s.refresh = Some(Secret::new(refresh));
            s.expires_at = entry
                .get("expires_at")
                .and_then(Value::as_u64)
                .map(|secs| UNIX_EPOCH + Duration::from_secs(secs));
            if let Some(secs) = entry.get("margin_secs").and_then(Value::as_u64) {
                s.margin = Duration::from_secs(secs);
            }
            tracing::info!("using the stored (rotated) messages_vendor OAuth tokens");
        }
    }

    /// One refresh call; the caller holds the refresh lock.
    async fn refresh_now(&self) -> Result<(), GatewayError> {
        let Some(refresh) = self.state().refresh.clone() else {
            return Err(GatewayError::Config(
                "messages_vendor has no refresh token".into(),
            ));
        };
        let body = json!({
            "grant_type": "refresh_token",
            "refresh_token": refresh.expose(),
            "client_id": self.settings.client_id,
        });
        let sent = self
            .http
            .post(&self.settings.token_url)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.settings.timeout)
            .json(&body)
            .send()
            .await;
        let resp = sent.map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("messages_vendor OAuth refresh failed: {e}"),
            )
        })?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("messages_vendor OAuth refresh failed: {e}"),
            )
        })?;
        if !status.is_success() {
            let (message, _) = crate::upstream::http::parse_error_body(status, &bytes);
            // A refused refresh token cannot be fixed by retrying: say what to do.
            let status = if status.is_client_error() {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::BAD_GATEWAY
            };
            let text = format!(
                "messages_vendor OAuth refresh was refused ({message}); {}",
                self.renew_hint()
            );
            if let Some(TokenHome::Account { store, id }) = &self.home {
                if status == StatusCode::UNAUTHORIZED {
                    if let Err(e) = store.provider_accounts().record_error(*id, &text).await {
                        tracing::warn!(account_id = %id, "recording a refused refresh: {e}");
                    }
                }
            }
            return Err(GatewayError::upstream(status, text));
        }
        let grant: Grant = serde_json::from_slice(&bytes).map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("messages_vendor OAuth refresh answer is not understood: {e}"),
            )
        })?;
        let expires_in = grant.expires_in.unwrap_or(DEFAULT_EXPIRES_IN);
        let expires_at = SystemTime::now() + Duration::from_secs(expires_in);
        let (generation, stored) = {
            let mut s = self.state();
            s.access = Secret::new(grant.access_token);
            if let Some(r) = grant.refresh_token.filter(|r| !r.is_empty()) {
                s.refresh = Some(Secret::new(r));
            }
            s.expires_at = Some(expires_at);
            s.margin = margin_for(self.settings.refresh_ahead, expires_in);
            s.generation += 1;
            let stored = Stored {
                access: s.access.clone(),
                refresh: s.refresh.clone(),
                expires_at: unix_secs(expires_at),
                margin_secs: s.margin.as_secs(),
            };
            (s.generation, stored)
        };
        tracing::info!(
            generation,
            expires_in,
            "messages_vendor OAuth token refreshed"
        );
        self.keep(stored).await;
        Ok(())
    }

    /// Keep a refreshed pair where this session's tokens live.
    async fn keep(&self, stored: Stored) {
        let result = match &self.home {
            None => return,
            Some(TokenHome::File(file)) => {
                let entry = json!({
                    "seed": self.seed,
                    "access_token": stored.access.expose(),
                    "refresh_token": stored.refresh.as_ref().map(Secret::expose),
                    "expires_at": stored.expires_at,
                    "margin_secs": stored.margin_secs,
                });
                file.update(move |obj| {
                    obj.insert(FILE_KEY.to_owned(), entry);
                })
                .await
                .map_err(|e| e.to_string())
            }
            Some(TokenHome::Account { store, id }) => store
                .provider_accounts()
                .store_tokens(
                    *id,
                    &stored.access,
                    stored.refresh.as_ref(),
                    i64::try_from(stored.expires_at).ok(),
                )
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = result {
            tracing::warn!("could not store the rotated messages_vendor tokens: {e}");
        }
    }
}

/// A refreshed pair, to keep.
struct Stored {
    access: Secret,
    refresh: Option<Secret>,
    /// Unix seconds.
    expires_at: u64,
    margin_secs: u64,
}

fn unix_secs(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn needs_refresh(s: &State, now: SystemTime) -> bool {
    s.expires_at.is_some_and(|at| now + s.margin >= at)
}

/// The refresh margin of a token issued for `expires_in` seconds.
fn margin_for(refresh_ahead: Duration, expires_in: u64) -> Duration {
    refresh_ahead.min(Duration::from_secs(expires_in) / 2)
}

fn bearer_of(s: &State) -> Bearer {
    Bearer {
        token: s.access.clone(),
        generation: s.generation,
    }
}

fn hex_sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
#[path = "oauth_tests.rs"]
mod tests;
