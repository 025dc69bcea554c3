//! Configuration of a simulator instance: where it listens, how strict the API
//! side is, how the SSO OIDC side behaves, the vendor simulators
//! ([`VendorsConfig`], defined with them) and the guardrail service
//! ([`GuardrailConfig`]). Everything has a default that
//! suits tests (`SimConfig::default()`); the binary maps its flags onto it.

use std::net::{IpAddr, Ipv4Addr};

pub use crate::guardrail::config::GuardrailConfig;
pub use crate::oidc::config::OidcConfig;
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
    /// The guardrail service (accepted access keys, blocked messages).
    pub guardrail: GuardrailConfig,
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
            guardrail: GuardrailConfig::default(),
        }
    }
}
