//! A simulated OpenID Connect identity provider, for the gateway's web sign-in
//! (spec 5.3). Served under [`IDP_PREFIX`] on the API listener; its issuer is
//! `{base_url}/idp` ([`crate::SimHandle::idp_issuer_url`]):
//!
//! - `GET /.well-known/openid-configuration`: the discovery document;
//! - `GET /jwks`: the public signing keys (RS256, with `kid`);
//! - `GET /authorize`: checks the client, redirect URI, scope and the PKCE
//!   S256 challenge, then redirects back at once with a code for the
//!   configured person ([`crate::SimHandle::idp_set_user`]), or with a
//!   configured error;
//! - `POST /token` (form-encoded): authenticates the client (`client_secret_post`
//!   or `client_secret_basic`), checks the code (single use, 10-minute
//!   lifetime, same client and redirect URI) and the PKCE verifier, and
//!   answers an access token and a signed ID token.
//!
//! [`config::IdTokenTweaks`] bends the ID token (issuer, audience, `azp`,
//! nonce, lifetimes, claims, signature) so tests can produce forged, expired
//! and otherwise wrong tokens. Every request is logged ([`IdpRequest`]).

pub mod config;
pub mod keys;
pub mod store;
pub mod token;

use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::json;

use crate::http::Params;

pub use config::{IdTokenTweaks, IdpConfig, IdpUser, NonceClaim, OAuthError, Signing};
pub use store::IdpRequest;

use store::{AuthorizeOutcome, AuthorizeParams, IdpStore};

/// Path prefix of the provider on the API listener.
pub const IDP_PREFIX: &str = "/idp";

/// One running provider: its issuer URL and its state.
#[derive(Debug)]
pub struct Idp {
    issuer: String,
    store: Mutex<IdpStore>,
}

impl Idp {
    /// A provider whose issuer is `issuer` (no trailing `/`), with the
    /// embedded test keys.
    pub fn new(issuer: String) -> Result<Self, rsa::pkcs8::Error> {
        Ok(Idp {
            issuer,
            store: Mutex::new(IdpStore::new(keys::Keys::load()?)),
        })
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The state, ignoring poisoning (a panicked handler leaves consistent maps).
    pub(crate) fn store(&self) -> MutexGuard<'_, IdpStore> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Routes of the provider, relative to its issuer.
pub(crate) fn router(idp: Arc<Idp>) -> Router {
    Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/authorize", get(authorize))
        .route("/token", post(token_endpoint))
        .with_state(idp)
}

/// Decoded `a=b&c=d` pairs (query string or form body).
fn pairs(raw: &[u8]) -> Vec<(String, String)> {
    Params::parse(raw).0
}

fn first(params: &[(String, String)], name: &str) -> Option<String> {
    let found = params.iter().find(|(k, _)| k == name);
    found.map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
}

fn log(idp: &Idp, method: &str, path: &str, params: Vec<(String, String)>, headers: &HeaderMap) {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    idp.store().record(IdpRequest {
        method: method.to_owned(),
        path: path.to_owned(),
        params,
        authorization,
    });
}

fn unavailable() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "upstream-sim idp: temporarily unavailable\n",
    )
        .into_response()
}

fn no_store(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

fn oauth_error(status: StatusCode, e: &OAuthError) -> Response {
    no_store(
        (
            status,
            Json(json!({"error": e.error, "error_description": e.description})),
        )
            .into_response(),
    )
}

async fn discovery(State(idp): State<Arc<Idp>>, headers: HeaderMap) -> Response {
    log(
        &idp,
        "GET",
        "/.well-known/openid-configuration",
        Vec::new(),
        &headers,
    );
    if idp.store().config.unavailable {
        return unavailable();
    }
    let iss = idp.issuer();
    Json(json!({
        "issuer": iss,
        "authorization_endpoint": format!("{iss}/authorize"),
        "token_endpoint": format!("{iss}/token"),
        "jwks_uri": format!("{iss}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code"],
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nonce", "azp",
                             "email", "email_verified", "name"],
    }))
    .into_response()
}

