//! Upstream base URLs (interfaces.md 2), the SSO start URL and region, and the
//! other providers' proxy-mode credentials (interfaces.md 3). Every URL is
//! validated (http or https) and kept without a trailing `/`, so callers
//! append paths as `format!("{base}/path")`.

use super::runtime::Region;
use super::value::FieldValue;
use super::{ConfigProblem, EnvSource, Secret};

/// The start URL of the individual (Builder ID) mode.
pub const INDIVIDUAL_START_URL: &str = "https://view.awsapps.com/start";

/// Device-flow mode, chosen by `UPSTREAM_SSO_URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SsoMode {
    /// Builder ID: [`INDIVIDUAL_START_URL`].
    Individual,
    /// IAM Identity Center: the organization's start URL (fragment and trailing `/` removed).
    Organization(String),
}

impl SsoMode {
    pub fn start_url(&self) -> &str {
        match self {
            SsoMode::Individual => INDIVIDUAL_START_URL,
            SsoMode::Organization(url) => url,
        }
    }

    /// `issuerUrl` for client registration: only organizations send one.
    pub fn issuer_url(&self) -> Option<&str> {
        match self {
            SsoMode::Individual => None,
            SsoMode::Organization(url) => Some(url),
        }
    }
}

/// Where each upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamEndpoints {
    /// Primary API base: `UPSTREAM_API_ENDPOINT` or `https://q.{UPSTREAM_REGION}.amazonaws.com`.
    pub api_endpoint: String,
    /// SSO OIDC base: `UPSTREAM_OIDC_ENDPOINT` or `https://oidc.{UPSTREAM_SSO_REGION}.amazonaws.com`.
    pub oidc_endpoint: String,
    pub sso_mode: SsoMode,
    /// `UPSTREAM_SSO_REGION`, defaulting to `UPSTREAM_REGION`.
    pub sso_region: Region,
    pub messages_vendor_base_url: String,
    /// `None`: the vendor's public OAuth endpoints (authorize and token live on different hosts).
    pub messages_vendor_oauth_base_url: Option<String>,
    pub completions_vendor_base_url: String,
    pub assistant_vendor_code_host_url: String,
    pub assistant_vendor_token_url: String,
    /// `None`: the guardrail service's regional endpoint of each profile.
    pub guardrail_endpoint: Option<String>,
}

impl UpstreamEndpoints {
    pub(super) fn from_env(
        src: &EnvSource,
        api_region: &Region,
        problems: &mut Vec<ConfigProblem>,
    ) -> Self {
        let sso_region = match src.get("UPSTREAM_SSO_REGION") {
            None => api_region.clone(),
            Some(raw) => Region::parse_value(raw).unwrap_or_else(|e| {
                problems.push(ConfigProblem::new("UPSTREAM_SSO_REGION", e));
                api_region.clone()
            }),
        };
        let sso_mode = match src.get("UPSTREAM_SSO_URL") {
            None => SsoMode::Individual,
            Some(raw) => match normalize_start_url(raw) {
                Ok(url) => SsoMode::Organization(url),
                Err(e) => {
                    problems.push(ConfigProblem::new("UPSTREAM_SSO_URL", e));
                    SsoMode::Individual
                }
            },
        };
        let mut url = |var: &str, default: String| -> String {
            match src.get(var) {
                None => default,
                Some(raw) => validate_base_url(raw).unwrap_or_else(|e| {
                    problems.push(ConfigProblem::new(var, e));
                    default
                }),
            }
        };
        let api_endpoint = url(
            "UPSTREAM_API_ENDPOINT",
            format!("https://q.{api_region}.amazonaws.com"),
        );
        let oidc_endpoint = url(
            "UPSTREAM_OIDC_ENDPOINT",
            format!("https://oidc.{sso_region}.amazonaws.com"),
        );
        let messages_vendor_base_url = url(
            "MESSAGES_VENDOR_BASE_URL",
            "https://api.anthropic.com".into(),
        );
        let completions_vendor_base_url = url(
            "COMPLETIONS_VENDOR_BASE_URL",
            "https://api.openai.com/v1".into(),
        );
        let assistant_vendor_code_host_url = url(
            "ASSISTANT_VENDOR_CODE_HOST_URL",
            "https://github.com".into(),
        );
        let assistant_vendor_token_url = url(
            "ASSISTANT_VENDOR_TOKEN_URL",
            "https://api.github.com/copilot_internal/v2/token".into(),
        );
        let mut optional = |var: &str| -> Option<String> {
            src.get(var).and_then(|raw| {
                validate_base_url(raw)
                    .map_err(|e| problems.push(ConfigProblem::new(var, e)))
                    .ok()
            })
        };
        let messages_vendor_oauth_base_url = optional("MESSAGES_VENDOR_OAUTH_BASE_URL");
        let guardrail_endpoint = optional("GUARDRAIL_ENDPOINT");
        UpstreamEndpoints {
            api_endpoint,
            oidc_endpoint,
            sso_mode,
            sso_region,
            messages_vendor_base_url,
            messages_vendor_oauth_base_url,
            completions_vendor_base_url,
            assistant_vendor_code_host_url,
            assistant_vendor_token_url,
            guardrail_endpoint,
        }
    }
}

