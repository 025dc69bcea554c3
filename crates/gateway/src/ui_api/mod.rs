//! The web UI API, `/_ui/api/*` (spec 4.3; interfaces.md 6), full deployment
//! only: in proxy mode it is not mounted and answers 404.
//!
//! Every route sits behind [`session::session_layer`] (session loading, CSRF
//! for mutating calls, sliding expiry). Who may call what is in each
//! handler's signature through the extractors of [`extract`].
//!
//! | Module | Routes |
//! |---|---|
//! | [`status`] | `GET /status` (public), `GET /system` |
//! | [`login`] | `POST /auth/login`, `POST /auth/login/2fa`, `POST /setup` (public) |
//! | [`account`] | `GET /auth/me`, `POST /auth/logout`, `POST /auth/password/change` |
//! | [`two_factor`] | `GET /auth/2fa/setup`, `POST /auth/2fa/verify` |
//! | [`users`] | `/users`, `/users/{id}`, `/users/{id}/role`, `/admin/users/create`, `/admin/users/{id}/reset-password` (Admin) |
//! | [`user_limits`] | `/admin/users/{id}/limits` (Admin) |
//! | [`fallbacks`] | `/admin/fallbacks` (Admin) |
//! | [`domains`] | `/domains`, `/domains/{domain}` (Admin) |
//! | [`keys`] | `/keys`, `/keys/{id}` (own API keys: create, change, revoke) |
//! | [`upstream`] | `/upstream/status`, `/upstream/setup`, `/upstream/poll`, `/upstream/token` (own upstream credentials) |
//! | [`providers`] | `/providers/registry`, `/providers/status`, `/providers/priority`, `/providers/rate-limits` ([`rate_limits`]), `/providers/{provider}`, `/providers/{provider}/connect`, `/providers/{provider}/accounts[/{id}]` (own provider accounts) |
//! | [`provider_signin`] | `/providers/{provider}/auth`, `/providers/{provider}/relay-script`, `/providers/{provider}/relay` (public), `/providers/assistant_vendor/callback`, `/assistant/device-code`, `/assistant/device-poll`, `/assistant/status`, `/assistant/disconnect` (OAuth sign-ins) |
//! | [`models`] | `/models` (what the user can call), `/models/registry[/{id}]`, `/models/registry/populate`, `/models/visibility-defaults[/{provider_id}[/apply]]`, `/models/visibility-defaults/apply-all` (Admin) |
//! | [`usage`] | `/usage` (own), `/admin/usage`, `/admin/usage/users` (Admin) |
//!
//! SSO (`/auth/google*`) and configuration (`/config*`) routes are merged in
//! by their own modules.
//!
//! The API other modules build on: [`session::establish`] (start a session
//! after a sign-in), the extractors [`SignedIn`], [`SessionUser`], [`Admin`].

pub(crate) mod account;
pub(crate) mod bootstrap;
pub(crate) mod config;
pub(crate) mod cookies;
pub(crate) mod domains;
pub(crate) mod extract;
pub(crate) mod fallbacks;
pub(crate) mod guardrails;
pub(crate) mod json;
pub(crate) mod keys;
pub(crate) mod limit_fields;
pub(crate) mod login;
pub(crate) mod logs;
pub(crate) mod models;
pub(crate) mod provider_signin;
pub(crate) mod providers;
pub(crate) mod rate_limits;
pub(crate) mod reply;
pub(crate) mod session;
pub(crate) mod signin;
pub(crate) mod sso;
pub(crate) mod status;
#[cfg(test)]
mod ts_types;
pub(crate) mod two_factor;
pub(crate) mod upstream;
pub(crate) mod usage;
pub(crate) mod user_limits;
pub(crate) mod users;

use axum::http::Uri;
use axum::middleware::from_fn_with_state;
use axum::routing::{delete, get, patch, post, put};
use axum::Router;

use crate::error::GatewayError;
use crate::state::AppState;

