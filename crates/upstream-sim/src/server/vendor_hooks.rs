//! The [`SimHandle`] methods of the vendor simulators: their URLs, the
//! credentials they accept, their scenarios and streams, the messages
//! vendor's OAuth and the assistant vendor's tokens.

use std::time::{Duration, Instant};

use super::SimHandle;
use crate::assistant_vendor::code_host::store::{CodeHostLogin, CodeHostUser};
use crate::assistant_vendor::tokens::AssistantToken;
use crate::messages_vendor::oauth::{OAuthAccount, OAuthTokens};
use crate::stats::StreamStats;
use crate::vendor_common::config::VendorsConfig;
use crate::vendor_common::scenario::VendorScenario;
use crate::vendor_common::Vendor;
use crate::{assistant_vendor, completions_vendor, messages_vendor};

impl SimHandle {
    // ---- vendor URLs ----

    /// `MESSAGES_VENDOR_BASE_URL`: `{base_url}/messages_vendor` (the gateway
    /// calls `/v1/messages`, `/v1/messages/count_tokens`, `/v1/models` below it).
    pub fn messages_vendor_url(&self) -> String {
        format!("{}{}", self.base_url(), messages_vendor::PREFIX)
    }

    /// `MESSAGES_VENDOR_OAUTH_BASE_URL`: `{base_url}/messages_vendor_oauth`
    /// (token endpoint `POST /v1/oauth/token` below it).
    pub fn messages_vendor_oauth_url(&self) -> String {
        format!(
            "{}{}",
            self.base_url(),
            messages_vendor::oauth::OAUTH_PREFIX
        )
    }

    /// `COMPLETIONS_VENDOR_BASE_URL`: `{base_url}/completions_vendor` (the
    /// gateway calls `/v1/chat/completions` and `/v1/models` below it).
    pub fn completions_vendor_url(&self) -> String {
        format!("{}{}", self.base_url(), completions_vendor::PREFIX)
    }

    /// `CUSTOM_BASE_URL`, the `/v1` root: `{base_url}/custom/v1` (the gateway
    /// calls `{custom_url}/chat/completions` and `{custom_url}/models`).
    pub fn custom_url(&self) -> String {
        format!("{}{}", self.base_url(), completions_vendor::CUSTOM_PREFIX)
    }

    /// `ASSISTANT_VENDOR_TOKEN_URL`, the full URL of the token exchange:
    /// `{base_url}/assistant_vendor_code_host/copilot_internal/v2/token`.
    pub fn assistant_vendor_token_url(&self) -> String {
        format!(
            "{}{}{}",
            self.base_url(),
            assistant_vendor::CODE_HOST_PREFIX,
            assistant_vendor::TOKEN_PATH
        )
    }

    /// `ASSISTANT_VENDOR_CODE_HOST_URL`: `{base_url}/assistant_vendor_code_host`.
    pub fn assistant_vendor_code_host_url(&self) -> String {
        format!("{}{}", self.base_url(), assistant_vendor::CODE_HOST_PREFIX)
    }

    /// The assistant chat API, the exchanged token's `endpoints.api`:
    /// `{base_url}/assistant_vendor_api`.
    pub fn assistant_vendor_api_url(&self) -> String {
        format!("{}{}", self.base_url(), assistant_vendor::API_PREFIX)
    }

    // ---- vendor credentials and settings ----

    /// The `x-api-key` the messages vendor accepts.
    pub fn messages_vendor_api_key(&self) -> String {
        self.services.vendors.settings().messages_api_key.clone()
    }

    /// The bearer key the completions vendor accepts.
    pub fn completions_vendor_api_key(&self) -> String {
        self.services.vendors.settings().completions_api_key.clone()
    }

    /// The bearer key the custom endpoint requires, if any.
    pub fn custom_api_key(&self) -> Option<String> {
        self.services.vendors.settings().custom_api_key.clone()
    }

