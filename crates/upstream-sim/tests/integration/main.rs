//! Integration tests of the simulator: it is started in-process on ephemeral
//! ports and driven over HTTP with reqwest, as the gateway's tests will.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions should fail loudly too"
)]

mod api;
mod common;
mod guardrail;
mod guardrail_auth;
mod guardrail_support;
mod oidc;
mod recording;
mod scenarios;
mod vendors_api_keys;
mod vendors_assistant;
mod vendors_code_host;
mod vendors_completions;
mod vendors_messages;
mod vendors_oauth;
mod vendors_oauth_pkce;
mod vendors_support;
