//! What the messages vendor's OAuth service knows: the accounts (one per
//! authorization, plus the default one seeded tokens belong to), the
//! authorization codes it handed out (single use, bound to client, redirect
//! URI and PKCE challenge, expiring), the access tokens the messages API
//! accepts (with expiry) and the live refresh tokens. Pure logic over the
//! `Instant` the caller gives, so the flows are tested without sleeping.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::pkce;
use crate::vendor_common::config::MessagesOAuthConfig;
use crate::vendor_common::ids;

/// Scope of tokens that did not come from an authorization (seeded ones).
pub(crate) const DEFAULT_SCOPE: &str = "user:inference user:profile";

/// Tokens issued by a refresh (or seeded by a test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthTokens {
    pub access_token: String,
    pub refresh_token: String,
    /// Lifetime of the access token, in seconds.
    pub expires_in: u64,
}

/// The account a token belongs to, as the token endpoint reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthAccount {
    pub uuid: String,
    pub email_address: String,
}

/// What the API knows of a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenState {
    Valid,
    Expired,
    Unknown,
}

/// A successful grant: the tokens, whose they are, and their scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    pub tokens: OAuthTokens,
    pub account: OAuthAccount,
    pub scope: String,
}

/// An authorization the authorize page approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Approval {
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub scope: String,
}

/// What a code exchange presents.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Redemption<'a> {
    /// The code, possibly as `code#state` (everything from `#` is ignored).
    pub code: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub code_verifier: &'a str,
}

/// Why a code exchange was refused (`invalid_grant`, with this description).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodeRefusal {
    Unknown,
    Used,
    Expired,
    OtherClient,
    OtherRedirect,
    Verifier,
}

impl CodeRefusal {
    pub fn description(self) -> &'static str {
        match self {
            CodeRefusal::Unknown => "Invalid 'code' in request.",
            CodeRefusal::Used => "Authorization code has already been used.",
            CodeRefusal::Expired => "Authorization code has expired.",
            CodeRefusal::OtherClient => "Authorization code was issued to another client.",
            CodeRefusal::OtherRedirect => "redirect_uri does not match the authorization request.",
            CodeRefusal::Verifier => "Invalid code_verifier.",
        }
    }
}

#[derive(Debug)]
struct Issued {
    expires: Instant,
    account: usize,
}

#[derive(Debug)]
struct RefreshEntry {
    account: usize,
    scope: String,
}

#[derive(Debug)]
struct Code {
    approval: Approval,
    account: usize,
    expires: Instant,
    /// Presented once already (successfully or not).
    used: bool,
    /// The tokens the code was exchanged for; presenting the code again
    /// revokes them (RFC 6749 4.1.2).
    issued: Option<(String, String)>,
}

/// Accounts, codes, access tokens (with expiry) and live refresh tokens.
#[derive(Debug)]
pub(crate) struct OAuthStore {
    accounts: Vec<OAuthAccount>,
    codes: HashMap<String, Code>,
    access: HashMap<String, Issued>,
    refresh: HashMap<String, RefreshEntry>,
    refreshes: u64,
    exchanges: u64,
}

impl Default for OAuthStore {
    fn default() -> Self {
        OAuthStore {
            // Seeded tokens belong to this account (the one the token
            // endpoint always reported before authorizations existed).
            accounts: vec![OAuthAccount {
                uuid: "0b6d3e52-8c1f-4f2e-9a57-3d9e8f1c2a44".to_owned(),
                email_address: "sim-user@example.com".to_owned(),
            }],
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: HashMap::new(),
            refreshes: 0,
            exchanges: 0,
        }
    }
}

/// `now + ttl`, capped rather than overflowing the clock on absurd lifetimes.
fn later(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl)
        .unwrap_or(now + Duration::from_secs(1 << 32))
}

impl OAuthStore {
    /// Issue an access token valid for `ttl` and a new refresh token, for the
    /// default account.
    pub fn issue(&mut self, ttl: Duration, now: Instant) -> OAuthTokens {
        self.issue_for(0, DEFAULT_SCOPE, ttl, now)
    }

    fn issue_for(
        &mut self,
        account: usize,
        scope: &str,
        ttl: Duration,
        now: Instant,
    ) -> OAuthTokens {
        let access_token = format!("sk-ant-oat01-{}", ids::base62(86));
        let refresh_token = format!("sk-ant-ort01-{}", ids::base62(86));
        let expires = later(now, ttl);
        self.access
            .insert(access_token.clone(), Issued { expires, account });
        let scope = scope.to_owned();
        self.refresh
            .insert(refresh_token.clone(), RefreshEntry { account, scope });
        OAuthTokens {
            access_token,
            refresh_token,
            expires_in: ttl.as_secs(),
        }
    }

    fn grant(&self, tokens: OAuthTokens, account: usize, scope: String) -> Grant {
        let account = self
            .accounts
            .get(account)
            .cloned()
            .unwrap_or_else(|| OAuthAccount {
                uuid: String::new(),
                email_address: String::new(),
            });
        Grant {
            tokens,
            account,
            scope,
        }
    }

