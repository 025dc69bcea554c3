//! The four direct-relay providers behind one type: where each one's
//! endpoints are, how a request to it is authenticated and dressed, and how a
//! rejected credential is renewed. Sending goes through the shared retry
//! policy ([`crate::upstream::http::send_with_retry`]); a 401 renews the
//! credential (OAuth refresh, assistant token exchange) and retries once.
//!
//! | Provider | Chat endpoint | Auth |
//! |---|---|---|
//! | `messages_vendor` | `{base}/v1/messages` | `x-api-key`, or OAuth bearer + `anthropic-beta: oauth-2025-04-20`; `anthropic-version` |
//! | `completions_vendor` | `{base}/chat/completions` (base is the `/v1` root) | bearer API key |
//! | `assistant_vendor` | `{endpoints.api}/chat/completions` | exchanged bearer + editor headers |
//! | `custom` | `{base}/chat/completions` (base is the `/v1` root) | bearer when a key is set |

use std::sync::{Arc, Mutex};

use axum::http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::http::Uri;
use bytes::Bytes;

use super::credentials::assistant_token::{self, AssistantSession};
use super::credentials::oauth::OAuthSession;
use super::models::ModelListCache;
use crate::config::Secret;
use crate::error::GatewayError;
use crate::providers::id::{ProviderId, WireFormat};
use crate::providers::rate_limits::RateLimits;
use crate::store::ids::ProviderAccountId;
use crate::upstream::client::{HttpClient, Response};
use crate::upstream::http::{send_with_retry, Outgoing, RetryPolicy, UpstreamError};
use crate::upstream::ssrf::{literal_host, ConnectGuard};

/// `anthropic-version` sent when the client named none.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The beta flag OAuth (subscription) traffic needs.
pub const OAUTH_BETA: &str = "oauth-2025-04-20";

/// How a provider authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `x-api-key` (messages vendor).
    ApiKey(Secret),
    /// OAuth bearer with refresh (messages vendor).
    OAuth(Arc<OAuthSession>),
    /// `Authorization: Bearer`, when a key is set.
    Bearer(Option<Secret>),
    /// An exchanged assistant token; the API base comes with it.
    Assistant(Arc<AssistantSession>),
}

impl Auth {
    /// A short, secret-free name for logs (`api_key`, `oauth`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Auth::ApiKey(_) => "api_key",
            Auth::OAuth(_) => "oauth",
            Auth::Bearer(Some(_)) => "api_key",
            Auth::Bearer(None) => "none",
            Auth::Assistant(_) => "exchanged_token",
        }
    }
}

/// Which call of the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    /// Messages vendor only.
    CountTokens,
    Models,
}

/// Who started the turn (the assistant vendor's `X-Initiator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Initiator {
    /// A person typed the last message.
    #[default]
    User,
    /// The last message is a tool result or the assistant's own turn.
    Agent,
}

/// What a request adds to the provider's own headers.
#[derive(Debug, Clone, Default)]
pub struct CallExtras {
    /// The client's `anthropic-beta` values (pass-through to the messages vendor).
    pub anthropic_beta: Option<String>,
    /// The client's `anthropic-version`.
    pub anthropic_version: Option<String>,
    /// The conversation carries images (assistant vendor: `Copilot-Vision-Request`).
    pub vision: bool,
    pub initiator: Initiator,
    /// The answer is an event stream.
    pub stream: bool,
}

/// Which credential an attempt used, so a 401 renews exactly that one.
#[derive(Debug, Clone, Copy)]
enum Used {
    Static,
    OAuth(u64),
    Assistant(u64),
}

/// A configured direct provider.
#[derive(Debug)]
pub struct DirectProvider {
    pub id: ProviderId,
    /// API base (the assistant vendor's comes with its token).
    base: String,
    pub auth: Auth,
    pub models: ModelListCache,
    /// The user's account this provider stands for (full deployment);
    /// `None` for the environment's providers.
    pub account: Option<ProviderAccountId>,
    /// Where the account's rate-limit headers are noted (full deployment).
    pub limits: Option<Arc<RateLimits>>,
    /// Set when the base URL is a user's: calls go through the client whose
    /// connections pass the SSRF guard.
    pub user_base: Option<UserBase>,
}

/// The client and guard for a base URL a user gave.
#[derive(Debug, Clone)]
pub struct UserBase {
    pub client: HttpClient,
    pub guard: Arc<ConnectGuard>,
    /// The address the base URL names as its host, if it names one
    /// (found once, when the provider is built).
    pub literal: Option<std::net::IpAddr>,
}

