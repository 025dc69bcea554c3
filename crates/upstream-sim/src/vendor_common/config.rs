//! Configuration of the vendor simulators: the credentials each accepts, token
//! lifetimes, the messages vendor's OAuth behaviour, and the default scenario.
//! Everything has a default that suits tests; the credentials are also
//! exported as constants so a test can configure the gateway without a handle.

use std::time::Duration;

use super::scenario::VendorScenario;

/// The messages vendor's API key (`x-api-key`).
pub const DEFAULT_MESSAGES_API_KEY: &str = "sk-ant-sim";
/// The completions vendor's API key (`Authorization: Bearer`).
pub const DEFAULT_COMPLETIONS_API_KEY: &str = "sk-openai-sim";
/// The custom endpoint's API key (`Authorization: Bearer`), when one is required.
pub const DEFAULT_CUSTOM_API_KEY: &str = "sk-custom-sim";
/// The code-host token the assistant vendor's token exchange accepts.
pub const DEFAULT_GITHUB_TOKEN: &str = "gho_sim";
/// The public client the messages vendor's authorize page knows (Claude
/// Code's, upstream-protocols 5.3).
pub const MESSAGES_VENDOR_OAUTH_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
/// The loopback redirect URI registered for that client.
pub const MESSAGES_VENDOR_OAUTH_REDIRECT_URI: &str = "http://localhost:54545/callback";
/// The scopes the messages vendor's authorize page knows.
pub const MESSAGES_VENDOR_OAUTH_SCOPES: &[&str] = &[
    "org:create_api_key",
    "user:profile",
    "user:inference",
    "user:sessions:claude_code",
    "user:mcp_servers",
    "user:file_upload",
];

/// How the vendor simulators behave. Change it while running with
/// [`crate::SimHandle::update_vendors`] (except `default_scenario`, read at
/// start; use [`crate::SimHandle::set_vendor_default_scenario`]).
#[derive(Debug, Clone, PartialEq)]
pub struct VendorsConfig {
    /// The one `x-api-key` the messages vendor accepts.
    pub messages_api_key: String,
    /// The one bearer key the completions vendor accepts.
    pub completions_api_key: String,
    /// The bearer key the custom endpoint requires; `None` accepts requests
    /// with any key or none.
    pub custom_api_key: Option<String>,
    /// The code-host token the assistant token exchange accepts.
    pub github_token: String,
    /// Lifetime of each assistant token (`expires_at` = now + this).
    pub assistant_token_ttl: Duration,
    /// Answer the token exchange 404, as for an account without the assistant.
    pub deny_assistant_exchange: bool,
    /// The messages vendor's OAuth token endpoint.
    pub oauth: MessagesOAuthConfig,
    /// Scenario used when a request names none; `None`: the built-in short answer.
    pub default_scenario: Option<VendorScenario>,
    /// Refuse models that are not in the vendor's list (404 in the vendor's
    /// shape). Off by default, so tests may use any model name.
    pub strict_models: bool,
}

impl Default for VendorsConfig {
    fn default() -> Self {
        VendorsConfig {
            messages_api_key: DEFAULT_MESSAGES_API_KEY.to_owned(),
            completions_api_key: DEFAULT_COMPLETIONS_API_KEY.to_owned(),
            custom_api_key: Some(DEFAULT_CUSTOM_API_KEY.to_owned()),
            github_token: DEFAULT_GITHUB_TOKEN.to_owned(),
            assistant_token_ttl: Duration::from_secs(1800),
            deny_assistant_exchange: false,
            oauth: MessagesOAuthConfig::default(),
            default_scenario: None,
            strict_models: false,
        }
    }
}

/// Behaviour of the messages vendor's OAuth service (authorize page and
/// token endpoint).
#[derive(Debug, Clone, PartialEq)]
pub struct MessagesOAuthConfig {
    /// Lifetime of each access token (`expires_in`).
    pub access_token_ttl: Duration,
    /// Issue a new refresh token on each refresh and retire the old one.
    pub rotate_refresh_tokens: bool,
    /// Answer every refresh with `invalid_grant`.
    pub reject_refresh: bool,
    /// The `client_id` every token request must carry; `None` accepts any
    /// non-empty one (a code exchange must still name the code's client).
    pub client_id: Option<String>,
    /// The client the authorize page knows; authorizations for another are
    /// refused with a 400 page.
    pub authorize_client_id: String,
    /// The redirect URI registered for that client (exact match).
    pub redirect_uri: String,
    /// Scopes the authorize page knows; a request naming another is refused.
    pub scopes: Vec<String>,
    /// The user says no: authorizations redirect with `error=access_denied`.
    pub deny_authorization: bool,
    /// Lifetime of an authorization code.
    pub code_ttl: Duration,
}

impl Default for MessagesOAuthConfig {
    fn default() -> Self {
        MessagesOAuthConfig {
            access_token_ttl: Duration::from_secs(8 * 3600),
            rotate_refresh_tokens: true,
            reject_refresh: false,
            client_id: None,
            authorize_client_id: MESSAGES_VENDOR_OAUTH_CLIENT_ID.to_owned(),
            redirect_uri: MESSAGES_VENDOR_OAUTH_REDIRECT_URI.to_owned(),
            scopes: MESSAGES_VENDOR_OAUTH_SCOPES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            deny_authorization: false,
            code_ttl: Duration::from_secs(600),
        }
    }
}
