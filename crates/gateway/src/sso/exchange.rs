//! The token request (OpenID Connect Core 3.1.3.1, RFC 7636 4.5): the code,
//! the PKCE verifier and the redirect URI, authenticated with the client
//! secret (`client_secret_basic` unless the provider lists only
//! `client_secret_post`). The answer must carry an `id_token`.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::Deserialize;

use super::discovery::ProviderMetadata;
use super::settings::SsoSettings;
use super::SsoError;

/// What one exchange sends.
#[derive(Debug, Clone)]
pub(crate) struct CodeExchange<'a> {
    pub code: &'a str,
    pub code_verifier: &'a str,
    pub redirect_uri: &'a str,
}

#[derive(Deserialize)]
struct TokenAnswer {
    id_token: Option<String>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: Option<String>,
}

/// RFC 6749 2.3.1: each part form-urlencoded before Basic encoding.
fn basic_credentials(client_id: &str, secret: &str) -> String {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", enc(client_id), enc(secret)))
    )
}

/// Exchange the code; the raw ID token.
pub(crate) async fn exchange_code(
    http: &reqwest::Client,
    meta: &ProviderMetadata,
    settings: &SsoSettings,
    request: &CodeExchange<'_>,
    timeout: Duration,
) -> Result<String, SsoError> {
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", "authorization_code"),
        ("code", request.code),
        ("redirect_uri", request.redirect_uri),
        ("code_verifier", request.code_verifier),
    ];
    let mut builder = http
        .post(&meta.token_endpoint)
        .timeout(timeout)
        .header(reqwest::header::ACCEPT, "application/json");
    if meta.prefers_post() {
        form.push(("client_id", &settings.client_id));
        form.push(("client_secret", settings.client_secret.expose()));
    } else {
        form.push(("client_id", &settings.client_id));
        builder = builder.header(
            reqwest::header::AUTHORIZATION,
            basic_credentials(&settings.client_id, settings.client_secret.expose()),
        );
    }
    let response = builder
        .form(&form)
        .send()
        .await
        .map_err(|e| SsoError::Unavailable(format!("token endpoint: {e}")))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| SsoError::Unavailable(format!("token endpoint: {e}")))?;
    if status.is_client_error() {
        // invalid_grant, invalid_client, ...: the provider refused this exchange.
        let error = serde_json::from_slice::<ErrorAnswer>(&body)
            .ok()
            .and_then(|e| e.error)
            .unwrap_or_else(|| format!("HTTP {status}"));
        return Err(SsoError::ExchangeRefused(error));
    }
    if !status.is_success() {
        return Err(SsoError::Unavailable(format!(
            "token endpoint answered HTTP {status}"
        )));
    }
    let answer: TokenAnswer = serde_json::from_slice(&body)
        .map_err(|e| SsoError::Unavailable(format!("token endpoint answer: {e}")))?;
    answer
        .id_token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| SsoError::ExchangeRefused("the answer has no id_token".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        // "a:b" / "p w" -> "a%3Ab:p+w"
        assert_eq!(
            basic_credentials("a:b", "p w"),
            format!("Basic {}", STANDARD.encode("a%3Ab:p+w"))
        );
    }
}
