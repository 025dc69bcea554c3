//! Upstream credentials of the primary provider in proxy mode: the
//! `tokens.json` file ([`token_file`]), the SSO OIDC client ([`oidc`]), the
//! device flow ([`device_flow`]), start-up logic of spec 3.6 ([`bootstrap`]) and
//! the [`TokenManager`] the pipeline takes access tokens from ([`manager`]).
//! In full deployment each user has their own manager ([`per_user`]), and
//! [`per_user::PrimaryAuth`] is the token source of one request.

pub mod bootstrap;
pub mod device_flow;
pub mod manager;
pub mod oidc;
pub mod per_user;
pub mod profiles;
pub mod token_file;

pub use bootstrap::{start_primary, BootstrapError};
pub use manager::{TokenManager, TokenTiming};
pub use oidc::OidcClient;
pub use token_file::{PrimaryCredentials, TokenFile};
