//! The OAuth device-authorization flow against SSO OIDC (spec 5.9 item 1,
//! protocol doc 2.2-2.4): register a client (or reuse a registration that is
//! still valid), start device authorization, show the verification URL and user
//! code, and poll the token endpoint at the given interval until the user
//! approves (`slow_down` adds 5 s, RFC 8628), the codes expire, or access is denied.

use std::io::IsTerminal as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::oidc::{
    DeviceAuthorization, OAuthCode, OidcClient, OidcError, Registration, TokenGrant,
};
use crate::config::SsoMode;

/// Poll interval when the service does not give one (RFC 8628 default).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// Floor of the poll interval, so a `0` cannot spin.
const MIN_INTERVAL: Duration = Duration::from_millis(200);
/// `slow_down` adds this to the interval.
const SLOW_DOWN_STEP: Duration = Duration::from_secs(5);
/// A registration whose secret expires sooner than this is not reused.
const REGISTRATION_MARGIN_SECS: i64 = 300;

/// How a device flow can end without tokens.
#[derive(Debug, thiserror::Error)]
pub enum DeviceFlowError {
    #[error("the device code expired before it was approved")]
    Expired,
    #[error("authorization was denied")]
    Denied,
    #[error("the token endpoint returned no refresh token")]
    NoRefreshToken,
    #[error(transparent)]
    Oidc(#[from] OidcError),
}

/// Whether `registration` can be used again (its secret is valid for a while).
pub fn registration_usable(registration: &Registration) -> bool {
    match registration.client_secret_expires_at {
        Some(expires) => expires - unix_now() > REGISTRATION_MARGIN_SECS,
        None => false,
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The registration to use: `reuse` while its secret stays valid, else a new one.
pub async fn register_or_reuse(
    oidc: &OidcClient,
    client_name: &str,
    sso: &SsoMode,
    reuse: Option<Registration>,
) -> Result<Registration, OidcError> {
    match reuse.filter(registration_usable) {
        Some(r) => Ok(r),
        None => oidc.register(client_name, sso.issuer_url()).await,
    }
}

/// Run one device authorization with `registration`. `show` is called once
/// with the codes to display.
pub async fn run_device_flow(
    oidc: &OidcClient,
    registration: &Registration,
    sso: &SsoMode,
    show: impl FnOnce(&DeviceAuthorization),
) -> Result<TokenGrant, DeviceFlowError> {
    let auth = oidc
        .start_device_authorization(registration, sso.start_url())
        .await?;
    show(&auth);
    poll(oidc, registration, &auth).await
}

async fn poll(
    oidc: &OidcClient,
    registration: &Registration,
    auth: &DeviceAuthorization,
) -> Result<TokenGrant, DeviceFlowError> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(auth.expires_in);
    let mut interval = auth
        .interval
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_INTERVAL)
        .max(MIN_INTERVAL);
    loop {
        if tokio::time::Instant::now() + interval > deadline {
            return Err(DeviceFlowError::Expired);
        }
        tokio::time::sleep(interval).await;
        match oidc
            .poll_device_token(registration, &auth.device_code)
            .await
        {
            Ok(grant) if grant.refresh_token.is_some() => return Ok(grant),
            Ok(_) => return Err(DeviceFlowError::NoRefreshToken),
            Err(OidcError::OAuth {
                code: OAuthCode::AuthorizationPending,
                ..
            }) => {}
            Err(OidcError::OAuth {
                code: OAuthCode::SlowDown,
                ..
            }) => {
                interval += SLOW_DOWN_STEP;
                tracing::debug!(interval_secs = interval.as_secs(), "device flow: slow_down");
            }
            Err(OidcError::OAuth {
                code: OAuthCode::ExpiredToken,
                ..
            }) => return Err(DeviceFlowError::Expired),
            Err(OidcError::OAuth {
                code: OAuthCode::AccessDenied,
                ..
            }) => return Err(DeviceFlowError::Denied),
            Err(e) if !e.is_rejection() => {
                // The service is unreachable or failing: keep polling until the codes expire.
                tracing::warn!("device flow: polling failed, will retry: {e}");
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Show the codes in the log and, when stdout is a terminal, as a box on it.
#[expect(
    clippy::print_stdout,
    reason = "the box and the QR code are for the person at the terminal"
)]
pub fn announce(auth: &DeviceAuthorization) {
    tracing::warn!(
        verification_url = auth.url(),
        user_code = auth.user_code.as_str(),
        expires_in_secs = auth.expires_in,
        "upstream authorization required: open {} and confirm the code {}",
        auth.url(),
        auth.user_code
    );
    if std::io::stdout().is_terminal() {
        println!("{}", terminal_box(auth));
        if let Some(qr) = qr_code(auth.url()) {
            println!("{qr}");
        }
    }
}

/// The verification URL as a QR code drawn with half-block characters, for a
/// phone camera; `None` if the URL is too long to encode.
fn qr_code(url: &str) -> Option<String> {
    let code = qrcode::QrCode::new(url.as_bytes()).ok()?;
    Some(
        code.render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build(),
    )
}

fn terminal_box(auth: &DeviceAuthorization) -> String {
    let lines = [
        "Authorize the gateway with the upstream:".to_owned(),
        String::new(),
        format!("  1. Open   {}", auth.url()),
        format!("  2. Confirm the code   {}", auth.user_code),
        String::new(),
        format!(
            "The code expires in {} minutes.",
            auth.expires_in.div_ceil(60)
        ),
    ];
    let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = format!("+{}+\n", "-".repeat(width + 2));
    for line in &lines {
        let pad = width - line.chars().count();
        out.push_str(&format!("| {line}{} |\n", " ".repeat(pad)));
    }
    out.push_str(&format!("+{}+", "-".repeat(width + 2)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn reg(expires_at: Option<i64>) -> Registration {
        Registration {
            client_id: "c".into(),
            client_secret: Secret::new("s"),
            client_secret_expires_at: expires_at,
        }
    }

    #[test]
    fn registrations_are_reused_only_while_valid() {
        assert!(registration_usable(&reg(Some(unix_now() + 86_400))));
        assert!(!registration_usable(&reg(Some(unix_now() + 60))));
        assert!(!registration_usable(&reg(None)));
    }

    #[test]
    fn the_box_shows_url_and_code() {
        let auth = DeviceAuthorization {
            device_code: Secret::new("dc"),
            user_code: "ABCD-EFGH".into(),
            verification_uri: "https://device.example/".into(),
            verification_uri_complete: Some("https://device.example/?user_code=ABCD-EFGH".into()),
            expires_in: 600,
            interval: Some(1),
        };
        let qr = qr_code(auth.url()).expect("a short URL encodes");
        assert!(qr.lines().count() > 10, "{qr}");
        let b = terminal_box(&auth);
        assert!(b.contains("https://device.example/?user_code=ABCD-EFGH"));
        assert!(b.contains("ABCD-EFGH"));
        assert!(b.contains("10 minutes"));
        assert!(!b.contains("dc |"));
        let widths: Vec<_> = b.lines().map(|l| l.chars().count()).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]));
    }
}
