//! Web UI sessions over HTTP (spec 3.2, 5.5; interfaces.md 6).
//!
//! - [`establish`] starts a session after a completed sign-in (password,
//!   password + 2FA, SSO): a new session id every time (no fixation), a new
//!   CSRF token stored with it, both cookies set.
//! - [`session_layer`] runs in front of every `/_ui/api` route: it loads the
//!   session named by `gw_session` (from the store: valid on every replica,
//!   ended everywhere by logout), refuses a mutating request (POST, PUT,
//!   PATCH, DELETE) without a session (401 `auth_error`) or without the
//!   session's token in `X-CSRF-Token` (403 `forbidden`), except the sign-in
//!   calls themselves, and slides the expiry of a session last refreshed more
//!   than `session_refresh_after` (12 h) ago, re-setting both cookies.
//! - The extractors in [`super::extract`] read what the layer loaded.
//!
//! A password session of an account without TOTP, or of an account whose
//! password an admin reset, is restricted ([`Restriction`]).

use std::sync::Arc;

use axum::extract::{OriginalUri, Request, State};
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use subtle::ConstantTimeEq as _;

use super::cookies::{read_cookie, CookiePolicy, CSRF_HEADER, SESSION_COOKIE};
use crate::error::{AuthFailure, GatewayError};
use crate::state::AppState;
use crate::store::clock::{self, secs};
use crate::store::ids::SessionId;
use crate::store::sessions::Session;
use crate::store::users::{AuthMethod, User};

/// The signed-in session of a request and its user (as of this request).
#[derive(Debug, Clone)]
pub(crate) struct CurrentSession {
    pub session: Session,
    pub user: User,
}

/// What a restricted session must do before it can use the rest of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Restriction {
    /// An admin reset the password: only password change, me, logout, status.
    MustChangePassword,
    /// A password user without TOTP: only 2FA enrollment, me, logout, status.
    TwoFactorSetup,
}

impl Restriction {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Restriction::MustChangePassword => {
                "your password was reset: change it first (POST /_ui/api/auth/password/change)"
            }
            Restriction::TwoFactorSetup => {
                "two-factor authentication is required: enroll first (GET /_ui/api/auth/2fa/setup)"
            }
        }
    }
}

impl CurrentSession {
    /// The restriction in force, the password change first.
    pub(crate) fn restriction(&self) -> Option<Restriction> {
        if self.session.auth_method != AuthMethod::Password {
            return None;
        }
        if self.user.must_change_password {
            Some(Restriction::MustChangePassword)
        } else if !self.user.totp_enabled {
            Some(Restriction::TwoFactorSetup)
        } else {
            None
        }
    }
}

/// What the layer found, in the request extensions.
#[derive(Debug, Clone)]
pub(crate) struct SessionSlot(pub(crate) Option<Arc<CurrentSession>>);

/// The cookie attributes of this deployment.
pub(crate) fn cookie_policy(app: &AppState) -> CookiePolicy {
    CookiePolicy {
        secure: app.config().cookie_secure,
    }
}

/// Start a session for `user` (who just completed a sign-in by
/// `auth_method`): store it with a fresh CSRF token, record the sign-in, and
/// return the two `Set-Cookie` headers to send.
pub(crate) async fn establish(
    app: &AppState,
    user: &User,
    auth_method: AuthMethod,
) -> Result<HeaderMap, GatewayError> {
    let store = app.store()?;
    let ttl = secs(app.config().tuning.auth.session_ttl);
    let session = store.sessions().create(user.id, auth_method, ttl).await?;
    store.users().record_login(user.id).await?;
    if user.is_admin() {
        // Setup is complete from this sign-in on (spec 3.1).
        app.setup_complete().await?;
    }
    tracing::info!(user_id = %user.id, method = auth_method.as_str(), "signed in");
    Ok(cookie_policy(app).session_headers(
        &session.id.to_string(),
        session.csrf_token.expose(),
        ttl,
    ))
}

/// End the session everywhere; the headers that delete both cookies.
pub(crate) async fn end(
    app: &AppState,
    current: &CurrentSession,
) -> Result<HeaderMap, GatewayError> {
    app.store()?.sessions().delete(current.session.id).await?;
    tracing::info!(user_id = %current.user.id, "signed out");
    Ok(cookie_policy(app).clearing_headers())
}

/// The session named by the request's `gw_session` cookie, if it is active.
pub(crate) async fn load(
    app: &AppState,
    headers: &HeaderMap,
) -> Result<Option<CurrentSession>, GatewayError> {
    let Some(id) = read_cookie(headers, SESSION_COOKIE).and_then(|v| v.parse::<SessionId>().ok())
    else {
        return Ok(None);
    };
    let found = app.store()?.sessions().get_active(id).await?;
    Ok(found.map(|(session, user)| CurrentSession { session, user }))
}