/// Credentials of the other providers in proxy mode; a provider is enabled by
/// setting its credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderKeys {
    pub messages_vendor_api_key: Option<Secret>,
    pub messages_vendor_oauth_token: Option<Secret>,
    pub messages_vendor_refresh_token: Option<Secret>,
    pub completions_vendor_api_key: Option<Secret>,
    pub assistant_vendor_github_token: Option<Secret>,
    /// The gateway's own OAuth app on the code host (the assistant vendor's
    /// web sign-in in full deployment; interfaces-full.md 2.2).
    pub assistant_vendor_oauth_client_id: Option<String>,
    pub assistant_vendor_oauth_client_secret: Option<Secret>,
    /// The `/v1` root of the custom OpenAI-compatible endpoint.
    pub custom_base_url: Option<String>,
    pub custom_api_key: Option<Secret>,
}

impl ProviderKeys {
    pub(super) fn from_env(src: &EnvSource, problems: &mut Vec<ConfigProblem>) -> Self {
        let secret = |var: &str| src.get(var).map(Secret::new);
        let custom_base_url = src.get("CUSTOM_BASE_URL").and_then(|raw| {
            validate_base_url(raw)
                .map_err(|e| problems.push(ConfigProblem::new("CUSTOM_BASE_URL", e)))
                .ok()
        });
        let keys = ProviderKeys {
            messages_vendor_api_key: secret("MESSAGES_VENDOR_API_KEY"),
            messages_vendor_oauth_token: secret("MESSAGES_VENDOR_OAUTH_TOKEN"),
            messages_vendor_refresh_token: secret("MESSAGES_VENDOR_REFRESH_TOKEN"),
            completions_vendor_api_key: secret("COMPLETIONS_VENDOR_API_KEY"),
            assistant_vendor_github_token: secret("ASSISTANT_VENDOR_GITHUB_TOKEN"),
            assistant_vendor_oauth_client_id: src
                .get("ASSISTANT_VENDOR_OAUTH_CLIENT_ID")
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty()),
            assistant_vendor_oauth_client_secret: secret("ASSISTANT_VENDOR_OAUTH_CLIENT_SECRET"),
            custom_base_url,
            custom_api_key: secret("CUSTOM_API_KEY"),
        };
        if keys.assistant_vendor_oauth_client_id.is_some()
            != keys.assistant_vendor_oauth_client_secret.is_some()
        {
            problems.push(ConfigProblem::new(
                "ASSISTANT_VENDOR_OAUTH_CLIENT_SECRET",
                "ASSISTANT_VENDOR_OAUTH_CLIENT_ID and ASSISTANT_VENDOR_OAUTH_CLIENT_SECRET are set together",
            ));
        }
        if keys.custom_api_key.is_some() && keys.custom_base_url.is_none() {
            problems.push(ConfigProblem::new(
                "CUSTOM_BASE_URL",
                "is required when CUSTOM_API_KEY is set",
            ));
        }
        keys
    }
}

/// An absolute http(s) URL without query or fragment; returned without trailing `/`.
pub fn validate_base_url(raw: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(raw.trim())
        .map_err(|_| "expected an absolute http:// or https:// URL".to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err("expected an absolute http:// or https:// URL".into());
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("expected a base URL without query or fragment".into());
    }
    Ok(raw.trim().trim_end_matches('/').to_owned())
}

/// The organization start URL as the OIDC service expects it: `#fragment` and
/// trailing `/` removed (a copied portal URL often ends in `/#/`).
pub fn normalize_start_url(raw: &str) -> Result<String, String> {
    let without_fragment = raw.trim().split('#').next().unwrap_or_default();
    let trimmed = without_fragment.trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|_| {
        "expected the organization's start URL, e.g. https://d-1234567890.awsapps.com/start"
            .to_string()
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(
            "expected the organization's start URL, e.g. https://d-1234567890.awsapps.com/start"
                .into(),
        );
    }
    Ok(trimmed.to_owned())
}
