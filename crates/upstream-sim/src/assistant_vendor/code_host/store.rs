//! What the simulated code host knows: its users (one per approved login,
//! each with a distinct login; user 0 owns the configured token), the
//! tokens it issued, the pending device codes and the web flow's
//! authorization codes. Pure logic over the `Instant` the caller gives.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::ids;
use crate::vendor_common::config::CodeHostConfig;

/// A code-host user, as `GET /user` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeHostUser {
    pub login: String,
    pub id: u64,
    pub name: String,
    pub email: String,
}

/// A token the code host issued and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeHostLogin {
    /// `gho_…`, accepted by `GET /user` and by the token exchange.
    pub access_token: String,
    pub scope: String,
    pub user: CodeHostUser,
}

/// A started device login (`POST /login/device/code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeviceStart {
    pub device_code: String,
    pub user_code: String,
    pub expires_in: u64,
    pub interval: u64,
}

/// Why a device poll did not give a token: the `error` of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceRefusal {
    Pending,
    /// Polled too soon; the device code's interval is now this many seconds.
    SlowDown(u64),
    Expired,
    Denied,
    UnknownCode,
    WrongClient,
}

impl DeviceRefusal {
    pub fn error(self) -> &'static str {
        match self {
            DeviceRefusal::Pending => "authorization_pending",
            DeviceRefusal::SlowDown(_) => "slow_down",
            DeviceRefusal::Expired => "expired_token",
            DeviceRefusal::Denied => "access_denied",
            DeviceRefusal::UnknownCode => "incorrect_device_code",
            DeviceRefusal::WrongClient => "incorrect_client_credentials",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            DeviceRefusal::Pending => "The authorization request is still pending.",
            DeviceRefusal::SlowDown(_) => "Too many requests have been made in the same timeframe.",
            DeviceRefusal::Expired => "The device code has expired.",
            DeviceRefusal::Denied => "The authorization request was denied.",
            DeviceRefusal::UnknownCode => "The device_code provided is not valid.",
            DeviceRefusal::WrongClient => {
                "The client_id and/or client_secret passed are incorrect."
            }
        }
    }
}

/// Why a web-flow code exchange was refused: the `error` of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodeRefusal {
    BadCode,
    WrongClient,
    RedirectMismatch,
}

impl CodeRefusal {
    pub fn error(self) -> &'static str {
        match self {
            CodeRefusal::BadCode => "bad_verification_code",
            CodeRefusal::WrongClient => "incorrect_client_credentials",
            CodeRefusal::RedirectMismatch => "redirect_uri_mismatch",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            CodeRefusal::BadCode => "The code passed is incorrect or expired.",
            CodeRefusal::WrongClient => "The client_id and/or client_secret passed are incorrect.",
            CodeRefusal::RedirectMismatch => {
                "The redirect_uri MUST match the registered callback URL for this application."
            }
        }
    }
}

#[derive(Debug)]
struct Device {
    client_id: String,
    user_code: String,
    scope: String,
    expires: Instant,
    interval: u64,
    last_poll: Option<Instant>,
    polls: u32,
    /// `Some(true)` approved, `Some(false)` denied (handle or browser).
    decision: Option<bool>,
    consumed: bool,
}

#[derive(Debug)]
struct WebCode {
    client_id: String,
    redirect_uri: String,
    scope: String,
    user: usize,
    expires: Instant,
    used: bool,
}

#[derive(Debug)]
struct TokenEntry {
    user: usize,
    scope: String,
}

/// Users, tokens, device codes and web-flow codes.
#[derive(Debug)]
pub(crate) struct CodeHostStore {
    users: Vec<CodeHostUser>,
    tokens: HashMap<String, TokenEntry>,
    devices: HashMap<String, Device>,
    codes: HashMap<String, WebCode>,
}

impl Default for CodeHostStore {
    fn default() -> Self {
        CodeHostStore {
            // The owner of the configured token (`DEFAULT_GITHUB_TOKEN`).
            users: vec![user(0)],
            tokens: HashMap::new(),
            devices: HashMap::new(),
            codes: HashMap::new(),
        }
    }
}

/// User `n`: `sim-user` for the first, `sim-user-<n>` after.
fn user(n: usize) -> CodeHostUser {
    let login = match n {
        0 => "sim-user".to_owned(),
        n => format!("sim-user-{n}"),
    };
    CodeHostUser {
        id: 1_000_001 + n as u64,
        name: format!("Sim User {n}"),
        email: format!("{login}@example.com"),
        login,
    }
}

/// `now + d`, capped rather than overflowing the clock.
fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .unwrap_or(now + Duration::from_secs(1 << 32))
}

impl CodeHostStore {
    /// A new user (a person who approved a login).
    fn new_user(&mut self) -> usize {
        let n = self.users.len();
        self.users.push(user(n));
        n
    }

    /// A new `gho_` token of `user`.
    fn issue(&mut self, user: usize, scope: &str) -> CodeHostLogin {
        let access_token = format!("gho_{}", ids::base62(36));
        let scope = scope.to_owned();
        self.tokens.insert(
            access_token.clone(),
            TokenEntry {
                user,
                scope: scope.clone(),
            },
        );
        CodeHostLogin {
            access_token,
            scope,
            user: self.users[user].clone(),
        }
    }