    /// Make `vendor` accept one more API key (a user's own), besides its
    /// default one; false for [`Vendor::Assistant`], which takes no API key.
    /// The custom endpoint checks keys only while it has a default key.
    pub fn add_vendor_api_key(&self, vendor: Vendor, key: &str) -> bool {
        if vendor == Vendor::Assistant {
            return false;
        }
        let mut settings = self.services.vendors.settings();
        let keys = settings.more_api_keys.entry(vendor).or_default();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_owned());
        }
        true
    }

    /// A new API key in the vendor's shape (`sk-ant-api03-…`, `sk-proj-…`,
    /// `sk-custom-…`) that `vendor` accepts from now on; `None` for
    /// [`Vendor::Assistant`].
    pub fn new_vendor_api_key(&self, vendor: Vendor) -> Option<String> {
        let prefix = match vendor {
            Vendor::Messages => "sk-ant-api03-",
            Vendor::Completions => "sk-proj-",
            Vendor::Custom => "sk-custom-",
            Vendor::Assistant => return None,
        };
        let key = format!("{prefix}{}", crate::vendor_common::ids::base62(48));
        self.add_vendor_api_key(vendor, &key).then_some(key)
    }

    /// Stop accepting a key added with [`SimHandle::add_vendor_api_key`] (a
    /// revoked key); false when it was not one.
    pub fn remove_vendor_api_key(&self, vendor: Vendor, key: &str) -> bool {
        let mut settings = self.services.vendors.settings();
        let Some(keys) = settings.more_api_keys.get_mut(&vendor) else {
            return false;
        };
        let before = keys.len();
        keys.retain(|k| k != key);
        keys.len() != before
    }

    /// The code-host token the assistant token exchange accepts.
    pub fn assistant_vendor_github_token(&self) -> String {
        self.services.vendors.settings().github_token.clone()
    }

    /// Change the vendors' settings while running (keys, token lifetimes,
    /// OAuth behaviour, strict models; not `default_scenario`).
    pub fn update_vendors(&self, change: impl FnOnce(&mut VendorsConfig)) {
        change(&mut self.services.vendors.settings());
    }

    // ---- vendor scenarios and streams ----

    /// Queue a scenario for the next chat request to `vendor` (queued
    /// scenarios are used in order, one per request, before any directive).
    pub fn push_vendor_scenario(&self, vendor: Vendor, scenario: VendorScenario) {
        self.services.vendors.book().push(vendor, scenario);
    }

    /// Replace the scenario vendors use when a request names none.
    pub fn set_vendor_default_scenario(&self, scenario: Option<VendorScenario>) {
        self.services.vendors.book().set_default(scenario);
    }

    /// Counters of one vendor's streamed answers.
    pub fn vendor_stream_stats(&self, vendor: Vendor) -> StreamStats {
        self.services.vendors.streams(vendor).snapshot()
    }

    /// One vendor's streams whose body was dropped before its end.
    pub fn cancelled_vendor_streams(&self, vendor: Vendor) -> u64 {
        self.vendor_stream_stats(vendor).cancelled
    }

    // ---- messages vendor OAuth ----

    /// Fresh OAuth tokens the messages vendor accepts (access token with the
    /// configured lifetime, and a live refresh token), as after a login.
    pub fn seed_messages_vendor_oauth(&self) -> OAuthTokens {
        let ttl = self.services.vendors.settings().oauth.access_token_ttl;
        self.seed_messages_vendor_oauth_with_ttl(ttl)
    }

    /// Fresh OAuth tokens whose access token lives `ttl`.
    pub fn seed_messages_vendor_oauth_with_ttl(&self, ttl: Duration) -> OAuthTokens {
        self.services.messages.oauth().issue(ttl, Instant::now())
    }

    /// Register OAuth tokens chosen by the test (`expires_in` from now).
    pub fn seed_messages_vendor_oauth_with(&self, tokens: &OAuthTokens) {
        self.services.messages.oauth().seed(tokens, Instant::now());
    }

    /// Make every messages-vendor access token issued so far expire now.
    pub fn expire_messages_vendor_oauth_tokens(&self) {
        self.services.messages.oauth().expire_all(Instant::now());
    }

    /// Whether a messages-vendor refresh token is live (not rotated away).
    pub fn messages_vendor_refresh_token_live(&self, refresh_token: &str) -> bool {
        self.services.messages.oauth().refresh_live(refresh_token)
    }

    /// The authorize page: `{messages_vendor_oauth_url}/oauth/authorize`.
    /// It knows the client [`crate::MESSAGES_VENDOR_OAUTH_CLIENT_ID`] with the
    /// redirect URI [`crate::MESSAGES_VENDOR_OAUTH_REDIRECT_URI`]; make it
    /// deny with `update_vendors(|v| v.oauth.deny_authorization = true)`.
    pub fn messages_vendor_oauth_authorize_url(&self) -> String {
        format!(
            "{}{}",
            self.messages_vendor_oauth_url(),
            messages_vendor::oauth::AUTHORIZE_PATH
        )
    }

    /// The account an access or refresh token of the messages vendor belongs
    /// to (each authorization is its own account; seeded tokens share one).
    pub fn messages_vendor_oauth_account(&self, token: &str) -> Option<OAuthAccount> {
        self.services.messages.oauth().account_of(token)
    }

    /// Make every authorization code handed out so far expire now.
    pub fn expire_messages_vendor_oauth_codes(&self) {
        self.services.messages.oauth().expire_codes(Instant::now());
    }

    /// Successful code exchanges of the messages vendor so far.
    pub fn messages_vendor_oauth_exchanges(&self) -> u64 {
        self.services.messages.oauth().exchanges()
    }

    /// Successful refresh grants of the messages vendor so far.
    pub fn messages_vendor_oauth_refreshes(&self) -> u64 {
        self.services.messages.oauth().refreshes()
    }

    // ---- assistant vendor tokens ----

    /// An assistant token the chat API accepts, as if exchanged now (counts
    /// as an exchange).
    pub fn issue_assistant_vendor_token(&self) -> AssistantToken {
        let ttl = self.services.vendors.settings().assistant_token_ttl;
        self.services.assistant.tokens().issue(ttl, Instant::now())
    }

    /// Make every assistant token issued so far expire now: the next chat call
    /// gets the 401 that makes a client exchange again.
    pub fn expire_assistant_vendor_tokens(&self) {
        self.services.assistant.tokens().expire_all(Instant::now());
    }

    /// Successful token exchanges so far.
    pub fn assistant_vendor_exchanges(&self) -> u64 {
        self.services.assistant.tokens().exchanges()
    }

    // ---- the assistant vendor's code host ----

    /// Approve the pending code-host device login with this user code (as
    /// typed: any case, with or without the dash) or device code; false if
    /// none. The next poll gets a token of a new user.
    pub fn approve_code_host_device(&self, code: &str) -> bool {
        self.services.assistant.code_host().decide(code, true)
    }

    /// Deny the pending code-host device login with this code; the next poll
    /// gets `access_denied`. False if none.
    pub fn deny_code_host_device(&self, code: &str) -> bool {
        self.services.assistant.code_host().decide(code, false)
    }

    /// Make the code-host device login with this code expire now (the next
    /// poll gets `expired_token`). False if none.
    pub fn expire_code_host_device(&self, code: &str) -> bool {
        self.services
            .assistant
            .code_host()
            .expire_device(code, Instant::now())
    }

    /// A new code-host user signed in with `read:user`, as after a login:
    /// their `gho_` token works on `GET /user` and the token exchange.
    pub fn seed_code_host_login(&self) -> CodeHostLogin {
        self.services.assistant.code_host().seed_login("read:user")
    }

    /// The user a code-host token belongs to (the configured token's user is
    /// `sim-user`).
    pub fn code_host_user(&self, token: &str) -> Option<CodeHostUser> {
        if token == self.assistant_vendor_github_token() {
            return Some(self.services.assistant.code_host().default_user());
        }
        let user = self.services.assistant.code_host().user_of(token);
        user.map(|(user, _)| user)
    }

    /// The web flow's authorize page: `{code_host_url}/login/oauth/authorize`.
    pub fn code_host_authorize_url(&self) -> String {
        format!(
            "{}/login/oauth/authorize",
            self.assistant_vendor_code_host_url()
        )
    }

    /// The code-host login an assistant token (from the exchange) was
    /// exchanged for: proves from the chat API's records whose account a
    /// request used.
    pub fn assistant_vendor_token_login(&self, assistant_token: &str) -> Option<String> {
        let tokens = self.services.assistant.tokens();
        tokens.login_of(assistant_token).map(str::to_owned)
    }
}
