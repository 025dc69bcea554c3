//! Signing a user in to `messages_vendor` (protocol doc 5.3; spec 5.10): the
//! authorize URL of an authorization-code flow with PKCE (S256) whose
//! redirect URI is the loopback port the relay script listens on, and the
//! exchange of the code the script relays. The exchange is a trait
//! ([`CodeExchange`]) so the flow's logic is tested without a vendor.

use std::future::Future;
use std::time::Duration;

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use super::oauth::CLIENT_ID;
use crate::config::Secret;
use crate::error::GatewayError;

/// The loopback redirect URI registered for the vendor's public client.
pub const REDIRECT_URI: &str = "http://localhost:54545/callback";
/// The port the relay script listens on.
pub const RELAY_PORT: u16 = 54545;
/// The scopes a subscription sign-in asks for.
pub const SCOPES: &str = "org:create_api_key user:profile user:inference";
/// The vendor's authorize page when `MESSAGES_VENDOR_OAUTH_BASE_URL` is unset.
pub const DEFAULT_AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
/// Path of the authorize page under `MESSAGES_VENDOR_OAUTH_BASE_URL`.
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// Lifetime assumed when the answer has no `expires_in`.
const DEFAULT_EXPIRES_IN: u64 = 3600;

/// The authorize URL for one sign-in.
pub fn authorize_url(oauth_base: Option<&str>, challenge: &str, state: &str) -> String {
    let page = oauth_base
        .map(|b| format!("{b}{AUTHORIZE_PATH}"))
        .unwrap_or_else(|| DEFAULT_AUTHORIZE_URL.to_owned());
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", REDIRECT_URI)
        .append_pair("scope", SCOPES)
        .append_pair("code_challenge", challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", state)
        .finish();
    // The base is validated at start-up as a URL without query or fragment.
    format!("{page}?{query}")
}

/// The code the vendor's page gave, without the `#state` it may carry.
pub fn bare_code(code: &str) -> &str {
    code.split('#').next().unwrap_or_default().trim()
}

/// What the token endpoint gave for a code.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub access_token: Secret,
    pub refresh_token: Option<Secret>,
    /// Seconds.
    pub expires_in: u64,
    /// The vendor account's e-mail, when it says it.
    pub email: Option<String>,
}

/// One code to exchange.
#[derive(Debug, Clone, Copy)]
pub struct CodeGrant<'a> {
    pub code: &'a str,
    pub state: &'a str,
    pub verifier: &'a Secret,
}

/// Exchanges an authorization code for tokens.
pub trait CodeExchange {
    fn exchange(
        &self,
        grant: CodeGrant<'_>,
    ) -> impl Future<Output = Result<SignedIn, GatewayError>> + Send;
}

/// The vendor's token endpoint over HTTP.
#[derive(Debug, Clone)]
pub struct HttpCodeExchange {
    pub http: reqwest::Client,
    pub token_url: String,
    pub timeout: Duration,
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    account: Option<AccountInfo>,
}

#[derive(Deserialize)]
struct AccountInfo {
    #[serde(default)]
    email_address: Option<String>,
}

impl CodeExchange for HttpCodeExchange {
    async fn exchange(&self, grant: CodeGrant<'_>) -> Result<SignedIn, GatewayError> {
        let body = json!({
            "grant_type": "authorization_code",
            "code": grant.code,
            "state": grant.state,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": grant.verifier.expose(),
            "client_id": CLIENT_ID,
        });
        let failed = |e: &dyn std::fmt::Display| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("messages_vendor sign-in: the token endpoint could not be reached: {e}"),
            )
        };
        let resp = self
            .http
            .post(&self.token_url)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(self.timeout)
            .json(&body)
            .send()
            .await
            .map_err(|e| failed(&e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| failed(&e))?;
        if !status.is_success() {
            let (message, _) = crate::upstream::http::parse_error_body(status, &bytes);
            return Err(GatewayError::Validation(format!(
                "messages_vendor refused the sign-in code: {message}"
            )));
        }
        let answer: Answer = serde_json::from_slice(&bytes).map_err(|e| {
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("messages_vendor sign-in answer is not understood: {e}"),
            )
        })?;
        Ok(SignedIn {
            access_token: Secret::new(answer.access_token),
            refresh_token: answer
                .refresh_token
                .filter(|r| !r.is_empty())
                .map(Secret::new),
            expires_in: answer.expires_in.unwrap_or(DEFAULT_EXPIRES_IN),
            email: answer.account.and_then(|a| a.email_address),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_carries_every_parameter() {
        let url = authorize_url(Some("https://auth.example/base"), "ch", "st");
        let parsed = url::Url::parse(&url).unwrap();
        assert_eq!(parsed.path(), "/base/oauth/authorize");
        let q: std::collections::HashMap<_, _> = parsed.query_pairs().into_owned().collect();
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], CLIENT_ID);
        assert_eq!(q["redirect_uri"], "http://localhost:54545/callback");
        assert_eq!(q["scope"], SCOPES);
        assert_eq!(q["code_challenge"], "ch");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["state"], "st");
        assert!(authorize_url(None, "c", "s").starts_with(DEFAULT_AUTHORIZE_URL));
    }

    #[test]
    fn a_code_loses_its_state_suffix() {
        assert_eq!(bare_code("abc#state"), "abc");
        assert_eq!(bare_code(" abc "), "abc");
        assert_eq!(bare_code("#x"), "");
    }
}
