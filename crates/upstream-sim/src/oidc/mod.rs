//! The simulated SSO OIDC service: `POST /client/register` (RegisterClient),
//! `POST /device_authorization` (StartDeviceAuthorization), `POST /token`
//! (CreateToken, device-code and refresh-token grants), with camelCase JSON
//! bodies and OAuth-style errors as the real service.
//!
//! One addition that the real service keeps on another host: `GET /device?user_code=…`
//! approves a pending device authorization (the `verificationUriComplete` points
//! there), so a person can finish a login against the simulator in a browser.

pub mod config;
pub mod error;
pub mod store;

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::recorder::ReceivedBody;
use crate::state::lock;

use config::OidcConfig;
use error::{OidcError, OidcErrorCode};
use store::{Now, OidcStore, GRANT_AUTHORIZATION_CODE, GRANT_DEVICE_CODE, GRANT_REFRESH_TOKEN};

/// The OIDC service's state: its store (also read by the primary API, which
/// accepts the access tokens issued here) and its own URL.
#[derive(Debug)]
pub(crate) struct OidcState {
    store: Mutex<OidcStore>,
    /// Set once the OIDC listener is bound (its URL appears in OIDC answers).
    url: OnceLock<String>,
}

impl OidcState {
    pub fn new(config: OidcConfig) -> Self {
        OidcState {
            store: Mutex::new(OidcStore::new(config)),
            url: OnceLock::new(),
        }
    }

    pub fn store(&self) -> MutexGuard<'_, OidcStore> {
        lock(&self.store)
    }

    pub fn set_url(&self, url: String) {
        // Set once at start; a second call is impossible by construction.
        let _ = self.url.set(url);
    }

    pub fn url(&self) -> &str {
        self.url.get().map(String::as_str).unwrap_or("")
    }
}

/// Routes of the OIDC listener.
pub(crate) fn router(shared: Arc<OidcState>) -> Router {
    Router::new()
        .route("/client/register", post(register_client))
        .route("/device_authorization", post(device_authorization))
        .route("/token", post(create_token))
        .route("/device", get(approve_in_browser))
        .with_state(shared)
}

/// The JSON object body, or `invalid_request`.
fn object(body: &ReceivedBody) -> Result<&serde_json::Map<String, Value>, OidcError> {
    body.json
        .as_deref()
        .and_then(Value::as_object)
        .ok_or_else(|| {
            OidcError::new(
                OidcErrorCode::InvalidRequest,
                "The request body must be a JSON object.",
            )
        })
}

/// A required non-empty string field, or `invalid_request` naming it.
fn required<'a>(obj: &'a serde_json::Map<String, Value>, name: &str) -> Result<&'a str, OidcError> {
    match obj.get(name).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(OidcError::new(
            OidcErrorCode::InvalidRequest,
            format!("Missing required parameter: {name}"),
        )),
    }
}

/// An optional array of strings, or `invalid_request` when it is something else.
fn string_list<'a>(
    obj: &'a serde_json::Map<String, Value>,
    name: &str,
) -> Result<Vec<&'a str>, OidcError> {
    let invalid = || {
        OidcError::new(
            OidcErrorCode::InvalidRequest,
            format!("{name} must be a list of strings"),
        )
    };
    match obj.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().ok_or_else(invalid))
            .collect(),
        Some(_) => Err(invalid()),
    }
}

async fn register_client(
    State(shared): State<Arc<OidcState>>,
    Extension(body): Extension<ReceivedBody>,
) -> Result<Response, OidcError> {
    let obj = object(&body)?;
    required(obj, "clientName")?;
    let client_type = required(obj, "clientType")?;
    if client_type != "public" {
        return Err(OidcError::new(
            OidcErrorCode::InvalidClientMetadata,
            "clientType must be public",
        ));
    }
    string_list(obj, "scopes")?;
    for grant in string_list(obj, "grantTypes")? {
        if ![
            GRANT_DEVICE_CODE,
            GRANT_REFRESH_TOKEN,
            GRANT_AUTHORIZATION_CODE,
        ]
        .contains(&grant)
        {
            return Err(OidcError::new(
                OidcErrorCode::UnsupportedGrantType,
                format!("Unsupported grant type: {grant}"),
            ));
        }
    }
    let reg = shared.store().register(Now::current());
    let base = shared.url();
    Ok(Json(json!({
        "clientId": reg.client_id,
        "clientSecret": reg.client_secret,
        "clientIdIssuedAt": reg.issued_at,
        "clientSecretExpiresAt": reg.secret_expires_at,
        "authorizationEndpoint": format!("{base}/authorize"),
        "tokenEndpoint": format!("{base}/token"),
    }))
    .into_response())
}

async fn device_authorization(
    State(shared): State<Arc<OidcState>>,
    Extension(body): Extension<ReceivedBody>,
) -> Result<Response, OidcError> {
    let obj = object(&body)?;
    let client_id = required(obj, "clientId")?;
    let secret = required(obj, "clientSecret")?;
    required(obj, "startUrl")?;
    let dev = shared
        .store()
        .start_device(client_id, secret, Now::current())?;
    let verification_uri = format!("{}/device", shared.url());
    Ok(Json(json!({
        "deviceCode": dev.device_code,
        "userCode": dev.user_code,
        "verificationUri": verification_uri,
        "verificationUriComplete": format!("{verification_uri}?user_code={}", dev.user_code),
        "expiresIn": dev.expires_in,
        "interval": dev.interval,
    }))
    .into_response())
}

async fn create_token(
    State(shared): State<Arc<OidcState>>,
    Extension(body): Extension<ReceivedBody>,
) -> Result<Response, OidcError> {
    let obj = object(&body)?;
    let grant = required(obj, "grantType")?;
    let client_id = required(obj, "clientId")?;
    let secret = required(obj, "clientSecret")?;
    let now = Now::current();
    let tokens = match grant {
        GRANT_DEVICE_CODE => {
            let device_code = required(obj, "deviceCode")?;
            shared
                .store()
                .poll_device(client_id, secret, device_code, now)?
        }
        GRANT_REFRESH_TOKEN => {
            let refresh_token = required(obj, "refreshToken")?;
            shared
                .store()
                .refresh(client_id, secret, refresh_token, now)?
        }
        other => {
            return Err(OidcError::new(
                OidcErrorCode::UnsupportedGrantType,
                format!("Unsupported grant type: {other}"),
            ))
        }
    };
    let mut out = serde_json::Map::new();
    out.insert("accessToken".into(), tokens.access_token.into());
    if let Some(refresh) = tokens.refresh_token {
        out.insert("refreshToken".into(), refresh.into());
    }
    out.insert("expiresIn".into(), tokens.expires_in.into());
    out.insert("tokenType".into(), "Bearer".into());
    Ok(Json(Value::Object(out)).into_response())
}

#[derive(Deserialize)]
struct ApproveQuery {
    user_code: Option<String>,
}

async fn approve_in_browser(
    State(shared): State<Arc<OidcState>>,
    Query(q): Query<ApproveQuery>,
) -> Response {
    let Some(code) = q.user_code else {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            "upstream-sim: add ?user_code=XXXX-XXXX to approve a device login\n",
        )
            .into_response();
    };
    if shared.store().decide(&code, true) {
        format!("upstream-sim: device login {code} approved\n").into_response()
    } else {
        (
            axum::http::StatusCode::NOT_FOUND,
            format!("upstream-sim: no pending device login with code {code}\n"),
        )
            .into_response()
    }
}
