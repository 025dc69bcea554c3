//! The SSO OIDC client of the primary provider (protocol doc 2): client
//! registration, device authorization, and the token endpoint with the
//! device-code and refresh-token grants. Bodies are camelCase JSON; errors are
//! read from the body (`{"error": "...", "error_description": "..."}`, or the
//! AWS `__type` / `x-amzn-errortype` exception names).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::config::Secret;

/// Scopes the primary API needs.
pub const SCOPES: [&str; 3] = [
    "codewhisperer:completions",
    "codewhisperer:analysis",
    "codewhisperer:conversations",
];

const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A registered OIDC client (reusable until `client_secret_expires_at`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    pub client_id: String,
    pub client_secret: Secret,
    #[serde(default)]
    pub client_secret_expires_at: Option<i64>,
}

/// The answer of `StartDeviceAuthorization`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceAuthorization {
    pub device_code: Secret,
    pub user_code: String,
    pub verification_uri: String,
    #[serde(default)]
    pub verification_uri_complete: Option<String>,
    /// Lifetime of the codes, seconds.
    pub expires_in: u64,
    /// Minimum seconds between polls.
    #[serde(default)]
    pub interval: Option<u64>,
}

impl DeviceAuthorization {
    /// The URL to show: the complete one (code embedded) when given.
    pub fn url(&self) -> &str {
        self.verification_uri_complete
            .as_deref()
            .unwrap_or(&self.verification_uri)
    }
}

/// A token endpoint success.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenGrant {
    pub access_token: Secret,
    /// Present on the device grant and when the refresh token rotates.
    #[serde(default)]
    pub refresh_token: Option<Secret>,
    /// Seconds; 3600 when absent.
    #[serde(default)]
    pub expires_in: Option<u64>,
}

/// OAuth error codes of the token endpoint (RFC 6749 / 8628 and AWS names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OAuthCode {
    AuthorizationPending,
    SlowDown,
    ExpiredToken,
    AccessDenied,
    InvalidGrant,
    InvalidClient,
    InvalidRequest,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    Other(String),
}

impl OAuthCode {
    /// From `authorization_pending` or `AuthorizationPendingException` (with or
    /// without an AWS namespace prefix or `:detail` suffix).
    pub fn parse(raw: &str) -> OAuthCode {
        let name = raw.rsplit('#').next().unwrap_or(raw);
        let name = name.split(':').next().unwrap_or(name).trim();
        match name {
            "authorization_pending" | "AuthorizationPendingException" => {
                OAuthCode::AuthorizationPending
            }
            "slow_down" | "SlowDownException" => OAuthCode::SlowDown,
            "expired_token" | "ExpiredTokenException" => OAuthCode::ExpiredToken,
            "access_denied" | "AccessDeniedException" => OAuthCode::AccessDenied,
            "invalid_grant" | "InvalidGrantException" => OAuthCode::InvalidGrant,
            "invalid_client" | "InvalidClientException" => OAuthCode::InvalidClient,
            "invalid_request" | "InvalidRequestException" => OAuthCode::InvalidRequest,
            "unauthorized_client" | "UnauthorizedClientException" => OAuthCode::UnauthorizedClient,
            "unsupported_grant_type" | "UnsupportedGrantTypeException" => {
                OAuthCode::UnsupportedGrantType
            }
            "invalid_scope" | "InvalidScopeException" => OAuthCode::InvalidScope,
            other => OAuthCode::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            OAuthCode::AuthorizationPending => "authorization_pending",
            OAuthCode::SlowDown => "slow_down",
            OAuthCode::ExpiredToken => "expired_token",
            OAuthCode::AccessDenied => "access_denied",
            OAuthCode::InvalidGrant => "invalid_grant",
            OAuthCode::InvalidClient => "invalid_client",
            OAuthCode::InvalidRequest => "invalid_request",
            OAuthCode::UnauthorizedClient => "unauthorized_client",
            OAuthCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthCode::InvalidScope => "invalid_scope",
            OAuthCode::Other(s) => s,
        }
    }
}

