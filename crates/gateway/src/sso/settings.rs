//! The identity provider an admin configured (spec 5.3 item 3): issuer URL,
//! client id and client secret, stored through the configuration API under
//! [`ISSUER_URL`], [`CLIENT_ID`] and [`CLIENT_SECRET`] (the secret encrypted at
//! rest). SSO sign-in is enabled when all three are set.

use crate::config::Secret;

/// Configuration key of the issuer URL (discovery at `{issuer}/.well-known/openid-configuration`).
pub(crate) const ISSUER_URL: &str = "sso_issuer_url";
/// Configuration key of the OAuth client id registered with the provider.
pub(crate) const CLIENT_ID: &str = "sso_client_id";
/// Configuration key of the client secret (a secret: encrypted, never shown).
pub(crate) const CLIENT_SECRET: &str = "sso_client_secret";

/// One configuration key of the identity provider, for the configuration API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SsoKey {
    pub name: &'static str,
    pub secret: bool,
    pub description: &'static str,
}

/// The identity-provider keys, in display order.
pub(crate) const KEYS: &[SsoKey] = &[
    SsoKey {
        name: ISSUER_URL,
        secret: false,
        description: "Issuer URL of the OpenID Connect identity provider for web sign-in \
                      (e.g. https://accounts.google.com); its discovery document is read \
                      from {issuer}/.well-known/openid-configuration.",
    },
    SsoKey {
        name: CLIENT_ID,
        secret: false,
        description: "OAuth client id registered with the identity provider; the redirect URI \
                      to register is {public_url}/_ui/api/auth/google/callback.",
    },
    SsoKey {
        name: CLIENT_SECRET,
        secret: true,
        description: "OAuth client secret of that client (stored encrypted, never shown).",
    },
];

/// The row of `name`, if it is an identity-provider key.
pub(crate) fn key(name: &str) -> Option<&'static SsoKey> {
    KEYS.iter().find(|k| k.name == name)
}

/// A complete identity-provider configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SsoSettings {
    /// Without trailing `/`.
    pub issuer_url: String,
    pub client_id: String,
    pub client_secret: Secret,
}

impl SsoSettings {
    /// The settings when all three values are present and non-empty.
    pub(crate) fn from_values(
        issuer_url: Option<&str>,
        client_id: Option<&str>,
        client_secret: Option<&str>,
    ) -> Option<Self> {
        Some(SsoSettings {
            issuer_url: present(issuer_url)?.trim_end_matches('/').to_owned(),
            client_id: present(client_id)?.to_owned(),
            client_secret: Secret::new(present(client_secret)?),
        })
    }
}

/// Validate the value an admin gives for `name`; the normalized value to store.
/// The error says what was expected without echoing the value.
pub(crate) fn validate(name: &str, raw: &str) -> Result<String, String> {
    let value = raw.trim();
    match name {
        ISSUER_URL => {
            if value.is_empty() {
                return Ok(String::new());
            }
            let url = url::Url::parse(value)
                .map_err(|_| "expected an absolute https:// issuer URL".to_string())?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err("expected an absolute https:// issuer URL".into());
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err("expected an issuer URL without query or fragment".into());
            }
            if url.scheme() == "http" && !is_loopback(&url) {
                return Err(
                    "the issuer must use https (http is accepted for localhost only)".into(),
                );
            }
            Ok(value.trim_end_matches('/').to_owned())
        }
        CLIENT_ID | CLIENT_SECRET => {
            if value.len() > 1024 || value.chars().any(char::is_control) {
                return Err("expected at most 1024 printable characters".into());
            }
            Ok(value.to_owned())
        }
        _ => Err("unknown configuration field".into()),
    }
}

fn present(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|v| !v.is_empty())
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_values_enable_sso() {
        let s = SsoSettings::from_values(Some("https://idp.example/"), Some("c"), Some("s"));
        let s = s.unwrap();
        assert_eq!(s.issuer_url, "https://idp.example");
        assert_eq!(s.client_secret.expose(), "s");
        assert!(SsoSettings::from_values(Some("https://idp"), Some("c"), None).is_none());
        assert!(SsoSettings::from_values(Some("https://idp"), Some(" "), Some("s")).is_none());
    }

    #[test]
    fn issuer_urls() {
        assert_eq!(
            validate(ISSUER_URL, " https://accounts.google.com/ ").unwrap(),
            "https://accounts.google.com"
        );
        assert_eq!(
            validate(ISSUER_URL, "http://127.0.0.1:8080/idp").unwrap(),
            "http://127.0.0.1:8080/idp"
        );
        assert!(validate(ISSUER_URL, "http://localhost:9/x").is_ok());
        assert!(validate(ISSUER_URL, "http://idp.example.com").is_err());
        assert!(validate(ISSUER_URL, "ftp://idp.example.com").is_err());
        assert!(validate(ISSUER_URL, "https://idp.example.com/?a=b").is_err());
        assert!(validate(ISSUER_URL, "not a url").is_err());
        assert_eq!(validate(ISSUER_URL, "").unwrap(), "");
    }

    #[test]
    fn client_values() {
        assert_eq!(validate(CLIENT_ID, " abc ").unwrap(), "abc");
        assert!(validate(CLIENT_SECRET, "a\nb").is_err());
        assert!(validate(CLIENT_ID, &"x".repeat(1025)).is_err());
        assert!(validate("sso_other", "x").is_err());
        assert!(key(CLIENT_SECRET).unwrap().secret);
        assert!(!key(ISSUER_URL).unwrap().secret);
    }
}