impl DirectProvider {
    pub fn new(id: ProviderId, base: impl Into<String>, auth: Auth) -> Self {
        DirectProvider {
            id,
            base: base.into().trim_end_matches('/').to_owned(),
            auth,
            models: ModelListCache::default(),
            account: None,
            limits: None,
            user_base: None,
        }
    }

    /// The same provider as the user's account `id`.
    /// Call the base URL through `user_base` (it is a user's).
    pub fn user_given(self, mut user_base: UserBase) -> Self {
        user_base.literal = literal_host(&self.base);
        DirectProvider {
            user_base: Some(user_base),
            ..self
        }
    }

    pub fn for_account(self, id: ProviderAccountId, limits: Arc<RateLimits>) -> Self {
        DirectProvider {
            account: Some(id),
            limits: Some(limits),
            ..self
        }
    }

    pub fn format(&self) -> WireFormat {
        self.id.native_format()
    }

    /// The API base (empty for the assistant vendor, whose base comes with
    /// each token).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The URL of `endpoint` under `base`.
    pub fn url(&self, base: &str, endpoint: Endpoint) -> String {
        let path = match (self.format(), endpoint) {
            (WireFormat::Anthropic, Endpoint::Chat) => "/v1/messages",
            (WireFormat::Anthropic, Endpoint::CountTokens) => "/v1/messages/count_tokens",
            (WireFormat::Anthropic, Endpoint::Models) => "/v1/models",
            (_, Endpoint::Models) => "/models",
            (_, Endpoint::Chat | Endpoint::CountTokens) => "/chat/completions",
        };
        format!("{base}{path}")
    }

    /// Send one call under `policy`. `query` is appended to the URL as given
    /// (`?limit=...`). A 401 renews the credential and retries once.
    pub async fn send(
        &self,
        http: &HttpClient,
        policy: &RetryPolicy,
        endpoint: Endpoint,
        query: &str,
        body: Option<Bytes>,
        extras: &CallExtras,
    ) -> Result<Response, UpstreamError> {
        let http = match &self.user_base {
            Some(user) => {
                user.guard
                    .check_literal(user.literal)
                    .map_err(|e| GatewayError::Forbidden(format!("{}: {e}", self.id)))?;
                &user.client
            }
            None => http,
        };
        let mut renewed = false;
        loop {
            let used: Mutex<Used> = Mutex::new(Used::Static);
            let result = send_with_retry(
                self.id.as_str(),
                policy,
                http,
                |_| {
                    let body = body.clone();
                    let used = &used;
                    async move {
                        let (base, headers, credential) = self.prepare(extras).await?;
                        *used.lock().unwrap_or_else(|p| p.into_inner()) = credential;
                        let url = Uri::try_from(format!("{}{query}", self.url(&base, endpoint)))
                            .map_err(GatewayError::internal)?;
                        Ok(match &body {
                            Some(b) => Outgoing::post(url, headers, b.clone()),
                            None => Outgoing::get(url, headers),
                        })
                    }
                },
                || async {
                    Err(GatewayError::upstream(
                        StatusCode::FORBIDDEN,
                        format!("a 403 from {} is final", self.id),
                    ))
                },
            )
            .await;
            let credential = *used.lock().unwrap_or_else(|p| p.into_inner());
            match result {
                Err(UpstreamError::Status { status, .. })
                    if status == StatusCode::UNAUTHORIZED && !renewed =>
                {
                    if !self.renew(credential).await? {
                        return result;
                    }
                    tracing::info!(provider = %self.id, "credential rejected (401); renewed, retrying once");
                    renewed = true;
                }
                other => {
                    if let (Ok(resp), Some(id), Some(limits)) = (&other, self.account, &self.limits)
                    {
                        limits.observe(id, resp.headers());
                    }
                    return other;
                }
            }
        }
    }