/// POST, PUT, PATCH and DELETE change state and need the CSRF token.
pub(crate) fn is_mutating(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// Mutating calls that need no session (and so no CSRF token): the sign-in
/// steps, first-admin setup, and the provider OAuth relay callback that
/// spec 4.3 lists as public. `path` is below `/_ui/api`.
pub(crate) fn csrf_exempt(path: &str) -> bool {
    matches!(path, "/auth/login" | "/auth/login/2fa" | "/setup")
        || path
            .strip_prefix("/providers/")
            .is_some_and(|rest| rest.ends_with("/relay") && rest.matches('/').count() == 1)
}

/// The request's `X-CSRF-Token` must be this session's token.
pub(crate) fn check_csrf(
    current: &CurrentSession,
    headers: &HeaderMap,
) -> Result<(), GatewayError> {
    let sent = headers
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let expected = current.session.csrf_token.expose();
    if !sent.is_empty() && bool::from(sent.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else if sent.is_empty() {
        Err(GatewayError::Forbidden(
            "missing CSRF token: send the csrf_token cookie's value in the X-CSRF-Token header"
                .into(),
        ))
    } else {
        Err(GatewayError::Forbidden("invalid CSRF token".into()))
    }
}

/// The path below `/_ui/api` of a request seen inside the nested router.
fn api_path(request: &Request) -> String {
    let full = request
        .extensions()
        .get::<OriginalUri>()
        .map(|u| u.0.path().to_owned())
        .unwrap_or_else(|| request.uri().path().to_owned());
    match full.strip_prefix("/_ui/api") {
        Some(rest) => rest.to_owned(),
        None => full,
    }
}

/// The middleware described in the module doc.
pub(crate) async fn session_layer(
    State(app): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    match prepare(&app, &mut request).await {
        Ok(refreshed) => {
            let mut response = next.run(request).await;
            if let Some(cookies) = refreshed {
                let sets_session = response
                    .headers()
                    .get_all(header::SET_COOKIE)
                    .iter()
                    .any(|v| v.as_bytes().starts_with(SESSION_COOKIE.as_bytes()));
                if !sets_session {
                    for value in cookies.get_all(header::SET_COOKIE) {
                        response
                            .headers_mut()
                            .append(header::SET_COOKIE, value.clone());
                    }
                }
            }
            response
        }
        Err(err) => err.into_response(),
    }
}

/// Load, check and slide; the cookies to re-set when the session was extended.
async fn prepare(app: &AppState, request: &mut Request) -> Result<Option<HeaderMap>, GatewayError> {
    let mut current = load(app, request.headers()).await?;
    if is_mutating(request.method()) && !csrf_exempt(&api_path(request)) {
        let Some(cur) = &current else {
            return Err(GatewayError::Auth(AuthFailure::NoSession));
        };
        check_csrf(cur, request.headers())?;
    }
    let mut refreshed = None;
    if let Some(cur) = &mut current {
        let tuning = &app.config().tuning.auth;
        let refresh_after = secs(tuning.session_refresh_after);
        let now = clock::now();
        if now.saturating_sub(cur.session.refreshed_at) >= refresh_after {
            let ttl = secs(tuning.session_ttl);
            let store = app.store()?;
            if let Some(expires_at) = store
                .sessions()
                .extend(cur.session.id, now.saturating_sub(refresh_after), ttl)
                .await?
            {
                cur.session.refreshed_at = now;
                cur.session.expires_at = expires_at;
                refreshed = Some(cookie_policy(app).session_headers(
                    &cur.session.id.to_string(),
                    cur.session.csrf_token.expose(),
                    ttl,
                ));
            }
        }
    }
    request
        .extensions_mut()
        .insert(SessionSlot(current.map(Arc::new)));
    Ok(refreshed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exempt_paths() {
        for p in [
            "/auth/login",
            "/auth/login/2fa",
            "/setup",
            "/providers/messages_vendor/relay",
        ] {
            assert!(csrf_exempt(p), "{p}");
        }
        for p in [
            "/auth/logout",
            "/auth/login/",
            "/auth/2fa/verify",
            "/providers/x/y/relay",
            "/providers/relay",
            "/users/1",
        ] {
            assert!(!csrf_exempt(p), "{p}");
        }
    }

    fn current(method: AuthMethod, totp: bool, must_change: bool) -> CurrentSession {
        use crate::config::Secret;
        use crate::store::ids::UserId;
        use crate::store::users::Role;
        let user = User {
            id: UserId::new(),
            email: "a@example.com".into(),
            role: Role::User,
            auth_method: AuthMethod::Password,
            password_hash: Some(Secret::new("h")),
            sso_subject: None,
            totp_enabled: totp,
            must_change_password: must_change,
            created_at: 0,
            last_login_at: None,
        };
        CurrentSession {
            session: Session {
                id: SessionId::new(),
                user_id: user.id,
                csrf_token: Secret::new("t"),
                auth_method: method,
                created_at: 0,
                refreshed_at: 0,
                expires_at: 1,
            },
            user,
        }
    }

    #[test]
    fn restrictions_of_password_sessions_only() {
        use AuthMethod::{Password, Sso};
        assert_eq!(current(Password, true, false).restriction(), None);
        assert_eq!(
            current(Password, false, false).restriction(),
            Some(Restriction::TwoFactorSetup)
        );
        // The password change comes first.
        assert_eq!(
            current(Password, false, true).restriction(),
            Some(Restriction::MustChangePassword)
        );
        assert_eq!(
            current(Password, true, true).restriction(),
            Some(Restriction::MustChangePassword)
        );
        // SSO sessions: the identity provider is the second factor.
        assert_eq!(current(Sso, false, true).restriction(), None);
    }

    #[test]
    fn csrf_is_the_sessions_own_token() {
        let cur = current(AuthMethod::Sso, false, false);
        let mut headers = HeaderMap::new();
        assert!(
            matches!(check_csrf(&cur, &headers), Err(GatewayError::Forbidden(m)) if m.contains("missing"))
        );
        headers.insert(CSRF_HEADER, "u".parse().unwrap());
        assert!(
            matches!(check_csrf(&cur, &headers), Err(GatewayError::Forbidden(m)) if m.contains("invalid"))
        );
        headers.insert(CSRF_HEADER, "t".parse().unwrap());
        assert!(check_csrf(&cur, &headers).is_ok());
    }

    #[test]
    fn mutating_methods() {
        for m in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_mutating(&m));
        }
        for m in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_mutating(&m));
        }
    }
}
