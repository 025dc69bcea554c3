//! The simulated provider's state: its configuration, which key signs, the
//! authorization codes waiting to be exchanged, and a log of the requests it
//! received. The decisions of `/authorize` and `/token` live here, free of
//! HTTP, so they can be tested directly.

use std::collections::HashMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::config::{IdpConfig, IdpUser, OAuthError};
use super::keys::{KeyPair, Keys};
use super::token::{self, TokenInput};
use crate::ids;
pub use crate::pkce::s256;
use crate::pkce::{is_s256_challenge, is_valid_verifier};

/// One request the provider received, for tests to assert on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpRequest {
    pub method: String,
    /// Path below the issuer, e.g. `/token`.
    pub path: String,
    /// Query parameters (GET) or form fields (POST), in order, decoded.
    pub params: Vec<(String, String)>,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
}

impl IdpRequest {
    /// The first value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A code handed out by `/authorize`, until it is exchanged or expires.
#[derive(Debug, Clone)]
struct IssuedCode {
    client_id: String,
    redirect_uri: String,
    code_challenge: String,
    nonce: Option<String>,
    scope: String,
    user: IdpUser,
    expires: Instant,
}

/// What `/authorize` was asked (its query parameters).
#[derive(Debug, Default, Clone)]
pub(crate) struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
}

/// The answer of `/authorize`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AuthorizeOutcome {
    /// The request cannot be trusted to redirect (unknown client or redirect
    /// URI): shown to the person as an error page, never redirected.
    Refuse(String),
    /// Redirect to `redirect_uri` with these query parameters.
    Redirect {
        redirect_uri: String,
        params: Vec<(&'static str, String)>,
    },
}

/// Successful `/token` answer.
#[derive(Debug)]
pub(crate) struct Tokens {
    pub access_token: String,
    pub id_token: String,
    pub scope: String,
}

/// The state behind one provider.
#[derive(Debug)]
pub(crate) struct IdpStore {
    pub config: IdpConfig,
    keys: Keys,
    /// After a rotation the second key signs and both are published.
    rotated: bool,
    codes: HashMap<String, IssuedCode>,
    log: Vec<IdpRequest>,
}

/// Most requests kept in the log (oldest dropped first).
const LOG_LIMIT: usize = 10_000;

impl IdpStore {
    pub fn new(keys: Keys) -> Self {
        IdpStore {
            config: IdpConfig::default(),
            keys,
            rotated: false,
            codes: HashMap::new(),
            log: Vec::new(),
        }
    }

    pub fn record(&mut self, request: IdpRequest) {
        if self.log.len() >= LOG_LIMIT {
            self.log.remove(0);
        }
        self.log.push(request);
    }

    pub fn requests(&self) -> Vec<IdpRequest> {
        self.log.clone()
    }

    /// Sign with the second key from now on and publish both.
    pub fn rotate_keys(&mut self) {
        self.rotated = true;
    }

    fn active_and_other(&self) -> (&KeyPair, &KeyPair) {
        if self.rotated {
            (&self.keys.second, &self.keys.first)
        } else {
            (&self.keys.first, &self.keys.second)
        }
    }

    /// The published keys, newest first.
    pub fn jwks(&self) -> Value {
        let keys: Vec<Value> = if self.rotated {
            vec![
                self.keys.second.jwk().clone(),
                self.keys.first.jwk().clone(),
            ]
        } else {
            vec![self.keys.first.jwk().clone()]
        };
        serde_json::json!({ "keys": keys })
    }

    /// Sign arbitrary claims with the active key (tests building their own tokens).
    pub fn sign_claims(&self, claims: serde_json::Map<String, Value>) -> String {
        let (active, other) = self.active_and_other();
        token::sign(claims, super::config::Signing::Active, active, other)
    }

    fn redirect_allowed(&self, uri: &str) -> bool {
        let absolute = url::Url::parse(uri)
            .map(|u| matches!(u.scheme(), "http" | "https") && u.fragment().is_none())
            .unwrap_or(false);
        absolute
            && (self.config.redirect_uris.is_empty()
                || self.config.redirect_uris.iter().any(|r| r == uri))
    }

