//! Configuration of the vendor simulators: the credentials each accepts, token
//! lifetimes, the messages vendor's OAuth behaviour, and the default scenario.
//! Everything has a default that suits tests; the credentials are also
//! exported as constants so a test can configure the gateway without a handle.

use std::collections::HashMap;
use std::time::Duration;

use super::scenario::VendorScenario;
use super::Vendor;

/// The messages vendor's API key (`x-api-key`).
pub const DEFAULT_MESSAGES_API_KEY: &str = "sk-ant-sim";
/// The completions vendor's API key (`Authorization: Bearer`).
pub const DEFAULT_COMPLETIONS_API_KEY: &str = "sk-openai-sim";
/// The custom endpoint's API key (`Authorization: Bearer`), when one is required.
pub const DEFAULT_CUSTOM_API_KEY: &str = "sk-custom-sim";
/// The code-host token the assistant vendor's token exchange accepts.
pub const DEFAULT_GITHUB_TOKEN: &str = "gho_sim";
/// The code host's public device-flow client (the VS Code assistant
/// integration's, upstream-protocols 7.1).
pub const CODE_HOST_DEVICE_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The id of the gateway's own OAuth app on the code host (web flow).
pub const CODE_HOST_OAUTH_CLIENT_ID: &str = "Ov23liUpstreamSimApp";
/// The secret of that OAuth app.
pub const CODE_HOST_OAUTH_CLIENT_SECRET: &str = "5b3e0c1f9a7d2e4b6c8a0f1e3d5b7a9c2e4f6a8b";
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
    /// More API keys the key vendors accept besides their default one above
    /// (users' own keys), per vendor: `Messages`, `Completions`, `Custom`
    /// (custom checks keys only when `custom_api_key` is set).
    pub more_api_keys: HashMap<Vendor, Vec<String>>,
    /// The code-host token the assistant token exchange accepts.
    pub github_token: String,
    /// Lifetime of each assistant token (`expires_at` = now + this).
    pub assistant_token_ttl: Duration,
    /// Answer the token exchange 404, as for an account without the assistant.
    pub deny_assistant_exchange: bool,
    /// The messages vendor's OAuth service.
    pub oauth: MessagesOAuthConfig,
    /// The assistant vendor's code host (device and web login flows).
    pub code_host: CodeHostConfig,
    /// Scenario used when a request names none; `None`: the built-in short answer.
    pub default_scenario: Option<VendorScenario>,
    /// Refuse models that are not in the vendor's list (404 in the vendor's
    /// shape). Off by default, so tests may use any model name.
    pub strict_models: bool,
}

impl VendorsConfig {
    /// Whether `vendor` accepts `key`: its default key or one of its more keys.
    pub fn accepts_api_key(&self, vendor: Vendor, key: &str) -> bool {
        let default = match vendor {
            Vendor::Messages => Some(&self.messages_api_key),
            Vendor::Completions => Some(&self.completions_api_key),
            Vendor::Custom => self.custom_api_key.as_ref(),
            Vendor::Assistant => None,
        };
        let more = self.more_api_keys.get(&vendor);
        default.is_some_and(|d| d == key) || more.is_some_and(|keys| keys.iter().any(|k| k == key))
    }
}

impl Default for VendorsConfig {
    fn default() -> Self {
        VendorsConfig {
            messages_api_key: DEFAULT_MESSAGES_API_KEY.to_owned(),
            completions_api_key: DEFAULT_COMPLETIONS_API_KEY.to_owned(),
            custom_api_key: Some(DEFAULT_CUSTOM_API_KEY.to_owned()),
            more_api_keys: HashMap::new(),
            github_token: DEFAULT_GITHUB_TOKEN.to_owned(),
            assistant_token_ttl: Duration::from_secs(1800),
            deny_assistant_exchange: false,
            oauth: MessagesOAuthConfig::default(),
            code_host: CodeHostConfig::default(),
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

/// Behaviour of the assistant vendor's code host: its login flows (device
/// and web) and the users they sign in.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeHostConfig {
    /// The public client of the device flow.
    pub device_client_id: String,
    /// The gateway's OAuth app (web flow; it may use the device flow too).
    pub oauth_client_id: String,
    pub oauth_client_secret: String,
    /// The app's registered callback: a web-flow `redirect_uri` must be it or
    /// below it (same scheme, host and port; a sub-path). `None` accepts any
    /// absolute URL (tests whose gateway port is not known in advance).
    pub oauth_callback_url: Option<String>,
    /// Device-code polls answered `authorization_pending` before the user
    /// approves. `None`: pending until approved or denied through the handle
    /// (or `GET /login/device?user_code=`).
    pub approve_after: Option<u32>,
    /// The user says no: the device flow ends with `access_denied`, the
    /// authorize page redirects with `error=access_denied`.
    pub deny: bool,
    /// `interval` of a device code, in seconds; a poll sooner than that after
    /// the previous one is answered `slow_down`.
    pub interval_secs: u64,
    /// Seconds added to a device code's interval by each `slow_down`.
    pub slow_down_increment_secs: u64,
    /// Lifetime of a device code (`expires_in`).
    pub device_code_ttl: Duration,
    /// Lifetime of a web-flow authorization code.
    pub code_ttl: Duration,
}

impl Default for CodeHostConfig {
    fn default() -> Self {
        CodeHostConfig {
            device_client_id: CODE_HOST_DEVICE_CLIENT_ID.to_owned(),
            oauth_client_id: CODE_HOST_OAUTH_CLIENT_ID.to_owned(),
            oauth_client_secret: CODE_HOST_OAUTH_CLIENT_SECRET.to_owned(),
            oauth_callback_url: None,
            approve_after: Some(1),
            deny: false,
            interval_secs: 1,
            slow_down_increment_secs: 5,
            device_code_ttl: Duration::from_secs(900),
            code_ttl: Duration::from_secs(600),
        }
    }
}
