//! The state of the simulated SSO OIDC service: registered clients, device
//! authorizations, refresh tokens and the access tokens the API side accepts.
//!
//! Pure logic over a [`Now`] given by the caller, so the flows can be tested
//! without sleeping. The handlers in `oidc::mod` wrap it in a mutex.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::config::OidcConfig;
use crate::ids;

use super::error::{OidcError, OidcErrorCode};

/// The device-code grant type.
pub const GRANT_DEVICE_CODE: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// The refresh-token grant type.
pub const GRANT_REFRESH_TOKEN: &str = "refresh_token";
/// The authorization-code grant type (accepted at registration only).
pub const GRANT_AUTHORIZATION_CODE: &str = "authorization_code";

/// The time of one operation: a monotonic instant for lifetimes and the epoch
/// seconds the wire shows.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub instant: Instant,
    pub epoch_secs: u64,
}

impl Now {
    pub fn current() -> Self {
        let epoch_secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Now {
            instant: Instant::now(),
            epoch_secs,
        }
    }

    fn after(self, d: Duration) -> Self {
        Now {
            instant: later(self.instant, d),
            epoch_secs: self.epoch_secs.saturating_add(d.as_secs()),
        }
    }
}

/// `now + d`, capped far in the future instead of overflowing on absurd lifetimes.
fn later(now: Instant, d: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    now.checked_add(d.min(FAR))
        .or_else(|| now.checked_add(Duration::from_secs(24 * 3600)))
        .unwrap_or(now)
}

/// Credentials a test can hand the gateway as if a device login had happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeededCredentials {
    pub client_id: String,
    pub client_secret: String,
    pub refresh_token: String,
}

/// A successful RegisterClient.
#[derive(Debug, Clone)]
pub struct Registration {
    pub client_id: String,
    pub client_secret: String,
    pub issued_at: u64,
    pub secret_expires_at: u64,
}

/// A successful StartDeviceAuthorization.
#[derive(Debug, Clone)]
pub struct DeviceStart {
    pub device_code: String,
    pub user_code: String,
    pub expires_in: u64,
    pub interval: u64,
}

/// A successful CreateToken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub access_token: String,
    /// Present for the device-code grant, and for refreshes when rotation is on.
    pub refresh_token: Option<String>,
    pub expires_in: u64,
}

#[derive(Debug)]
struct Client {
    secret: String,
    secret_expires_at: u64,
}

#[derive(Debug)]
struct Device {
    client_id: String,
    user_code: String,
    expires_at: Instant,
    /// Polls that reached the pending/approved decision.
    polls: u32,
    slow_down_sent: bool,
    last_poll: Option<Instant>,
    /// `Some(true)` approved, `Some(false)` denied, by the handle or `/device`.
    decision: Option<bool>,
    consumed: bool,
}

#[derive(Debug)]
struct AccessToken {
    expires_at: Instant,
    revoked: bool,
}

/// Above this many access tokens, dead ones are swept on the next issue.
const ACCESS_SWEEP_THRESHOLD: usize = 4096;

/// Everything the OIDC side knows.
#[derive(Debug)]
pub struct OidcStore {
    pub config: OidcConfig,
    clients: HashMap<String, Client>,
    devices: HashMap<String, Device>,
    refresh_tokens: HashMap<String, String>,
    access_tokens: HashMap<String, AccessToken>,
}

impl OidcStore {
    pub fn new(config: OidcConfig) -> Self {
        OidcStore {
            config,
            clients: HashMap::new(),
            devices: HashMap::new(),
            refresh_tokens: HashMap::new(),
            access_tokens: HashMap::new(),
        }
    }

    /// RegisterClient: a new client id and secret.
    pub fn register(&mut self, now: Now) -> Registration {
        let client_id = ids::client_id();
        let client_secret = ids::token("sim-secret-");
        let secret_expires_at = now.after(self.config.client_secret_ttl).epoch_secs;
        self.clients.insert(
            client_id.clone(),
            Client {
                secret: client_secret.clone(),
                secret_expires_at,
            },
        );
        Registration {
            client_id,
            client_secret,
            issued_at: now.epoch_secs,
            secret_expires_at,
        }
    }

    fn authenticate(&self, client_id: &str, secret: &str, now: Now) -> Result<(), OidcError> {
        match self.clients.get(client_id) {
            Some(c) if c.secret == secret && now.epoch_secs < c.secret_expires_at => Ok(()),
            Some(c) if c.secret == secret => Err(OidcError::new(
                OidcErrorCode::InvalidClient,
                "The client secret has expired.",
            )),
            _ => Err(OidcError::new(
                OidcErrorCode::InvalidClient,
                "Invalid client id or client secret.",
            )),
        }
    }

    /// StartDeviceAuthorization for an authenticated client.
    pub fn start_device(
        &mut self,
        client_id: &str,
        secret: &str,
        now: Now,
    ) -> Result<DeviceStart, OidcError> {
        self.authenticate(client_id, secret, now)?;
        let device_code = ids::token("sim-device-");
        let user_code = ids::user_code();
        self.devices.insert(
            device_code.clone(),
            Device {
                client_id: client_id.to_owned(),
                user_code: user_code.clone(),
                expires_at: later(now.instant, self.config.device_code_ttl),
                polls: 0,
                slow_down_sent: false,
                last_poll: None,
                decision: None,
                consumed: false,
            },
        );
        Ok(DeviceStart {
            device_code,
            user_code,
            expires_in: self.config.device_code_ttl.as_secs(),
            interval: self.config.interval_secs,
        })
    }

