//! Who is calling a `/_ui/api` route, as extractors, so the requirement is in
//! the handler's signature:
//!
//! - [`SignedIn`]: any active session, restricted or not (for me, logout, 2FA
//!   enrollment and password change, which restricted sessions may reach);
//! - [`SessionUser`]: a signed-in user whose session is not restricted
//!   (403 `forbidden` naming what to do first);
//! - [`Admin`]: a [`SessionUser`] with role `Admin` (else 403 `forbidden`).
//!
//! No session is 401 `auth_error`. Mutating requests have passed the CSRF
//! check of [`super::session::session_layer`]; an extractor used outside that
//! layer loads the session and checks CSRF itself, so it fails closed.

use std::ops::Deref;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::session::{check_csrf, is_mutating, load, CurrentSession, SessionSlot};
use crate::error::{AuthFailure, GatewayError};
use crate::state::AppState;

async fn current(parts: &Parts, app: &AppState) -> Result<Arc<CurrentSession>, GatewayError> {
    if let Some(SessionSlot(slot)) = parts.extensions.get::<SessionSlot>() {
        return slot
            .clone()
            .ok_or(GatewayError::Auth(AuthFailure::NoSession));
    }
    let cur = load(app, &parts.headers)
        .await?
        .ok_or(GatewayError::Auth(AuthFailure::NoSession))?;
    if is_mutating(&parts.method) {
        check_csrf(&cur, &parts.headers)?;
    }
    Ok(Arc::new(cur))
}

/// Any active session (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct SignedIn(pub Arc<CurrentSession>);

/// A signed-in user without restrictions.
#[derive(Debug, Clone)]
pub(crate) struct SessionUser(pub Arc<CurrentSession>);

/// A signed-in admin without restrictions.
#[derive(Debug, Clone)]
pub(crate) struct Admin(pub Arc<CurrentSession>);

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = GatewayError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, GatewayError> {
        current(parts, app).await.map(SignedIn)
    }
}

impl FromRequestParts<AppState> for SessionUser {
    type Rejection = GatewayError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, GatewayError> {
        let cur = current(parts, app).await?;
        match cur.restriction() {
            Some(r) => Err(GatewayError::Forbidden(r.message().into())),
            None => Ok(SessionUser(cur)),
        }
    }
}

impl FromRequestParts<AppState> for Admin {
    type Rejection = GatewayError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, GatewayError> {
        let SessionUser(cur) = SessionUser::from_request_parts(parts, app).await?;
        if cur.user.is_admin() {
            Ok(Admin(cur))
        } else {
            Err(GatewayError::Forbidden(
                "this call needs the Admin role".into(),
            ))
        }
    }
}

macro_rules! deref_to_session {
    ($($t:ty),*) => {$(
        impl Deref for $t {
            type Target = CurrentSession;
            fn deref(&self) -> &CurrentSession {
                &self.0
            }
        }
    )*};
}
deref_to_session!(SignedIn, SessionUser, Admin);
