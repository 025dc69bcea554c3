//! OpenID Connect Discovery 1.0: the provider's metadata read from
//! `{issuer}/.well-known/openid-configuration`, checked (the document's
//! `issuer` must be exactly the configured issuer, section 4.3) and cached
//! per issuer for an hour, so a sign-in costs no discovery round trip.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use serde::Deserialize;

use super::SsoError;

/// The parts of the discovery document the sign-in uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ProviderMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    /// Absent means `client_secret_basic` (Discovery 3).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

impl ProviderMetadata {
    /// Parse and check a discovery document fetched for `issuer`.
    pub(crate) fn parse(issuer: &str, body: &[u8]) -> Result<Self, SsoError> {
        let meta: ProviderMetadata = serde_json::from_slice(body)
            .map_err(|e| SsoError::Unavailable(format!("discovery document of {issuer}: {e}")))?;
        if meta.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
            return Err(SsoError::Unavailable(format!(
                "discovery document of {issuer} names another issuer ({})",
                meta.issuer
            )));
        }
        for (name, value) in [
            ("authorization_endpoint", &meta.authorization_endpoint),
            ("token_endpoint", &meta.token_endpoint),
            ("jwks_uri", &meta.jwks_uri),
        ] {
            let ok = url::Url::parse(value)
                .map(|u| matches!(u.scheme(), "http" | "https"))
                .unwrap_or(false);
            if !ok {
                return Err(SsoError::Unavailable(format!(
                    "discovery document of {issuer}: {name} is not an http(s) URL"
                )));
            }
        }
        Ok(meta)
    }

    /// Whether to send the client secret in the form (`client_secret_post`)
    /// rather than HTTP Basic (`client_secret_basic`, the default).
    pub(crate) fn prefers_post(&self) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            None => false,
            Some(methods) => {
                !methods.iter().any(|m| m == "client_secret_basic")
                    && methods.iter().any(|m| m == "client_secret_post")
            }
        }
    }
}

/// Discovery documents by issuer.
#[derive(Clone)]
pub(crate) struct DiscoveryCache {
    cache: Cache<String, Arc<ProviderMetadata>>,
}

impl std::fmt::Debug for DiscoveryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoveryCache").finish_non_exhaustive()
    }
}

impl DiscoveryCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        DiscoveryCache {
            cache: Cache::builder().max_capacity(16).time_to_live(ttl).build(),
        }
    }

    /// The metadata of `issuer`, fetched when not cached (one fetch at a time
    /// per issuer; a failed fetch is not cached).
    pub(crate) async fn get(
        &self,
        http: &reqwest::Client,
        issuer: &str,
        timeout: Duration,
    ) -> Result<Arc<ProviderMetadata>, SsoError> {
        let issuer = issuer.trim_end_matches('/').to_owned();
        let fetch = {
            let issuer = issuer.clone();
            async move {
                let url = format!("{issuer}/.well-known/openid-configuration");
                let body = super::get_json_body(http, &url, timeout).await?;
                ProviderMetadata::parse(&issuer, &body).map(Arc::new)
            }
        };
        self.cache
            .try_get_with(issuer, fetch)
            .await
            .map_err(|e: Arc<SsoError>| (*e).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(issuer: &str) -> Vec<u8> {
        serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": "https://idp.example/auth",
            "token_endpoint": "https://idp.example/token",
            "jwks_uri": "https://idp.example/jwks",
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_document_for_the_issuer_is_accepted() {
        let meta =
            ProviderMetadata::parse("https://idp.example", &doc("https://idp.example")).unwrap();
        assert_eq!(meta.token_endpoint, "https://idp.example/token");
        assert!(!meta.prefers_post());
    }

    #[test]
    fn a_document_naming_another_issuer_is_refused() {
        let err = ProviderMetadata::parse("https://idp.example", &doc("https://evil.example"))
            .unwrap_err();
        assert!(matches!(err, SsoError::Unavailable(_)));
    }

    #[test]
    fn malformed_documents_are_refused() {
        assert!(ProviderMetadata::parse("https://idp.example", b"{}").is_err());
        let mut v: serde_json::Value = serde_json::from_slice(&doc("https://idp.example")).unwrap();
        v["jwks_uri"] = "javascript:alert(1)".into();
        assert!(ProviderMetadata::parse("https://idp.example", v.to_string().as_bytes()).is_err());
    }

    #[test]
    fn client_authentication_method() {
        let mut meta =
            ProviderMetadata::parse("https://idp.example", &doc("https://idp.example")).unwrap();
        meta.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        assert!(meta.prefers_post());
        meta.token_endpoint_auth_methods_supported = Some(vec![
            "client_secret_post".into(),
            "client_secret_basic".into(),
        ]);
        assert!(!meta.prefers_post());
    }
}