/// The `/_ui/api` router (to be nested at `/_ui/api`).
pub(crate) fn router(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/status", get(status::status))
        .route("/system", get(status::system))
        .route("/setup", post(login::setup))
        .route("/auth/login", post(login::login))
        .route("/auth/login/2fa", post(login::login_2fa))
        .route("/auth/me", get(account::me))
        .route("/auth/logout", post(account::logout))
        .route("/auth/password/change", post(account::change_password))
        .route("/auth/2fa/setup", get(two_factor::setup))
        .route("/auth/2fa/verify", post(two_factor::verify))
        .route("/users", get(users::list))
        .route("/users/{id}", get(users::detail).delete(users::delete))
        .route("/users/{id}/role", put(users::set_role))
        .route("/admin/users/create", post(users::create))
        .route(
            "/admin/users/{id}/reset-password",
            post(users::reset_password),
        )
        .route(
            "/admin/users/{id}/limits",
            get(user_limits::get).patch(user_limits::update),
        )
        .route("/admin/fallbacks", get(fallbacks::get).put(fallbacks::put))
        .route(
            "/guardrails/profiles",
            get(guardrails::profiles).post(guardrails::create_profile),
        )
        .route(
            "/guardrails/profiles/{id}",
            get(guardrails::profile)
                .put(guardrails::update_profile)
                .delete(guardrails::delete_profile),
        )
        .route(
            "/guardrails/profiles/{id}/test",
            post(guardrails::test_profile),
        )
        .route(
            "/guardrails/rules",
            get(guardrails::rules).post(guardrails::create_rule),
        )
        .route(
            "/guardrails/rules/{id}",
            get(guardrails::rule)
                .put(guardrails::update_rule)
                .delete(guardrails::delete_rule),
        )
        .route("/guardrails/validate", post(guardrails::validate))
        .route("/domains", get(domains::list).post(domains::add))
        .route("/domains/{domain}", delete(domains::remove))
        .route("/keys", get(keys::list).post(keys::create))
        .route("/keys/{id}", patch(keys::update).delete(keys::delete))
        .route("/upstream/status", get(upstream::status))
        .route("/upstream/setup", post(upstream::setup))
        .route("/upstream/poll", post(upstream::poll))
        .route("/upstream/token", delete(upstream::delete_token))
        .route("/providers/registry", get(providers::registry))
        .route("/providers/status", get(providers::status))
        .route("/providers/rate-limits", get(rate_limits::list))
        .route(
            "/providers/priority",
            get(providers::get_order).post(providers::set_order),
        )
        .route("/providers/{provider}", delete(providers::remove))
        .route("/providers/{provider}/connect", get(providers::connect))
        .route("/providers/{provider}/auth", get(provider_signin::auth))
        .route(
            "/providers/{provider}/relay-script",
            get(provider_signin::relay::script),
        )
        .route(
            "/providers/{provider}/relay",
            post(provider_signin::relay::relay),
        )
        .route(
            "/providers/assistant_vendor/callback",
            get(provider_signin::code_host::callback),
        )
        .route(
            "/assistant/device-code",
            post(provider_signin::code_host::device_code),
        )
        .route(
            "/assistant/device-poll",
            post(provider_signin::code_host::device_poll),
        )
        .route("/assistant/status", get(provider_signin::code_host::status))
        .route(
            "/assistant/disconnect",
            delete(provider_signin::code_host::disconnect),
        )
        .route(
            "/providers/{provider}/accounts",
            get(providers::accounts).post(providers::add_account),
        )
        .route(
            "/providers/{provider}/accounts/{id}",
            patch(providers::update_account),
        )
        .route(
            "/admin/pool",
            get(providers::pool).post(providers::add_pool),
        )
        .route(
            "/admin/pool/{id}",
            patch(providers::update_pool).delete(providers::delete_pool),
        )
        .route("/admin/providers", get(providers::switches))
        .route("/admin/providers/{provider}", patch(providers::set_switch))
        .route("/models", get(models::usable))
        .route("/models/registry", get(models::registry))
        .route("/models/registry/populate", post(models::populate))
        .route(
            "/models/registry/{id}",
            patch(models::update).delete(models::delete),
        )
        .route("/models/visibility-defaults", get(models::defaults))
        .route(
            "/models/visibility-defaults/apply-all",
            post(models::apply_all),
        )
        .route(
            "/models/visibility-defaults/{provider}",
            put(models::set_default).delete(models::delete_default),
        )
        .route(
            "/models/visibility-defaults/{provider}/apply",
            post(models::apply_default),
        )
        .route("/usage", get(usage::own))
        .route("/admin/usage", get(usage::global))
        .route("/admin/logs/stream", get(logs::stream))
        .route("/admin/usage/users", get(usage::per_user))
        .merge(sso::routes(&state))
        .merge(config::routes())
        .fallback(not_found)
        .layer(from_fn_with_state(state, session::session_layer))
}

async fn not_found(uri: Uri) -> GatewayError {
    GatewayError::NotFound(format!("no route for {}", uri.path()))
}
