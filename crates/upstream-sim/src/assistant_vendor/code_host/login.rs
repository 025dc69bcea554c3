//! The code host's login endpoints, as the real ones answer:
//!
//! - `POST /login/device/code` (`client_id`, `scope`; JSON or form): a
//!   device code, a user code, `verification_uri`, `expires_in`, `interval`;
//! - `POST /login/oauth/access_token` (JSON or form): the device grant
//!   (`grant_type=urn:ietf:params:oauth:grant-type:device_code`, `client_id`,
//!   `device_code`), answered HTTP 200 with `{"error":"authorization_pending"}`
//!   until approved, `slow_down` (with the raised `interval`) when polled
//!   sooner than the interval, `expired_token`, `access_denied`, then
//!   `{access_token: "gho_…", token_type: "bearer", scope}`; and the web
//!   flow's code exchange (`client_id`, `client_secret`, `code`, optional
//!   `redirect_uri`) for the configured OAuth app, refused with
//!   `incorrect_client_credentials`, `bad_verification_code` or
//!   `redirect_uri_mismatch` (also HTTP 200);
//! - `GET /login/oauth/authorize` (`client_id`, `redirect_uri`, `scope`,
//!   `state`): the approving user is a new user; 302 to
//!   `redirect_uri?code=…&state=…`, or `error=access_denied` with the deny
//!   switch; an unknown client gets a 404 page, a foreign redirect URI a 400
//!   page, neither redirects;
//! - `GET /login/device`: the page a person types the user code into;
//!   `?user_code=XXXX-XXXX` approves that login.
//!
//! Answers are JSON when the request's `Accept` names JSON, form-encoded
//! otherwise, as the code host does.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Map, Value};

use super::super::{AssistantState, CODE_HOST_PREFIX};
use super::store::{CodeHostLogin, DeviceRefusal};
use crate::http::{error_page, found, header_str, with_query, Params};
use crate::recorder::{fields, ReceivedBody};
use crate::vendor_common::config::CodeHostConfig;

/// The device grant's `grant_type`.
pub const GRANT_DEVICE_CODE: &str = "urn:ietf:params:oauth:grant-type:device_code";

const ERROR_URI: &str = "https://docs.github.com/developers/apps/authorizing-oauth-apps";

/// An answer of the login endpoints: JSON when `Accept` names it, else
/// form-encoded.
fn reply(headers: &HeaderMap, status: StatusCode, body: Map<String, Value>) -> Response {
    let json = header_str(headers, header::ACCEPT.as_str()).is_some_and(|a| a.contains("json"));
    if json {
        return (status, Json(Value::Object(body))).into_response();
    }
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &body {
        match v {
            Value::String(s) => form.append_pair(k, s),
            other => form.append_pair(k, &other.to_string()),
        };
    }
    let content_type = HeaderValue::from_static("application/x-www-form-urlencoded; charset=utf-8");
    (
        status,
        [(header::CONTENT_TYPE, content_type)],
        form.finish(),
    )
        .into_response()
}

fn error_body(error: &str, description: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("error".into(), error.into());
    body.insert("error_description".into(), description.into());
    body.insert("error_uri".into(), ERROR_URI.into());
    body
}

fn token_body(login: &CodeHostLogin) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("access_token".into(), login.access_token.clone().into());
    body.insert("token_type".into(), "bearer".into());
    body.insert("scope".into(), login.scope.clone().into());
    body
}

/// Whether the device flow knows this client (the public one, or the app).
fn device_client(config: &CodeHostConfig, client_id: &str) -> bool {
    client_id == config.device_client_id || client_id == config.oauth_client_id
}

pub(super) async fn device_code(
    State(shared): State<Arc<AssistantState>>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    let fields = fields(&body).unwrap_or_default();
    let config = shared.vendors.settings().code_host.clone();
    let client_id = fields.get("client_id").map(String::as_str).unwrap_or("");
    if !device_client(&config, client_id) {
        let body = error_body(
            "incorrect_client_credentials",
            "The client_id and/or client_secret passed are incorrect.",
        );
        return reply(&headers, StatusCode::BAD_REQUEST, body);
    }
    let scope = fields.get("scope").map(String::as_str).unwrap_or("");
    let dev = shared
        .code_host()
        .start_device(client_id, scope, &config, Instant::now());
    let verification_uri = format!(
        "{}{CODE_HOST_PREFIX}/login/device",
        shared.vendors.api_base()
    );
    let mut out = Map::new();
    out.insert("device_code".into(), dev.device_code.into());
    out.insert("user_code".into(), dev.user_code.into());
    out.insert("verification_uri".into(), verification_uri.into());
    out.insert("expires_in".into(), dev.expires_in.into());
    out.insert("interval".into(), dev.interval.into());
    reply(&headers, StatusCode::OK, out)
}