    /// A new user signed in with `scope`, as after a login (test seeding).
    pub fn seed_login(&mut self, scope: &str) -> CodeHostLogin {
        let user = self.new_user();
        self.issue(user, scope)
    }

    /// The user of a token this host issued, and the token's scope.
    pub fn user_of(&self, token: &str) -> Option<(CodeHostUser, String)> {
        let entry = self.tokens.get(token)?;
        let user = self.users.get(entry.user)?.clone();
        Some((user, entry.scope.clone()))
    }

    /// The owner of the configured token.
    pub fn default_user(&self) -> CodeHostUser {
        self.users[0].clone()
    }

    /// `POST /login/device/code` for a known client.
    pub fn start_device(
        &mut self,
        client_id: &str,
        scope: &str,
        config: &CodeHostConfig,
        now: Instant,
    ) -> DeviceStart {
        let device_code = ids::token("").chars().take(40).collect::<String>();
        let user_code = ids::user_code();
        self.devices.insert(
            device_code.clone(),
            Device {
                client_id: client_id.to_owned(),
                user_code: user_code.clone(),
                scope: scope.to_owned(),
                expires: later(now, config.device_code_ttl),
                interval: config.interval_secs,
                last_poll: None,
                polls: 0,
                decision: None,
                consumed: false,
            },
        );
        DeviceStart {
            device_code,
            user_code,
            expires_in: config.device_code_ttl.as_secs(),
            interval: config.interval_secs,
        }
    }

    /// The pending device code named by `code`: its device code, or its user
    /// code (case and dash insensitive, as people type it).
    fn device_mut(&mut self, code: &str) -> Option<&mut Device> {
        let typed: String = code
            .chars()
            .filter(|c| *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if self.devices.contains_key(code) {
            return self.devices.get_mut(code);
        }
        self.devices
            .values_mut()
            .find(|d| !d.consumed && d.user_code.replace('-', "") == typed)
    }

    /// Approve (`true`) or deny (`false`) a pending device login; false when
    /// no pending login has that code.
    pub fn decide(&mut self, code: &str, approve: bool) -> bool {
        match self.device_mut(code) {
            Some(d) if !d.consumed => {
                d.decision = Some(approve);
                true
            }
            _ => false,
        }
    }

    /// Make a pending device login expire now; false when none has that code.
    pub fn expire_device(&mut self, code: &str, now: Instant) -> bool {
        match self.device_mut(code) {
            Some(d) => {
                d.expires = now;
                true
            }
            None => false,
        }
    }

    /// One poll of the device grant.
    pub fn poll_device(
        &mut self,
        device_code: &str,
        client_id: &str,
        config: &CodeHostConfig,
        now: Instant,
    ) -> Result<CodeHostLogin, DeviceRefusal> {
        let device = self
            .devices
            .get_mut(device_code)
            .ok_or(DeviceRefusal::UnknownCode)?;
        if device.client_id != client_id {
            return Err(DeviceRefusal::WrongClient);
        }
        if device.consumed {
            return Err(DeviceRefusal::UnknownCode);
        }
        if now >= device.expires {
            return Err(DeviceRefusal::Expired);
        }
        let interval = Duration::from_secs(device.interval);
        let too_soon = device
            .last_poll
            .is_some_and(|last| now.saturating_duration_since(last) < interval);
        device.last_poll = Some(now);
        if too_soon {
            device.interval += config.slow_down_increment_secs;
            return Err(DeviceRefusal::SlowDown(device.interval));
        }
        device.polls += 1;
        let decided =
            device.decision.is_some() || config.approve_after.is_some_and(|n| device.polls > n);
        if !decided {
            return Err(DeviceRefusal::Pending);
        }
        device.consumed = true;
        if !device.decision.unwrap_or(!config.deny) {
            return Err(DeviceRefusal::Denied);
        }
        let scope = device.scope.clone();
        let user = self.new_user();
        Ok(self.issue(user, &scope))
    }

    /// The authorize page approved a web login: a new user, and a code.
    pub fn approve_web(
        &mut self,
        client_id: &str,
        redirect_uri: &str,
        scope: &str,
        ttl: Duration,
        now: Instant,
    ) -> String {
        let user = self.new_user();
        let code = crate::vendor_common::ids::hex(20);
        self.codes.insert(
            code.clone(),
            WebCode {
                client_id: client_id.to_owned(),
                redirect_uri: redirect_uri.to_owned(),
                scope: scope.to_owned(),
                user,
                expires: later(now, ttl),
                used: false,
            },
        );
        code
    }

    /// The web flow's code exchange (client credentials already checked):
    /// known, unused, unexpired, issued to this client; a `redirect_uri`, when
    /// given, must be the authorization's.
    pub fn redeem_web(
        &mut self,
        code: &str,
        client_id: &str,
        redirect_uri: Option<&str>,
        now: Instant,
    ) -> Result<CodeHostLogin, CodeRefusal> {
        let entry = self.codes.get_mut(code).ok_or(CodeRefusal::BadCode)?;
        if entry.used || now >= entry.expires {
            return Err(CodeRefusal::BadCode);
        }
        if entry.client_id != client_id {
            return Err(CodeRefusal::WrongClient);
        }
        if redirect_uri.is_some_and(|r| r != entry.redirect_uri) {
            return Err(CodeRefusal::RedirectMismatch);
        }
        entry.used = true;
        let (user, scope) = (entry.user, entry.scope.clone());
        Ok(self.issue(user, &scope))
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
