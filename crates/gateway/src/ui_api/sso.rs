//! SSO routes of the web UI (spec 5.3), over [`crate::sso`]:
//!
//! - `GET /_ui/api/auth/google` -> 302 to the identity provider's
//!   authorization endpoint (state, nonce, PKCE S256, scope
//!   `openid email profile`), setting the short-lived flow cookie
//!   [`FLOW_COOKIE`] that binds the attempt to this browser;
//! - `GET /_ui/api/auth/google/link` (signed in) -> the same, in link mode;
//! - `GET /_ui/api/auth/google/callback?code&state` -> verify everything,
//!   then sign in (create or update the account, start a session, 302 to
//!   `/_ui/`) or link (302 to `/_ui/?sso=linked`). Every failure is a 302 to
//!   `/_ui/login?error=<code>` ([`crate::sso::SsoError::code`]), never JSON:
//!   the browser is mid-navigation.
//!
//! The redirect URI is `{public base}/_ui/api/auth/google/callback`, the base
//! being the `public_url` runtime field or, unset, the request's
//! `X-Forwarded-Proto`/`X-Forwarded-Host`/`Host`.
//!
//! Sign-in rules: the email's domain must be on the allowlist when the
//! sign-in would create an account (an account that already exists for the
//! email signs in whatever its domain, so the first admin, who arrived while
//! the list was empty, is not locked out; delete an account to take access
//! away). Link rules: the identity's email must be the signed-in account's
//! email (compared case-insensitively), and the identity must not be linked
//! to another account.

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use axum::routing::get;
use axum::{Extension, Router};

use super::cookies::read_cookie;
use super::extract::SessionUser;
use super::reply::redirect;
use super::session::establish;
use crate::error::GatewayError;
use crate::sso::redirect::{callback_uri, public_base};
use crate::sso::settings::{CLIENT_ID, CLIENT_SECRET, ISSUER_URL};
use crate::sso::{Callback, Purpose, Sso, SsoError, SsoSettings, SsoTuning};
use crate::state::AppState;
use crate::store::ids::UserId;
use crate::store::users::{normalize_email, AuthMethod};
use crate::store::{Store, StoreError};

/// The cookie that binds a sign-in attempt to the browser that started it.
/// `SameSite=Lax`, not `Strict`: it must come back on the provider's
/// cross-site redirect to the callback.
pub(crate) const FLOW_COOKIE: &str = "gw_sso_flow";
/// Where the flow cookie is sent: the start and callback routes only.
const FLOW_COOKIE_PATH: &str = "/_ui/api/auth/google";

/// The SSO routes (relative to `/_ui/api`), with their own [`Sso`] service,
/// which keeps its pending attempts in the store. The UI API is served in
/// full mode only, which always has a store: without one there is no route.
pub(crate) fn routes(app: &AppState) -> Router<AppState> {
    let Some(store) = app.store_opt() else {
        return Router::new();
    };
    let sso = Sso::new(
        app.http().clone(),
        store.clone(),
        SsoTuning {
            pending_ttl: app.config().tuning.sso_pending_ttl,
            ..SsoTuning::default()
        },
    );
    Router::new()
        .route("/auth/google", get(start))
        .route("/auth/google/link", get(start_link))
        .route("/auth/google/callback", get(callback))
        .layer(Extension(sso))
}

/// The configured identity provider, or `NotConfigured`.
pub(crate) async fn load_settings(store: &Store) -> Result<SsoSettings, SsoError> {
    let config = store.config();
    let issuer = config.get(ISSUER_URL).await.map_err(internal)?;
    let client_id = config.get(CLIENT_ID).await.map_err(internal)?;
    let secret = config.get(CLIENT_SECRET).await.map_err(internal)?;
    SsoSettings::from_values(
        issuer.as_ref().map(|v| v.expose()),
        client_id.as_ref().map(|v| v.expose()),
        secret.as_ref().map(|v| v.expose()),
    )
    .ok_or(SsoError::NotConfigured)
}

fn internal(e: impl std::fmt::Display) -> SsoError {
    SsoError::Internal(e.to_string())
}

/// `GET /_ui/api/auth/google`.
async fn start(
    State(app): State<AppState>,
    Extension(sso): Extension<Sso>,
    headers: HeaderMap,
) -> Response {
    begin(&app, &sso, &headers, Purpose::SignIn).await
}

/// `GET /_ui/api/auth/google/link` (signed in).
async fn start_link(
    State(app): State<AppState>,
    Extension(sso): Extension<Sso>,
    who: SessionUser,
    headers: HeaderMap,
) -> Response {
    let purpose = Purpose::Link {
        user_id: *who.user.id.as_uuid(),
    };
    begin(&app, &sso, &headers, purpose).await
}

