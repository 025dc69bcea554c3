//! Configuration of a simulator instance: where it listens, how strict the API
//! side is, how the SSO OIDC side behaves, and the vendor simulators
//! ([`VendorsConfig`], defined with them). Everything has a default that
//! suits tests (`SimConfig::default()`); the binary maps its flags onto it.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::primary::models::{default_models, ModelInfo};
use crate::primary::scenario::Scenario;
use crate::vendor_common::config::VendorsConfig;

/// How a simulator instance is started. See [`crate::start`].
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Address both listeners bind to.
    pub host: IpAddr,
    /// Port of the primary API listener; 0 picks a free one.
    pub api_port: u16,
    /// Port of the SSO OIDC listener; 0 picks a free one.
    pub oidc_port: u16,
    /// Accept any non-empty bearer token on the API side (benchmarks, manual runs).
    pub accept_any_token: bool,
    /// Scenario used when a request names none (no queued scenario, no directive).
    /// `None` means the built-in short answer that mentions the model id.
    pub default_scenario: Option<Scenario>,
    /// What `ListAvailableModels` answers, and which `modelId`s chat accepts.
    pub models: Vec<ModelInfo>,
    /// Bodies larger than this are refused with 400 "Input is too long.".
    pub max_input_bytes: usize,
    /// Refuse chat requests without `profileArn` (IAM Identity Center accounts).
    pub require_profile_arn: bool,
    /// How many requests the recorder keeps (oldest dropped first); 0 disables recording.
    pub record_limit: usize,
    /// The SSO OIDC side.
    pub oidc: OidcConfig,
    /// The vendor simulators (credentials, token lifetimes, OAuth, default scenario).
    pub vendors: VendorsConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            api_port: 0,
            oidc_port: 0,
            accept_any_token: false,
            default_scenario: None,
            models: default_models(),
            max_input_bytes: 800_000,
            require_profile_arn: false,
            record_limit: 10_000,
            oidc: OidcConfig::default(),
            vendors: VendorsConfig::default(),
        }
    }
}

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