    /// Decide `/authorize`.
    pub fn authorize(&mut self, p: AuthorizeParams) -> AuthorizeOutcome {
        match p.client_id.as_deref() {
            Some(id) if id == self.config.client_id => {}
            _ => return AuthorizeOutcome::Refuse("invalid_client: unknown client_id".into()),
        }
        let redirect_uri = match p.redirect_uri {
            Some(uri) if self.redirect_allowed(&uri) => uri,
            _ => {
                return AuthorizeOutcome::Refuse(
                    "redirect_uri_mismatch: the redirect_uri is not registered for this client"
                        .into(),
                )
            }
        };
        let state = p.state.clone();
        let fail = |error: &str, description: &str| {
            let mut params = vec![
                ("error", error.to_owned()),
                ("error_description", description.to_owned()),
            ];
            if let Some(s) = &state {
                params.push(("state", s.clone()));
            }
            AuthorizeOutcome::Redirect {
                redirect_uri: redirect_uri.clone(),
                params,
            }
        };
        if p.response_type.as_deref() != Some("code") {
            return fail("unsupported_response_type", "response_type must be code");
        }
        let scope = p.scope.unwrap_or_default();
        if !scope.split(' ').any(|s| s == "openid") {
            return fail("invalid_scope", "the scope must include openid");
        }
        let challenge = match (p.code_challenge, p.code_challenge_method.as_deref()) {
            (Some(c), Some("S256")) if is_s256_challenge(&c) => c,
            (None, _) => return fail("invalid_request", "code_challenge is required"),
            (Some(_), Some("S256")) => {
                return fail("invalid_request", "code_challenge is not a S256 challenge")
            }
            _ => return fail("invalid_request", "code_challenge_method must be S256"),
        };
        if let Some(e) = self.config.authorize_error.clone() {
            return fail(&e.error, &e.description);
        }
        let code = ids::token("sim-code-");
        self.codes.insert(
            code.clone(),
            IssuedCode {
                client_id: self.config.client_id.clone(),
                redirect_uri: redirect_uri.clone(),
                code_challenge: challenge,
                nonce: p.nonce,
                scope,
                user: self.config.user.clone(),
                expires: Instant::now() + self.config.code_ttl,
            },
        );
        let mut params = vec![("code", code)];
        if let Some(s) = state {
            params.push(("state", s));
        }
        AuthorizeOutcome::Redirect {
            redirect_uri,
            params,
        }
    }

    /// Whether this client id and secret are the registered client's.
    pub fn client_authenticates(&self, client_id: &str, secret: &str) -> bool {
        client_id == self.config.client_id && secret == self.config.client_secret
    }

    /// Exchange a code (the client is already authenticated as `client_id`).
    pub fn exchange(
        &mut self,
        issuer: &str,
        client_id: &str,
        code: &str,
        redirect_uri: Option<&str>,
        code_verifier: Option<&str>,
    ) -> Result<Tokens, OAuthError> {
        if let Some(e) = self.config.token_error.clone() {
            return Err(e);
        }
        let invalid = |d: &str| OAuthError::new("invalid_grant", d);
        // A code is single use: taken out whatever happens next.
        let issued = self
            .codes
            .remove(code)
            .ok_or_else(|| invalid("the authorization code is unknown or was already used"))?;
        if Instant::now() > issued.expires {
            return Err(invalid("the authorization code has expired"));
        }
        if issued.client_id != client_id {
            return Err(invalid("the code was issued to another client"));
        }
        if redirect_uri != Some(issued.redirect_uri.as_str()) {
            return Err(invalid(
                "redirect_uri does not match the authorization request",
            ));
        }
        let verifier = code_verifier.ok_or_else(|| invalid("code_verifier is required"))?;
        if !is_valid_verifier(verifier) || s256(verifier) != issued.code_challenge {
            return Err(invalid("code_verifier does not match the code_challenge"));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let tweaks = &self.config.tweaks;
        let claims = token::claims(&TokenInput {
            issuer,
            client_id,
            user: &issued.user,
            nonce: issued.nonce.as_deref(),
            now,
            tweaks,
        });
        let (active, other) = self.active_and_other();
        let id_token = token::sign(claims, tweaks.signing, active, other);
        Ok(Tokens {
            access_token: ids::token("sim-idp-at-"),
            id_token,
            scope: issued.scope,
        })
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