    /// Register tokens chosen by a test (default account).
    pub fn seed(&mut self, tokens: &OAuthTokens, now: Instant) {
        let ttl = Duration::from_secs(tokens.expires_in);
        let expires = now.checked_add(ttl).unwrap_or(now);
        let account = 0;
        self.access
            .insert(tokens.access_token.clone(), Issued { expires, account });
        let scope = DEFAULT_SCOPE.to_owned();
        self.refresh.insert(
            tokens.refresh_token.clone(),
            RefreshEntry { account, scope },
        );
    }

    /// The refresh grant: new tokens, or `None` for an unknown refresh token.
    #[cfg(test)]
    pub fn refresh(
        &mut self,
        refresh_token: &str,
        config: &MessagesOAuthConfig,
        now: Instant,
    ) -> Option<OAuthTokens> {
        self.refresh_grant(refresh_token, config, now)
            .map(|g| g.tokens)
    }

    /// The refresh grant with the account and scope of the refresh token.
    pub fn refresh_grant(
        &mut self,
        refresh_token: &str,
        config: &MessagesOAuthConfig,
        now: Instant,
    ) -> Option<Grant> {
        let entry = self.refresh.get(refresh_token)?;
        let (account, scope) = (entry.account, entry.scope.clone());
        self.refreshes += 1;
        let mut tokens = self.issue_for(account, &scope, config.access_token_ttl, now);
        if config.rotate_refresh_tokens {
            self.refresh.remove(refresh_token);
        } else {
            self.refresh.remove(&tokens.refresh_token);
            tokens.refresh_token = refresh_token.to_owned();
        }
        Some(self.grant(tokens, account, scope))
    }

    /// The authorize page approved `approval`: a new account, and a code for
    /// it valid for `ttl`.
    pub fn approve(&mut self, approval: Approval, ttl: Duration, now: Instant) -> String {
        let n = self.accounts.len();
        self.accounts.push(OAuthAccount {
            uuid: uuid::Uuid::new_v4().hyphenated().to_string(),
            email_address: format!("sim-user-{n}@example.com"),
        });
        let code = ids::base62(43);
        self.codes.insert(
            code.clone(),
            Code {
                approval,
                account: n,
                expires: later(now, ttl),
                used: false,
                issued: None,
            },
        );
        code
    }

    /// The authorization-code grant: the code must be known, unused,
    /// unexpired, issued to this client for this redirect URI, and the
    /// verifier's S256 must be the challenge. Any redemption uses the code
    /// up; a second one also revokes the tokens of the first.
    pub fn redeem(
        &mut self,
        r: Redemption<'_>,
        ttl: Duration,
        now: Instant,
    ) -> Result<Grant, CodeRefusal> {
        let code = r.code.split('#').next().unwrap_or_default();
        let entry = self.codes.get_mut(code).ok_or(CodeRefusal::Unknown)?;
        if entry.used {
            if let Some((access, refresh)) = entry.issued.take() {
                self.access.remove(&access);
                self.refresh.remove(&refresh);
            }
            return Err(CodeRefusal::Used);
        }
        // Used up whatever the outcome: a code is good for one try.
        entry.used = true;
        if now >= entry.expires {
            return Err(CodeRefusal::Expired);
        }
        let approval = &entry.approval;
        if approval.client_id != r.client_id {
            return Err(CodeRefusal::OtherClient);
        }
        if approval.redirect_uri != r.redirect_uri {
            return Err(CodeRefusal::OtherRedirect);
        }
        if !pkce::verifies(r.code_verifier, &approval.code_challenge) {
            return Err(CodeRefusal::Verifier);
        }
        let (account, scope) = (entry.account, approval.scope.clone());
        let tokens = self.issue_for(account, &scope, ttl, now);
        if let Some(entry) = self.codes.get_mut(code) {
            entry.issued = Some((tokens.access_token.clone(), tokens.refresh_token.clone()));
        }
        self.exchanges += 1;
        Ok(self.grant(tokens, account, scope))
    }

    /// Make every code handed out so far expire now.
    pub fn expire_codes(&mut self, now: Instant) {
        for code in self.codes.values_mut() {
            code.expires = code.expires.min(now);
        }
    }

    pub fn access_state(&self, token: &str, now: Instant) -> TokenState {
        match self.access.get(token) {
            Some(t) if t.expires > now => TokenState::Valid,
            Some(_) => TokenState::Expired,
            None => TokenState::Unknown,
        }
    }

    /// The account of an access or refresh token.
    pub fn account_of(&self, token: &str) -> Option<OAuthAccount> {
        let index = match self.access.get(token) {
            Some(t) => t.account,
            None => self.refresh.get(token)?.account,
        };
        self.accounts.get(index).cloned()
    }

    pub fn refresh_live(&self, refresh_token: &str) -> bool {
        self.refresh.contains_key(refresh_token)
    }

    /// Make every access token issued so far expire at `now`.
    pub fn expire_all(&mut self, now: Instant) {
        for t in self.access.values_mut() {
            t.expires = now;
        }
    }

    /// Successful refresh grants so far.
    pub fn refreshes(&self) -> u64 {
        self.refreshes
    }

    /// Successful code exchanges so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
