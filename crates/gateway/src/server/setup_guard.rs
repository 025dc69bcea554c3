//! Full deployment before its store exists: `/v1/*` answers 503
//! `setup_required` directing to `/_ui/` (spec 3.1), while `/` and `/health`
//! work. This is the one place the setup state decides; the store work replaces
//! [`guard`] with a check of "is there an admin user yet".

use axum::extract::Request;
use axum::middleware::{from_fn, Next};
use axum::response::Response;
use axum::Router;

use crate::error::GatewayError;
use crate::state::AppState;

/// Wrap the `/v1` router so every request to it is refused until setup is done.
pub fn guard(v1: Router<AppState>) -> Router<AppState> {
    v1.layer(from_fn(setup_required))
}

async fn setup_required(_request: Request, _next: Next) -> Result<Response, GatewayError> {
    Err(GatewayError::SetupRequired)
}
