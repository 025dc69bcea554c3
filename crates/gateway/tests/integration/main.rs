//! The gateway's integration tests: one binary (one link), one module per area.
//! Helpers panic on setup failures, as tests do.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods,
    reason = "a failed setup step fails the test loudly; tests spawn their own servers"
)]

mod accounts_support;
mod common;
mod config_api_access;
mod config_api_values;
mod console_serving;
mod fallbacks;
mod fault_proxy;
mod faults;
mod full_target;
mod guardrails;
mod infra;
mod keys_lifecycle;
mod keys_support;
mod limits;
mod log_secrets;
mod log_stream;
mod metrics;
mod metrics_support;
mod model_registry;
mod profiles;
mod provider_signins;
mod providers_per_user;
mod readiness;
mod relay_auth;
mod relay_errors;
mod relay_matrix;
mod relay_passthrough;
mod relay_select;
mod relay_support;
mod replicas_flows;
mod replicas_pg;
mod slow_clients;
mod sso_flow;
mod sso_refusals;
mod sso_support;
mod store_provider_accounts;
mod store_story;
mod traces;
mod ui_csrf_routes;
mod ui_login;
mod ui_sessions;
mod ui_setup;
mod ui_two_factor;
mod ui_users;
mod upstream_creds_flow;
mod usage_records;
mod v1_anthropic;
mod v1_models;
mod v1_openai;
mod v1_streaming;
mod v1_upstream_faults;
mod v1_usage;
mod v1_validation;
