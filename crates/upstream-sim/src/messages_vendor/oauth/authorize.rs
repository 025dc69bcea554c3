//! The messages vendor's authorize page, `GET /oauth/authorize` below
//! `/messages_vendor_oauth`: it checks the request (a known client, its
//! registered redirect URI, `response_type=code`, known scopes, a S256 PKCE
//! challenge, a `state`) and, since the simulated user approves at once,
//! redirects to `redirect_uri?code=…&state=…`. A bad request gets a 400 page
//! and no redirect, as the real page shows; a denial (the
//! `deny_authorization` switch) redirects with `error=access_denied`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::store::Approval;
use crate::http::{error_page, found, with_query, Params};
use crate::messages_vendor::MessagesState;
use crate::pkce;
use crate::vendor_common::config::MessagesOAuthConfig;

/// What an authorization request asked for, or why it is refused (fixed
/// text for the page).
fn check(params: &Params, config: &MessagesOAuthConfig) -> Result<Approval, &'static str> {
    let client_id = params.get("client_id").ok_or("Missing client_id.")?;
    if client_id != config.authorize_client_id {
        return Err("Unknown OAuth client.");
    }
    let redirect_uri = params.get("redirect_uri").ok_or("Missing redirect_uri.")?;
    if redirect_uri != config.redirect_uri {
        return Err("The redirect_uri is not registered for this client.");
    }
    if params.get("response_type") != Some("code") {
        return Err("Unsupported response_type: only code is supported.");
    }
    let scope = params.get("scope").ok_or("Missing scope.")?;
    if !scope
        .split_ascii_whitespace()
        .all(|s| config.scopes.iter().any(|known| known == s))
    {
        return Err("Invalid scope.");
    }
    if params.get("code_challenge_method") != Some("S256") {
        return Err("code_challenge_method must be S256.");
    }
    let code_challenge = params
        .get("code_challenge")
        .filter(|c| pkce::is_s256_challenge(c))
        .ok_or("Missing or malformed code_challenge.")?;
    if params.get("state").is_none() {
        return Err("Missing state.");
    }
    Ok(Approval {
        client_id: client_id.to_owned(),
        redirect_uri: redirect_uri.to_owned(),
        code_challenge: code_challenge.to_owned(),
        scope: scope.to_owned(),
    })
}

pub(super) async fn authorize(
    State(shared): State<Arc<MessagesState>>,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let config = shared.vendors.settings().oauth.clone();
    let approval = match check(&params, &config) {
        Ok(a) => a,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, message),
    };
    let state = params.get("state").unwrap_or_default();
    let redirect_uri = approval.redirect_uri.clone();
    let location = if config.deny_authorization {
        with_query(
            &redirect_uri,
            &[
                ("error", "access_denied"),
                ("error_description", "The user denied the request."),
                ("state", state),
            ],
        )
    } else {
        let code = shared
            .oauth()
            .approve(approval, config.code_ttl, Instant::now());
        with_query(&redirect_uri, &[("code", &code), ("state", state)])
    };
    match location {
        Some(location) => found(&location),
        None => error_page(StatusCode::BAD_REQUEST, "The redirect_uri is not valid."),
    }
}
