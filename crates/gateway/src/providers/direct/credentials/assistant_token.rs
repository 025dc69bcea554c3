//! The `assistant_vendor` token (protocol doc 7.3): the configured code-host
//! token is exchanged for a short-lived assistant token and the API base URL
//! (`endpoints.api`). The pair is cached until shortly before `expires_at`
//! (a minute, or half the token's life when it is shorter; earlier when the
//! answer's `refresh_in` says so), exchanged again after that or when the API
//! rejects the token (401), one exchange at a time.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use serde::Deserialize;

use crate::config::Secret;
use crate::error::GatewayError;

/// Identity headers the vendor expects from its editor integration (protocol doc 7.4).
pub const EDITOR_VERSION: &str = "vscode/1.104.1";
pub const EDITOR_PLUGIN_VERSION: &str = "copilot-chat/0.26.7";
pub const USER_AGENT: &str = "GitHubCopilotChat/0.26.7";
pub const GITHUB_API_VERSION: &str = "2025-04-01";
pub const INTEGRATION_ID: &str = "vscode-chat";
/// API base when the exchange answer names none.
pub const DEFAULT_API_BASE: &str = "https://api.githubcopilot.com";
/// Longest safety margin before `expires_at`.
const MAX_MARGIN: Duration = Duration::from_secs(60);

/// A usable assistant token.
#[derive(Debug, Clone)]
pub struct AssistantToken {
    pub token: Secret,
    /// `endpoints.api`, without a trailing `/`.
    pub api_base: String,
    pub generation: u64,
}

#[derive(Debug)]
struct Cached {
    token: Secret,
    api_base: String,
    use_until: SystemTime,
}

#[derive(Debug, Default)]
struct State {
    cached: Option<Cached>,
    generation: u64,
}

#[derive(Deserialize)]
struct Exchange {
    token: String,
    expires_at: u64,
    #[serde(default)]
    refresh_in: Option<u64>,
    #[serde(default)]
    endpoints: Option<Endpoints>,
}

#[derive(Deserialize)]
struct Endpoints {
    #[serde(default)]
    api: Option<String>,
}

/// The exchanged token of one code-host account.
#[derive(Debug)]
pub struct AssistantSession {
    http: reqwest::Client,
    token_url: String,
    github_token: Secret,
    timeout: Duration,
    state: Mutex<State>,
    exchange_lock: tokio::sync::Mutex<()>,
}

impl AssistantSession {
    pub fn new(
        http: reqwest::Client,
        token_url: String,
        github_token: Secret,
        timeout: Duration,
    ) -> Self {
        AssistantSession {
            http,
            token_url,
            github_token,
            timeout,
            state: Mutex::new(State::default()),
            exchange_lock: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A current token, exchanged first when there is none or it is due.
    pub async fn token(&self) -> Result<AssistantToken, GatewayError> {
        if let Some(t) = self.valid() {
            return Ok(t);
        }
        let _flight = self.exchange_lock.lock().await;
        if let Some(t) = self.valid() {
            return Ok(t);
        }
        self.exchange().await
    }

    /// The API refused the token of `generation`: forget it (unless it was
    /// replaced already) so the next [`AssistantSession::token`] exchanges again.
    pub async fn rejected(&self, generation: u64) {
        let _flight = self.exchange_lock.lock().await;
        let mut s = self.state();
        if s.generation == generation {
            s.cached = None;
        }
    }

    fn valid(&self) -> Option<AssistantToken> {
        let s = self.state();
        let c = s.cached.as_ref()?;
        (SystemTime::now() < c.use_until).then(|| AssistantToken {
            token: c.token.clone(),
            api_base: c.api_base.clone(),
            generation: s.generation,
        })
    }

    async fn exchange(&self) -> Result<AssistantToken, GatewayError> {
        let unreachable = |e: reqwest::Error| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("assistant_vendor token exchange failed: {e}"),
            )
        };
        let resp = self
            .http
            .get(&self.token_url)
            .header(
                reqwest::header::AUTHORIZATION,
                format!("token {}", self.github_token.expose()),
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .header("editor-version", EDITOR_VERSION)
            .header("editor-plugin-version", EDITOR_PLUGIN_VERSION)
            .header("copilot-integration-id", INTEGRATION_ID)
            .header("x-github-api-version", GITHUB_API_VERSION)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            let (message, _) = crate::upstream::http::parse_error_body(status, &body);
            return Err(GatewayError::upstream(
                status,
                format!(
                    "assistant_vendor token exchange refused ({message}); check that \
                     ASSISTANT_VENDOR_GITHUB_TOKEN is valid and the account has the assistant"
                ),
            ));
        }
        let answer: Exchange = serde_json::from_slice(&body).map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("assistant_vendor token exchange answer is not understood: {e}"),
            )
        })?;
        let now = SystemTime::now();
        let expires_at = UNIX_EPOCH + Duration::from_secs(answer.expires_at);
        let use_until = use_until(now, expires_at, answer.refresh_in);
        let api_base = answer
            .endpoints
            .and_then(|e| e.api)
            .map(|a| a.trim().trim_end_matches('/').to_owned())
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| DEFAULT_API_BASE.to_owned());
        let mut s = self.state();
        s.generation += 1;
        s.cached = Some(Cached {
            token: Secret::new(answer.token),
            api_base: api_base.clone(),
            use_until,
        });
        tracing::info!(
            generation = s.generation,
            valid_for_secs = use_until.duration_since(now).map_or(0, |d| d.as_secs()),
            "assistant_vendor token exchanged"
        );
        Ok(AssistantToken {
            token: s
                .cached
                .as_ref()
                .map(|c| c.token.clone())
                .unwrap_or_default(),
            api_base,
            generation: s.generation,
        })
    }
}

/// When to stop using a token: `expires_at` minus a margin of a minute (half
/// the remaining life when that is shorter), and no later than `refresh_in`.
/// A token that is already expired is used for this one request only.
pub fn use_until(now: SystemTime, expires_at: SystemTime, refresh_in: Option<u64>) -> SystemTime {
    let life = expires_at.duration_since(now).unwrap_or_default();
    let margin = MAX_MARGIN.min(life / 2);
    let mut until = expires_at.checked_sub(margin).unwrap_or(now);
    if let Some(secs) = refresh_in.filter(|s| *s > 0) {
        until = until.min(now + Duration::from_secs(secs));
    }
    until
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_used_until_shortly_before_it_expires() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let s = Duration::from_secs;
        assert_eq!(use_until(now, now + s(1800), None), now + s(1740));
        assert_eq!(use_until(now, now + s(1800), Some(1500)), now + s(1500));
        assert_eq!(use_until(now, now + s(4), None), now + s(2));
        assert_eq!(use_until(now, now - s(10), None), now - s(10));
    }
}
