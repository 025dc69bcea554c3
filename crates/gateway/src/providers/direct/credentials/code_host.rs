//! Signing a user in to `assistant_vendor` through its code host (protocol
//! doc 7.1, 7.2; interfaces-full.md 2.2): the device flow with the public
//! client of the vendor's editor integration, the web flow with the
//! gateway's own OAuth app, and the identity (`login`) of a token. The
//! code-host token these give is what [`super::assistant_token`] exchanges.

use std::time::Duration;

use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::assistant_token::USER_AGENT;
use crate::config::Secret;
use crate::error::GatewayError;

/// The public client of the vendor's editor integration (no secret).
pub const PUBLIC_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The one scope asked for.
pub const SCOPE: &str = "read:user";
/// The public code host, whose API lives on another host.
const PUBLIC_CODE_HOST: &str = "https://github.com";
const PUBLIC_API: &str = "https://api.github.com";

/// Where the code host answers.
#[derive(Debug, Clone)]
pub struct CodeHost {
    pub http: reqwest::Client,
    /// `ASSISTANT_VENDOR_CODE_HOST_URL`, without a trailing `/`.
    pub base: String,
    pub timeout: Duration,
}

/// A device code to show the user.
#[derive(Debug, Clone, Deserialize)]
pub struct DeviceCode {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    #[serde(default = "default_expires_in")]
    pub expires_in: u64,
    #[serde(default = "default_interval")]
    pub interval: u64,
}

fn default_expires_in() -> u64 {
    900
}

fn default_interval() -> u64 {
    5
}

/// Where a device flow stands.
#[derive(Debug, Clone)]
pub enum DevicePoll {
    Pending,
    /// Polled too often: wait longer.
    SlowDown,
    Expired,
    Denied,
    Approved(Secret),
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

impl CodeHost {
    /// The authorize page of the web flow.
    pub fn authorize_url(&self, client_id: &str, redirect_uri: &str, state: &str) -> String {
        let page = format!("{}/login/oauth/authorize", self.base);
        match url::Url::parse(&page) {
            Ok(mut url) => {
                url.query_pairs_mut()
                    .append_pair("client_id", client_id)
                    .append_pair("redirect_uri", redirect_uri)
                    .append_pair("scope", SCOPE)
                    .append_pair("state", state);
                url.into()
            }
            Err(_) => page,
        }
    }

    /// The identity endpoint: the public host's API lives on `api.`; an
    /// overridden code host (a simulator, an enterprise server behind a
    /// proxy) answers below its own base.
    fn user_url(&self) -> String {
        if self.base == PUBLIC_CODE_HOST {
            format!("{PUBLIC_API}/user")
        } else {
            format!("{}/user", self.base)
        }
    }

    /// Start a device flow.
    pub async fn device_code(&self) -> Result<DeviceCode, GatewayError> {
        let body = json!({"client_id": PUBLIC_CLIENT_ID, "scope": SCOPE});
        self.post_json("/login/device/code", &body).await
    }

    /// Ask once whether the user approved `device_code`.
    pub async fn poll_device(&self, device_code: &str) -> Result<DevicePoll, GatewayError> {
        let body = json!({
            "client_id": PUBLIC_CLIENT_ID,
            "device_code": device_code,
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
        });
        // The answer is read whatever the status: pending states come as `error`.
        let answer: TokenAnswer = self.post_json("/login/oauth/access_token", &body).await?;
        Ok(match (answer.access_token, answer.error.as_deref()) {
            (Some(token), _) if !token.is_empty() => DevicePoll::Approved(Secret::new(token)),
            (_, Some("authorization_pending")) => DevicePoll::Pending,
            (_, Some("slow_down")) => DevicePoll::SlowDown,
            (_, Some("expired_token")) => DevicePoll::Expired,
            (_, Some("access_denied")) => DevicePoll::Denied,
            (_, other) => {
                return Err(GatewayError::upstream(
                    StatusCode::BAD_GATEWAY,
                    format!(
                        "the code host refused the device flow: {}",
                        answer
                            .error_description
                            .or(other.map(str::to_owned))
                            .unwrap_or_else(|| "no token and no error".into())
                    ),
                ))
            }
        })
    }

    /// Exchange a web-flow code with the gateway's OAuth app.
    pub async fn exchange_code(
        &self,
        client_id: &str,
        client_secret: &Secret,
        code: &str,
        redirect_uri: &str,
    ) -> Result<Secret, GatewayError> {
        let body = json!({
            "client_id": client_id,
            "client_secret": client_secret.expose(),
            "code": code,
            "redirect_uri": redirect_uri,
        });
        let answer: TokenAnswer = self.post_json("/login/oauth/access_token", &body).await?;
        match answer.access_token.filter(|t| !t.is_empty()) {
            Some(token) => Ok(Secret::new(token)),
            None => Err(GatewayError::Validation(format!(
                "the code host refused the sign-in: {}",
                answer
                    .error_description
                    .or(answer.error)
                    .unwrap_or_else(|| "no token".into())
            ))),
        }
    }

    /// The `login` of the user `token` belongs to.
    pub async fn login(&self, token: &Secret) -> Result<String, GatewayError> {
        let resp = self
            .http
            .get(self.user_url())
            .header(
                reqwest::header::AUTHORIZATION,
                format!("token {}", token.expose()),
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let body: Value = resp.json().await.map_err(unreachable)?;
        match body.get("login").and_then(Value::as_str) {
            Some(login) if status.is_success() => Ok(login.to_owned()),
            _ => Err(GatewayError::Validation(format!(
                "the code host did not accept the token ({status}): {}",
                body.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no login")
            ))),
        }
    }

    async fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, GatewayError> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .timeout(self.timeout)
            .json(body)
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(unreachable)?;
        serde_json::from_slice(&bytes).map_err(|_| {
            let (message, _) = crate::upstream::http::parse_error_body(status, &bytes);
            GatewayError::upstream(
                StatusCode::BAD_GATEWAY,
                format!("the code host answered {status}: {message}"),
            )
        })
    }
}

fn unreachable(e: reqwest::Error) -> GatewayError {
    GatewayError::upstream(
        StatusCode::BAD_GATEWAY,
        format!("the code host could not be reached: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(base: &str) -> CodeHost {
        CodeHost {
            http: reqwest::Client::new(),
            base: base.into(),
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_public_host_has_its_api_elsewhere() {
        assert_eq!(
            host("https://github.com").user_url(),
            "https://api.github.com/user"
        );
        assert_eq!(
            host("http://sim:1/assistant_vendor_code_host").user_url(),
            "http://sim:1/assistant_vendor_code_host/user"
        );
    }

    #[test]
    fn the_authorize_url_names_the_app_the_callback_and_the_state() {
        let url = host("https://ch.example").authorize_url("app", "https://gw/cb", "s1");
        let parsed = url::Url::parse(&url).unwrap();
        assert_eq!(parsed.path(), "/login/oauth/authorize");
        let q: std::collections::HashMap<_, _> = parsed.query_pairs().into_owned().collect();
        assert_eq!(q["client_id"], "app");
        assert_eq!(q["redirect_uri"], "https://gw/cb");
        assert_eq!(q["scope"], "read:user");
        assert_eq!(q["state"], "s1");
    }
}