/// A failed OIDC call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OidcError {
    /// The service answered with an OAuth error code.
    #[error("SSO OIDC error {}{}", .code.as_str(), .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    OAuth {
        status: u16,
        code: OAuthCode,
        description: Option<String>,
    },
    /// An error status without an OAuth code.
    #[error("SSO OIDC answered {status}: {message}")]
    Http { status: u16, message: String },
    /// The service could not be reached.
    #[error("SSO OIDC unreachable: {0}")]
    Transport(String),
    /// A success body that does not have the expected shape.
    #[error("SSO OIDC answer not understood: {0}")]
    Decode(String),
}

impl OidcError {
    /// Whether the service refused the credentials themselves (as opposed to
    /// being unreachable or failing): such credentials will not work on retry.
    pub fn is_rejection(&self) -> bool {
        match self {
            OidcError::OAuth { code, .. } => {
                !matches!(code, OAuthCode::AuthorizationPending | OAuthCode::SlowDown)
            }
            OidcError::Http { status, .. } => (400..500).contains(status) && *status != 429,
            OidcError::Transport(_) | OidcError::Decode(_) => false,
        }
    }
}

/// Client of one SSO OIDC endpoint.
#[derive(Debug, Clone)]
pub struct OidcClient {
    http: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl OidcClient {
    /// `base` is the OIDC endpoint without trailing `/` (`https://oidc.us-east-1.amazonaws.com`).
    pub fn new(http: reqwest::Client, base: impl Into<String>, timeout: Duration) -> Self {
        OidcClient {
            http,
            base: base.into().trim_end_matches('/').to_owned(),
            timeout,
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// `POST /client/register`. `issuer_url` is sent for organization logins.
    pub async fn register(
        &self,
        client_name: &str,
        issuer_url: Option<&str>,
    ) -> Result<Registration, OidcError> {
        let mut body = json!({
            "clientName": client_name,
            "clientType": "public",
            "scopes": SCOPES,
            "grantTypes": [DEVICE_CODE_GRANT, "refresh_token"],
        });
        if let (Some(url), Some(obj)) = (issuer_url, body.as_object_mut()) {
            obj.insert("issuerUrl".into(), url.into());
        }
        self.post("/client/register", &body).await
    }

    /// `POST /device_authorization`.
    pub async fn start_device_authorization(
        &self,
        registration: &Registration,
        start_url: &str,
    ) -> Result<DeviceAuthorization, OidcError> {
        let body = json!({
            "clientId": registration.client_id,
            "clientSecret": registration.client_secret.expose(),
            "startUrl": start_url,
        });
        self.post("/device_authorization", &body).await
    }

    /// `POST /token` with the device-code grant (one poll).
    pub async fn poll_device_token(
        &self,
        registration: &Registration,
        device_code: &Secret,
    ) -> Result<TokenGrant, OidcError> {
        let body = json!({
            "grantType": DEVICE_CODE_GRANT,
            "clientId": registration.client_id,
            "clientSecret": registration.client_secret.expose(),
            "deviceCode": device_code.expose(),
        });
        self.post("/token", &body).await
    }

    /// `POST /token` with the refresh-token grant.
    pub async fn refresh(
        &self,
        client_id: &str,
        client_secret: &Secret,
        refresh_token: &Secret,
    ) -> Result<TokenGrant, OidcError> {
        let body = json!({
            "grantType": "refresh_token",
            "clientId": client_id,
            "clientSecret": client_secret.expose(),
            "refreshToken": refresh_token.expose(),
        });
        self.post("/token", &body).await
    }

    async fn post<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, OidcError> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .timeout(self.timeout)
            .json(body)
            .send()
            .await
            .map_err(|e| OidcError::Transport(describe(&e)))?;
        let status = resp.status();
        let error_type = resp
            .headers()
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| OidcError::Transport(describe(&e)))?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| OidcError::Decode(e.to_string()));
        }
        Err(parse_error(status.as_u16(), error_type.as_deref(), &bytes))
    }
}

fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// An error answer: the OAuth `error` field, else AWS `__type`, else the
/// `x-amzn-errortype` header; else a plain HTTP error with the body's message.
fn parse_error(status: u16, error_type: Option<&str>, body: &[u8]) -> OidcError {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let field = |key: &str| {
        json.as_ref()
            .and_then(|j| j.get(key))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let description = field("error_description")
        .or_else(|| field("message"))
        .or_else(|| field("Message"));
    let code = field("error")
        .or_else(|| field("__type"))
        .or_else(|| error_type.map(str::to_owned));
    match code {
        Some(code) => OidcError::OAuth {
            status,
            code: OAuthCode::parse(&code),
            description,
        },
        None => OidcError::Http {
            status,
            message: description.unwrap_or_else(|| {
                String::from_utf8_lossy(body)
                    .trim()
                    .chars()
                    .take(300)
                    .collect()
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_in_both_spellings() {
        assert_eq!(
            OAuthCode::parse("authorization_pending"),
            OAuthCode::AuthorizationPending
        );
        assert_eq!(OAuthCode::parse("SlowDownException"), OAuthCode::SlowDown);
        assert_eq!(
            OAuthCode::parse("com.amazonaws.ssooidc#ExpiredTokenException"),
            OAuthCode::ExpiredToken
        );
        assert_eq!(
            OAuthCode::parse("InvalidGrantException:http://internal"),
            OAuthCode::InvalidGrant
        );
        assert_eq!(OAuthCode::parse("weird"), OAuthCode::Other("weird".into()));
    }

    #[test]
    fn error_bodies_are_read() {
        let e = parse_error(
            400,
            None,
            br#"{"error":"authorization_pending","error_description":"waiting"}"#,
        );
        assert_eq!(
            e,
            OidcError::OAuth {
                status: 400,
                code: OAuthCode::AuthorizationPending,
                description: Some("waiting".into())
            }
        );
        assert!(!e.is_rejection());
        let e = parse_error(
            400,
            None,
            br#"{"__type":"InvalidGrantException","message":"dead"}"#,
        );
        assert!(matches!(
            e,
            OidcError::OAuth {
                code: OAuthCode::InvalidGrant,
                ..
            }
        ));
        assert!(e.is_rejection());
        let e = parse_error(400, Some("InvalidClientException"), b"");
        assert!(matches!(
            e,
            OidcError::OAuth {
                code: OAuthCode::InvalidClient,
                ..
            }
        ));
        let e = parse_error(503, None, b"down for maintenance");
        assert_eq!(
            e,
            OidcError::Http {
                status: 503,
                message: "down for maintenance".into()
            }
        );
        assert!(!e.is_rejection());
        assert!(!OidcError::Transport("x".into()).is_rejection());
    }

    #[test]
    fn success_bodies_are_camel_case() {
        let reg: Registration = serde_json::from_str(
            r#"{"clientId":"c","clientSecret":"s","clientIdIssuedAt":1,"clientSecretExpiresAt":2}"#,
        )
        .unwrap();
        assert_eq!(reg.client_id, "c");
        assert_eq!(reg.client_secret_expires_at, Some(2));
        let dev: DeviceAuthorization = serde_json::from_str(
            r#"{"deviceCode":"d","userCode":"ABCD-EFGH","verificationUri":"https://v","verificationUriComplete":"https://v?user_code=ABCD-EFGH","expiresIn":600,"interval":5}"#,
        )
        .unwrap();
        assert_eq!(dev.url(), "https://v?user_code=ABCD-EFGH");
        let tok: TokenGrant =
            serde_json::from_str(r#"{"accessToken":"a","expiresIn":3600,"tokenType":"Bearer"}"#)
                .unwrap();
        assert_eq!(tok.access_token.expose(), "a");
        assert_eq!(tok.refresh_token, None);
    }

    #[test]
    fn error_display_never_holds_secrets() {
        let e = OidcError::OAuth {
            status: 400,
            code: OAuthCode::InvalidGrant,
            description: Some("Invalid refresh token provided".into()),
        };
        assert_eq!(
            e.to_string(),
            "SSO OIDC error invalid_grant: Invalid refresh token provided"
        );
    }
}
