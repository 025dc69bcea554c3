//! 2FA enrollment (spec 3.4, 5.4):
//!
//! - `GET /_ui/api/auth/2fa/setup` -> `{secret, otpauth_uri, qr_code_data_url}`:
//!   a new secret kept (encrypted) as the enrollment in progress; calling it
//!   again replaces it. 409 when 2FA is already on.
//! - `POST /_ui/api/auth/2fa/verify {code}` -> `{ok: true, recovery_codes}`:
//!   the code must belong to the pending secret; 2FA is then on, eight new
//!   recovery codes are shown this once (only their SHA-256 is stored), and
//!   the code's time step counts as used.
//!
//! Both are open to sessions restricted to 2FA enrollment, not to sessions
//! that must change their password first.

use axum::extract::State;
use axum::Json;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::extract::SignedIn;
use super::json::UiJson;
use super::reply::OK;
use super::session::Restriction;
use crate::crypto::{random, totp, TotpSecret};
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::clock;

/// Recovery codes per enrollment (spec 2.6).
pub(crate) const RECOVERY_CODES: usize = 8;

#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "TwoFactorVerifyBody"))]
pub(crate) struct VerifyBody {
    code: String,
}

/// `GET /_ui/api/auth/2fa/setup`: the secret to enroll.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct TwoFactorSetup {
    secret: String,
    otpauth_uri: String,
    qr_code_data_url: String,
}

/// `POST /_ui/api/auth/2fa/verify`: 2FA is on; the recovery codes, shown
/// this once.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct TwoFactorVerified {
    #[cfg_attr(test, ts(type = "true"))]
    ok: bool,
    recovery_codes: Vec<String>,
}

fn refuse_password_reset(who: &SignedIn) -> Result<(), GatewayError> {
    match who.restriction() {
        Some(r @ Restriction::MustChangePassword) => {
            Err(GatewayError::Forbidden(r.message().into()))
        }
        _ => Ok(()),
    }
}

/// An SVG of the otpauth URI as a `data:` URL.
fn qr_data_url(uri: &str) -> Result<String, GatewayError> {
    let code = qrcode::QrCode::new(uri.as_bytes())
        .map_err(|e| GatewayError::internal(anyhow::anyhow!("QR code: {e}")))?;
    let svg = code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(200, 200)
        .build();
    Ok(format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    ))
}

/// `GET /_ui/api/auth/2fa/setup`.
pub(crate) async fn setup(
    State(app): State<AppState>,
    who: SignedIn,
) -> Result<Json<TwoFactorSetup>, GatewayError> {
    refuse_password_reset(&who)?;
    if who.user.totp_enabled {
        return Err(GatewayError::Conflict(
            "two-factor authentication is already enabled".into(),
        ));
    }
    let secret = TotpSecret::generate();
    app.store()?
        .users()
        .set_pending_totp(who.user.id, &secret)
        .await?;
    let uri = secret.otpauth_uri(&who.user.email);
    Ok(Json(TwoFactorSetup {
        secret: secret.to_base32(),
        qr_code_data_url: qr_data_url(&uri)?,
        otpauth_uri: uri,
    }))
}

/// `POST /_ui/api/auth/2fa/verify`.
pub(crate) async fn verify(
    State(app): State<AppState>,
    who: SignedIn,
    UiJson(body): UiJson<VerifyBody>,
) -> Result<Json<TwoFactorVerified>, GatewayError> {
    refuse_password_reset(&who)?;
    if who.user.totp_enabled {
        return Err(GatewayError::Conflict(
            "two-factor authentication is already enabled".into(),
        ));
    }
    let users = app.store()?.users();
    let secret = users.pending_totp(who.user.id).await?.ok_or_else(|| {
        GatewayError::validation(
            "no enrollment in progress: call GET /_ui/api/auth/2fa/setup first",
        )
    })?;
    let now = u64::try_from(clock::now()).unwrap_or(0);
    let step = totp::matching_step(&secret, body.code.trim(), now).ok_or_else(|| {
        GatewayError::validation("code: not the current code of the authenticator")
    })?;
    let codes = random::recovery_codes(RECOVERY_CODES);
    let hashes: Vec<String> = codes.iter().map(|c| random::sha256_hex(c)).collect();
    users
        .enable_totp(who.user.id, &secret, step, &hashes)
        .await?;
    tracing::info!(user_id = %who.user.id, "two-factor authentication enabled");
    Ok(Json(TwoFactorVerified {
        ok: OK,
        recovery_codes: codes,
    }))
}