    /// Renew the credential an attempt used; `false` when it cannot be renewed.
    async fn renew(&self, used: Used) -> Result<bool, UpstreamError> {
        match (&self.auth, used) {
            (Auth::OAuth(session), Used::OAuth(generation)) if session.can_refresh() => {
                session.rejected(generation).await?;
                Ok(true)
            }
            (Auth::Assistant(session), Used::Assistant(generation)) => {
                session.rejected(generation).await;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Base URL, headers and the credential used for one attempt.
    async fn prepare(
        &self,
        extras: &CallExtras,
    ) -> Result<(String, HeaderMap, Used), GatewayError> {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static(if extras.stream {
                "text/event-stream"
            } else {
                "application/json"
            }),
        );
        let mut base = self.base.clone();
        let used = match &self.auth {
            Auth::ApiKey(key) => {
                h.insert("x-api-key", secret_header(key)?);
                anthropic_headers(&mut h, extras, false);
                Used::Static
            }
            Auth::OAuth(session) => {
                let bearer = session.bearer().await?;
                h.insert(AUTHORIZATION, bearer_header(&bearer.token)?);
                anthropic_headers(&mut h, extras, true);
                Used::OAuth(bearer.generation)
            }
            Auth::Bearer(key) => {
                if let Some(key) = key.as_ref().filter(|k| !k.is_empty()) {
                    h.insert(AUTHORIZATION, bearer_header(key)?);
                }
                Used::Static
            }
            Auth::Assistant(session) => {
                let token = session.token().await?;
                h.insert(AUTHORIZATION, bearer_header(&token.token)?);
                assistant_headers(&mut h, extras);
                base = token.api_base;
                Used::Assistant(token.generation)
            }
        };
        Ok((base, h, used))
    }
}

/// The provider's request body for a canonical request (cross-format relay).
pub fn provider_body(
    provider: &DirectProvider,
    req: &translate::ChatRequest,
) -> Result<Bytes, GatewayError> {
    let bytes = match provider.format() {
        WireFormat::Anthropic => serde_json::to_vec(&translate::anthropic::from_chat_request(req)),
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
            let mut body = translate::openai::from_chat_request(req);
            // OpenAI itself wants `max_completion_tokens`; compatible servers
            // and the assistant vendor know `max_tokens`.
            if provider.id != ProviderId::CompletionsVendor {
                if let Some(n) = body.max_completion_tokens.take() {
                    body.max_tokens = Some(n);
                }
            }
            serde_json::to_vec(&body)
        }
    };
    bytes.map(Bytes::from).map_err(GatewayError::internal)
}

fn bearer_header(token: &Secret) -> Result<HeaderValue, GatewayError> {
    let mut v = HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
        GatewayError::Config("a provider token holds characters a header cannot".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

fn secret_header(key: &Secret) -> Result<HeaderValue, GatewayError> {
    let mut v = HeaderValue::from_str(key.expose()).map_err(|_| {
        GatewayError::Config("a provider key holds characters a header cannot".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// `anthropic-version` (the client's, else the default) and `anthropic-beta`:
/// the client's values, plus the OAuth flag for OAuth traffic.
fn anthropic_headers(h: &mut HeaderMap, extras: &CallExtras, oauth: bool) {
    let version = extras
        .anthropic_version
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
        .unwrap_or_else(|| HeaderValue::from_static(ANTHROPIC_VERSION));
    h.insert("anthropic-version", version);
    let beta = merge_betas(
        extras.anthropic_beta.as_deref(),
        oauth.then_some(OAUTH_BETA),
    );
    if let Some(v) = beta.and_then(|b| HeaderValue::from_str(&b).ok()) {
        h.insert("anthropic-beta", v);
    }
}

/// The comma-separated union of the client's betas and `required`, each once,
/// in the client's order with `required` last.
pub fn merge_betas(client: Option<&str>, required: Option<&str>) -> Option<String> {
    let mut values: Vec<&str> = Vec::new();
    for v in client
        .into_iter()
        .flat_map(|c| c.split(','))
        .chain(required)
        .map(str::trim)
    {
        if !v.is_empty() && !values.contains(&v) {
            values.push(v);
        }
    }
    (!values.is_empty()).then(|| values.join(","))
}

fn assistant_headers(h: &mut HeaderMap, extras: &CallExtras) {
    let fixed: [(&str, &'static str); 6] = [
        ("copilot-integration-id", assistant_token::INTEGRATION_ID),
        ("editor-version", assistant_token::EDITOR_VERSION),
        (
            "editor-plugin-version",
            assistant_token::EDITOR_PLUGIN_VERSION,
        ),
        ("user-agent", assistant_token::USER_AGENT),
        ("openai-intent", "conversation-panel"),
        ("x-github-api-version", assistant_token::GITHUB_API_VERSION),
    ];
    for (name, value) in fixed {
        h.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    if let Ok(id) = HeaderValue::from_str(crate::ids::fast_uuid_text(&mut [0; 36])) {
        h.insert("x-request-id", id);
    }
    if extras.vision {
        h.insert("copilot-vision-request", HeaderValue::from_static("true"));
    }
    h.insert(
        "x-initiator",
        HeaderValue::from_static(match extras.initiator {
            Initiator::User => "user",
            Initiator::Agent => "agent",
        }),
    );
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