async fn jwks(State(idp): State<Arc<Idp>>, headers: HeaderMap) -> Response {
    log(&idp, "GET", "/jwks", Vec::new(), &headers);
    let store = idp.store();
    if store.config.unavailable {
        return unavailable();
    }
    Json(store.jwks()).into_response()
}

async fn authorize(
    State(idp): State<Arc<Idp>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let params = pairs(query.unwrap_or_default().as_bytes());
    log(&idp, "GET", "/authorize", params.clone(), &headers);
    if idp.store().config.unavailable {
        return unavailable();
    }
    let request = AuthorizeParams {
        response_type: first(&params, "response_type"),
        client_id: first(&params, "client_id"),
        redirect_uri: first(&params, "redirect_uri"),
        scope: first(&params, "scope"),
        state: first(&params, "state"),
        nonce: first(&params, "nonce"),
        code_challenge: first(&params, "code_challenge"),
        code_challenge_method: first(&params, "code_challenge_method"),
    };
    let outcome = idp.store().authorize(request);
    match outcome {
        AuthorizeOutcome::Refuse(message) => (
            StatusCode::BAD_REQUEST,
            format!("upstream-sim idp: {message}\n"),
        )
            .into_response(),
        AuthorizeOutcome::Redirect {
            redirect_uri,
            params,
        } => {
            let Ok(mut target) = url::Url::parse(&redirect_uri) else {
                return (
                    StatusCode::BAD_REQUEST,
                    "upstream-sim idp: bad redirect_uri\n",
                )
                    .into_response();
            };
            target.query_pairs_mut().extend_pairs(params);
            match HeaderValue::from_str(target.as_str()) {
                Ok(location) => {
                    no_store((StatusCode::FOUND, [(header::LOCATION, location)]).into_response())
                }
                Err(_) => (
                    StatusCode::BAD_REQUEST,
                    "upstream-sim idp: bad redirect_uri\n",
                )
                    .into_response(),
            }
        }
    }
}

/// Client credentials from `Authorization: Basic` (RFC 6749 2.3.1: both parts
/// form-urlencoded) or from the form.
fn client_credentials(
    headers: &HeaderMap,
    params: &[(String, String)],
) -> Option<(String, String)> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b64| STANDARD.decode(b64.trim()).ok())
        .and_then(|raw| String::from_utf8(raw).ok())
        .and_then(|text| {
            let (id, secret) = text.split_once(':')?;
            let decode = |s: &str| pairs(format!("x={s}").as_bytes()).pop().map(|(_, v)| v);
            Some((decode(id)?, decode(secret)?))
        });
    basic.or_else(|| Some((first(params, "client_id")?, first(params, "client_secret")?)))
}

async fn token_endpoint(State(idp): State<Arc<Idp>>, headers: HeaderMap, body: Bytes) -> Response {
    let params = pairs(&body);
    log(&idp, "POST", "/token", params.clone(), &headers);
    let mut store = idp.store();
    if store.config.unavailable {
        return unavailable();
    }
    let authenticated = client_credentials(&headers, &params)
        .filter(|(id, secret)| store.client_authenticates(id, secret));
    let Some((client_id, _)) = authenticated else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            &OAuthError::new("invalid_client", "client authentication failed"),
        );
    };
    if first(&params, "grant_type").as_deref() != Some("authorization_code") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            &OAuthError::new(
                "unsupported_grant_type",
                "only authorization_code is supported",
            ),
        );
    }
    let Some(code) = first(&params, "code") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            &OAuthError::new("invalid_request", "code is required"),
        );
    };
    let result = store.exchange(
        idp.issuer(),
        &client_id,
        &code,
        first(&params, "redirect_uri").as_deref(),
        first(&params, "code_verifier").as_deref(),
    );
    match result {
        Ok(tokens) => no_store(
            Json(json!({
                "access_token": tokens.access_token,
                "token_type": "Bearer",
                "expires_in": 3599,
                "scope": tokens.scope,
                "id_token": tokens.id_token,
            }))
            .into_response(),
        ),
        Err(e) => oauth_error(StatusCode::BAD_REQUEST, &e),
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod http_tests;