    /// Approve (`true`) or deny (`false`) the device authorization with this user code.
    /// Returns whether a pending authorization had that code.
    pub fn decide(&mut self, user_code: &str, approve: bool) -> bool {
        let wanted = user_code.trim().to_ascii_uppercase();
        let mut found = false;
        for d in self.devices.values_mut() {
            if d.user_code == wanted && !d.consumed {
                d.decision = Some(approve);
                found = true;
            }
        }
        found
    }

    /// CreateToken with the device-code grant.
    pub fn poll_device(
        &mut self,
        client_id: &str,
        secret: &str,
        device_code: &str,
        now: Now,
    ) -> Result<Tokens, OidcError> {
        self.authenticate(client_id, secret, now)?;
        let config = &self.config;
        let Some(device) = self
            .devices
            .get_mut(device_code)
            .filter(|d| d.client_id == client_id)
        else {
            return Err(OidcError::new(
                OidcErrorCode::InvalidGrant,
                "Invalid device code provided.",
            ));
        };
        if device.consumed {
            return Err(OidcError::new(
                OidcErrorCode::InvalidGrant,
                "The device code has already been used.",
            ));
        }
        if now.instant >= device.expires_at {
            return Err(OidcError::new(
                OidcErrorCode::ExpiredToken,
                "The device code has expired.",
            ));
        }
        if config.slow_down_once && !device.slow_down_sent {
            device.slow_down_sent = true;
            device.last_poll = Some(now.instant);
            return Err(slow_down());
        }
        let interval = Duration::from_secs(config.interval_secs);
        let too_fast = device
            .last_poll
            .is_some_and(|last| now.instant.saturating_duration_since(last) < interval);
        device.last_poll = Some(now.instant);
        if config.enforce_interval && too_fast {
            return Err(slow_down());
        }
        device.polls += 1;
        let decided =
            device.decision.is_some() || config.approve_after.is_some_and(|n| device.polls > n);
        if !decided {
            return Err(OidcError::new(
                OidcErrorCode::AuthorizationPending,
                "Authorization is still pending.",
            ));
        }
        device.consumed = true;
        let approved = device.decision.unwrap_or(!config.deny);
        if !approved {
            return Err(OidcError::new(
                OidcErrorCode::AccessDenied,
                "The user denied the authorization request.",
            ));
        }
        let refresh = ids::token("aor-sim-");
        self.refresh_tokens
            .insert(refresh.clone(), client_id.to_owned());
        let access_token = self.issue_access_token(now);
        Ok(Tokens {
            access_token,
            refresh_token: Some(refresh),
            expires_in: self.config.access_token_ttl.as_secs(),
        })
    }

    /// CreateToken with the refresh-token grant.
    pub fn refresh(
        &mut self,
        client_id: &str,
        secret: &str,
        refresh_token: &str,
        now: Now,
    ) -> Result<Tokens, OidcError> {
        self.authenticate(client_id, secret, now)?;
        if self.config.reject_refresh {
            return Err(invalid_refresh());
        }
        if self.refresh_tokens.get(refresh_token).map(String::as_str) != Some(client_id) {
            return Err(invalid_refresh());
        }
        let rotated = if self.config.rotate_refresh_tokens {
            self.refresh_tokens.remove(refresh_token);
            let fresh = ids::token("aor-sim-");
            self.refresh_tokens
                .insert(fresh.clone(), client_id.to_owned());
            Some(fresh)
        } else {
            None
        };
        let access_token = self.issue_access_token(now);
        Ok(Tokens {
            access_token,
            refresh_token: rotated,
            expires_in: self.config.access_token_ttl.as_secs(),
        })
    }

    /// Mint an access token the API side accepts, valid for `access_token_ttl`.
    pub fn issue_access_token(&mut self, now: Now) -> String {
        if self.access_tokens.len() >= ACCESS_SWEEP_THRESHOLD {
            self.access_tokens
                .retain(|_, t| !t.revoked && t.expires_at > now.instant);
        }
        let token = ids::token("aoa-sim-");
        self.access_tokens.insert(
            token.clone(),
            AccessToken {
                expires_at: later(now.instant, self.config.access_token_ttl),
                revoked: false,
            },
        );
        token
    }

    /// Whether the API side accepts this access token now.
    pub fn access_token_valid(&self, token: &str, now: Instant) -> bool {
        self.access_tokens
            .get(token)
            .is_some_and(|t| !t.revoked && now < t.expires_at)
    }

    /// Revoke every access token issued so far.
    pub fn revoke_access_tokens(&mut self) {
        for t in self.access_tokens.values_mut() {
            t.revoked = true;
        }
    }

    /// Make every access token issued so far expire now.
    pub fn expire_access_tokens(&mut self, now: Instant) {
        for t in self.access_tokens.values_mut() {
            t.expires_at = t.expires_at.min(now);
        }
    }

    /// Register a client with the given secret and a refresh token for it.
    pub fn seed(&mut self, creds: &SeededCredentials, now: Now) {
        self.clients.insert(
            creds.client_id.clone(),
            Client {
                secret: creds.client_secret.clone(),
                secret_expires_at: now.after(self.config.client_secret_ttl).epoch_secs,
            },
        );
        self.refresh_tokens
            .insert(creds.refresh_token.clone(), creds.client_id.clone());
    }

    /// Whether a refresh token is currently live (not rotated away).
    pub fn refresh_token_live(&self, token: &str) -> bool {
        self.refresh_tokens.contains_key(token)
    }
}

fn slow_down() -> OidcError {
    OidcError::new(OidcErrorCode::SlowDown, "Client is polling too quickly.")
}

fn invalid_refresh() -> OidcError {
    OidcError::new(
        OidcErrorCode::InvalidGrant,
        "Invalid refresh token provided.",
    )
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