async fn begin(app: &AppState, sso: &Sso, headers: &HeaderMap, purpose: Purpose) -> Response {
    let runtime = app.runtime();
    let public_url = runtime.public_url.as_deref();
    let started = async {
        let store = app.store().map_err(internal)?;
        let settings = load_settings(store).await?;
        let redirect_uri = callback_uri(&public_base(public_url, headers)?);
        sso.begin(&settings, &redirect_uri, purpose).await
    }
    .await;
    match started {
        Ok(started) => {
            let mut response = redirect(&started.authorization_url);
            let cookie = flow_cookie(app, &started.binding, 600);
            if let Some(cookie) = cookie {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(e) => failure(public_url, &e),
    }
}

/// `GET /_ui/api/auth/google/callback`.
async fn callback(
    State(app): State<AppState>,
    Extension(sso): Extension<Sso>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let runtime = app.runtime();
    let public_url = runtime.public_url.as_deref();
    let mut cb = parse_callback(query.as_deref().unwrap_or(""));
    cb.binding = read_cookie(&headers, FLOW_COOKIE).map(str::to_owned);
    let mut response = match complete(&app, &sso, &cb).await {
        Ok((target, cookies)) => {
            let mut response = redirect(&format!("{}{target}", public_url.unwrap_or_default()));
            for value in cookies.get_all(header::SET_COOKIE) {
                response
                    .headers_mut()
                    .append(header::SET_COOKIE, value.clone());
            }
            response
        }
        Err(e) => failure(public_url, &e),
    };
    // The attempt is spent either way.
    if let Some(clear) = flow_cookie(&app, "", 0) {
        response.headers_mut().append(header::SET_COOKIE, clear);
    }
    response
}

/// Verify the callback and act on it: the path to go to and the cookies to set.
async fn complete(
    app: &AppState,
    sso: &Sso,
    cb: &Callback,
) -> Result<(&'static str, HeaderMap), SsoError> {
    let store = app.store().map_err(internal)?;
    let settings = load_settings(store).await?;
    let finished = sso.finish(&settings, cb).await?;
    let identity = finished.identity;
    match finished.purpose {
        Purpose::SignIn => {
            let users = store.users();
            let exists = users
                .find_by_email(&identity.email)
                .await
                .map_err(internal)?
                .is_some();
            if !exists
                && !store
                    .domains()
                    .is_allowed(&identity.email_domain())
                    .await
                    .map_err(internal)?
            {
                return Err(SsoError::DomainNotAllowed);
            }
            let (user, created) = users
                .upsert_sso(&identity.email, &identity.subject)
                .await
                .map_err(|e| match e {
                    StoreError::Conflict(m) => SsoError::LinkRefused(m),
                    other => internal(other),
                })?;
            if created {
                tracing::info!(user_id = %user.id, role = user.role.as_str(), "account created by SSO sign-in");
            }
            let cookies = establish(app, &user, AuthMethod::Sso)
                .await
                .map_err(|e: GatewayError| internal(e))?;
            Ok(("/_ui/", cookies))
        }
        Purpose::Link { user_id } => {
            let users = store.users();
            let user = users
                .get(UserId(user_id))
                .await
                .map_err(internal)?
                .ok_or_else(|| SsoError::LinkRefused("the account no longer exists".into()))?;
            if normalize_email(&user.email) != normalize_email(&identity.email) {
                return Err(SsoError::LinkRefused(
                    "the identity's email is not the account's email".into(),
                ));
            }
            users
                .set_sso_subject(user.id, &identity.subject)
                .await
                .map_err(|e| match e {
                    StoreError::Conflict(m) => SsoError::LinkRefused(m),
                    other => internal(other),
                })?;
            tracing::info!(user_id = %user.id, "SSO identity linked");
            Ok(("/_ui/?sso=linked", HeaderMap::new()))
        }
    }
}

/// `code`, `state` and `error` of the callback's query; anything else is ignored.
fn parse_callback(query: &str) -> Callback {
    let mut cb = Callback::default();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        let slot = match k.as_ref() {
            "code" => &mut cb.code,
            "state" => &mut cb.state,
            "error" => &mut cb.error,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(v.into_owned());
        }
    }
    cb
}

/// Log the failure and send the browser to the login page with its code.
fn failure(public_url: Option<&str>, e: &SsoError) -> Response {
    match e {
        SsoError::Internal(_) | SsoError::Unavailable(_) => {
            tracing::error!(code = e.code(), error = %e, "SSO sign-in failed")
        }
        _ => tracing::warn!(code = e.code(), error = %e, "SSO sign-in refused"),
    }
    redirect(&format!(
        "{}/_ui/login?error={}",
        public_url.unwrap_or_default(),
        e.code()
    ))
}

/// The flow cookie (`max_age` 0 deletes it).
fn flow_cookie(app: &AppState, value: &str, max_age: i64) -> Option<HeaderValue> {
    let mut text = format!(
        "{FLOW_COOKIE}={value}; Path={FLOW_COOKIE_PATH}; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    );
    if app.config().cookie_secure {
        text.push_str("; Secure");
    }
    HeaderValue::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn callback_query_is_read_leniently() {
        let cb = parse_callback("state=a%20b&code=c&code=ignored&extra=1");
        assert_eq!(cb.state.as_deref(), Some("a b"));
        assert_eq!(cb.code.as_deref(), Some("c"));
        assert!(cb.error.is_none());
        let cb = parse_callback("error=access_denied&state=s");
        assert_eq!(cb.error.as_deref(), Some("access_denied"));
        let cb = parse_callback("%%%");
        assert!(cb.state.is_none());
    }

    #[test]
    fn failures_redirect_to_the_login_page_with_the_code() {
        let r = failure(None, &SsoError::StateInvalid);
        assert_eq!(r.status(), StatusCode::FOUND);
        assert_eq!(
            r.headers()[header::LOCATION],
            "/_ui/login?error=sso_state_invalid"
        );
        assert_eq!(r.headers()[header::CACHE_CONTROL], "no-store");
        let r = failure(Some("https://gw.example.com"), &SsoError::DomainNotAllowed);
        assert_eq!(
            r.headers()[header::LOCATION],
            "https://gw.example.com/_ui/login?error=sso_domain_not_allowed"
        );
    }
}