pub(super) async fn access_token(
    State(shared): State<Arc<AssistantState>>,
    headers: HeaderMap,
    Extension(body): Extension<ReceivedBody>,
) -> Response {
    let fields = fields(&body).unwrap_or_default();
    let field = |name: &str| {
        fields
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let config = shared.vendors.settings().code_host.clone();
    let client_id = field("client_id").unwrap_or("");
    let now = Instant::now();
    let body = match field("grant_type") {
        Some(GRANT_DEVICE_CODE) => {
            if !device_client(&config, client_id) {
                let e = DeviceRefusal::WrongClient;
                return reply(
                    &headers,
                    StatusCode::OK,
                    error_body(e.error(), e.description()),
                );
            }
            let device_code = field("device_code").unwrap_or("");
            match shared
                .code_host()
                .poll_device(device_code, client_id, &config, now)
            {
                Ok(login) => token_body(&login),
                Err(e) => {
                    let mut body = error_body(e.error(), e.description());
                    if let DeviceRefusal::SlowDown(interval) = e {
                        body.insert("interval".into(), interval.into());
                    }
                    body
                }
            }
        }
        None | Some("authorization_code") => {
            let secret_ok = field("client_secret") == Some(config.oauth_client_secret.as_str());
            if client_id != config.oauth_client_id || !secret_ok {
                error_body(
                    "incorrect_client_credentials",
                    "The client_id and/or client_secret passed are incorrect.",
                )
            } else {
                let code = field("code").unwrap_or("");
                let redeemed =
                    shared
                        .code_host()
                        .redeem_web(code, client_id, field("redirect_uri"), now);
                match redeemed {
                    Ok(login) => token_body(&login),
                    Err(e) => error_body(e.error(), e.description()),
                }
            }
        }
        Some(_) => error_body("unsupported_grant_type", "The grant type is not supported."),
    };
    reply(&headers, StatusCode::OK, body)
}

/// Whether `redirect_uri` is the app's callback or below it: same scheme,
/// host and port, and a path under the callback's.
fn under_callback(redirect_uri: &str, callback: &str) -> bool {
    let (Ok(r), Ok(c)) = (url::Url::parse(redirect_uri), url::Url::parse(callback)) else {
        return false;
    };
    let base = c.path().trim_end_matches('/');
    let path = r.path();
    r.scheme() == c.scheme()
        && r.host_str() == c.host_str()
        && r.port_or_known_default() == c.port_or_known_default()
        && (path == base || path.starts_with(&format!("{base}/")) || base.is_empty())
}

pub(super) async fn authorize(
    State(shared): State<Arc<AssistantState>>,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let config = shared.vendors.settings().code_host.clone();
    let client_id = params.get("client_id").unwrap_or("");
    if client_id != config.oauth_client_id {
        return error_page(StatusCode::NOT_FOUND, "Not Found: no such application.");
    }
    let redirect_uri = match (params.get("redirect_uri"), &config.oauth_callback_url) {
        (Some(r), Some(cb)) if under_callback(r, cb) => r.to_owned(),
        (Some(_), Some(_)) => {
            return error_page(
                StatusCode::BAD_REQUEST,
                "The redirect_uri is not associated with this application.",
            )
        }
        (Some(r), None) if url::Url::parse(r).is_ok() => r.to_owned(),
        (None, Some(cb)) => cb.clone(),
        (_, None) => {
            return error_page(
                StatusCode::BAD_REQUEST,
                "The redirect_uri is missing or not valid.",
            )
        }
    };
    let state = params.get("state");
    let scope = params.get("scope").unwrap_or("");
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let code;
    if config.deny {
        pairs.push(("error", "access_denied"));
        pairs.push((
            "error_description",
            "The user has denied your application access.",
        ));
        pairs.push(("error_uri", ERROR_URI));
    } else {
        code = shared.code_host().approve_web(
            client_id,
            &redirect_uri,
            scope,
            config.code_ttl,
            Instant::now(),
        );
        pairs.push(("code", &code));
    }
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    match with_query(&redirect_uri, &pairs) {
        Some(location) => found(&location),
        None => error_page(StatusCode::BAD_REQUEST, "The redirect_uri is not valid."),
    }
}

/// The page a person types the user code into; `?user_code=` approves.
pub(super) async fn device_page(
    State(shared): State<Arc<AssistantState>>,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let Some(code) = params.get("user_code") else {
        return Html(
            "<!doctype html>\n<html><head><title>Device activation</title></head><body>\
             <h1>Device activation</h1><form><input name=\"user_code\">\
             <button>Continue</button></form></body></html>\n",
        )
        .into_response();
    };
    if shared.code_host().decide(code, true) {
        Html("<!doctype html>\n<p>Your device is now connected.</p>\n").into_response()
    } else {
        error_page(
            StatusCode::NOT_FOUND,
            "No pending device login has this code.",
        )
    }
}
