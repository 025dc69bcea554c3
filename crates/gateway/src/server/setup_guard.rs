//! `/v1/*` in full deployment (spec 3.1, 5.2).
//!
//! - While no admin exists (setup incomplete), every `/v1` request answers
//!   503 `setup_required` directing to `/_ui/`; `/`, `/health` and the UI API
//!   keep working. The state is read from the store until an admin appears,
//!   then cached ([`AppState::setup_complete`]), so the first completed
//!   sign-in on any replica opens `/v1` everywhere without a restart.
//! - After setup, clients authenticate with per-user API keys
//!   ([`super::client_auth::require_user_key`]): 401 `auth_error` ("missing"
//!   without a key, "invalid" with one that is not a live key).

use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::Response;
use axum::Router;

use crate::error::GatewayError;
use crate::state::AppState;

/// Wrap the `/v1` router of full deployment.
pub(crate) fn guard(v1: Router<AppState>, state: AppState) -> Router<AppState> {
    v1.layer(from_fn_with_state(state, setup_then_keys))
}

async fn setup_then_keys(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, GatewayError> {
    admit(&app, request, |request| next.run(request)).await
}

/// The setup check, then the per-user key of `request`, then `next`.
pub(crate) async fn admit(
    app: &AppState,
    request: Request,
    next: impl super::Next,
) -> Result<Response, GatewayError> {
    if !app.setup_complete().await? {
        return Err(GatewayError::SetupRequired);
    }
    super::client_auth::require_user_key(app, request, next).await
}
