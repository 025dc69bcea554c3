//! How the simulated SSO OIDC service behaves ([`OidcConfig`]): approval of
//! device logins, polling rules, and token lifetimes.

use std::time::Duration;

/// Behaviour of the simulated SSO OIDC service. Can be changed at run time with
/// [`crate::SimHandle::update_oidc`].
#[derive(Debug, Clone, PartialEq)]
pub struct OidcConfig {
    /// Device-code polls answered `authorization_pending` before success.
    /// `None`: stay pending until the device is approved (handle or `GET /device`).
    pub approve_after: Option<u32>,
    /// Answer the first poll of each device code with `slow_down`.
    pub slow_down_once: bool,
    /// Answer `slow_down` whenever a device code is polled faster than `interval`.
    pub enforce_interval: bool,
    /// End the device flow with `access_denied` instead of tokens.
    pub deny: bool,
    /// `interval` returned by StartDeviceAuthorization, in seconds.
    pub interval_secs: u64,
    /// Lifetime of a device code (`expiresIn`).
    pub device_code_ttl: Duration,
    /// Lifetime of every access token issued (`expiresIn`).
    pub access_token_ttl: Duration,
    /// Issue a new refresh token on each refresh grant and retire the old one.
    pub rotate_refresh_tokens: bool,
    /// Answer every refresh grant with `invalid_grant`.
    pub reject_refresh: bool,
    /// Lifetime of a registered client's secret (`clientSecretExpiresAt`).
    pub client_secret_ttl: Duration,
}

impl Default for OidcConfig {
    fn default() -> Self {
        OidcConfig {
            approve_after: Some(1),
            slow_down_once: false,
            enforce_interval: false,
            deny: false,
            interval_secs: 1,
            device_code_ttl: Duration::from_secs(600),
            access_token_ttl: Duration::from_secs(3600),
            rotate_refresh_tokens: false,
            reject_refresh: false,
            client_secret_ttl: Duration::from_secs(90 * 24 * 3600),
        }
    }
}
