//! Proxy-mode start-up of the primary credentials (spec 3.6, 5.9):
//!
//! | tokens.json | test refresh | then |
//! |---|---|---|
//! | absent | - | device flow, save, start |
//! | present | succeeds | start (a rotated refresh token is saved) |
//! | present | rejected by SSO OIDC (`invalid_grant`, ...) | primary entry cleared, device flow |
//! | present | OIDC unreachable after retries | start fails; the file is kept |
//!
//! Clearing only on a real rejection is deliberate: a network outage at boot
//! must not throw away working credentials. Credentials saved for another start
//! URL than the configured one (the operator switched organizations) are
//! treated as absent.

use std::time::Duration;

use super::device_flow::{announce, register_or_reuse, run_device_flow, DeviceFlowError};
use super::manager::{TokenManager, TokenTiming};
use super::oidc::{OAuthCode, OidcClient, OidcError, Registration, TokenGrant};
use super::token_file::{PrimaryCredentials, TokenFile};
use crate::config::Config;

/// Why the credentials could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error(transparent)]
    File(#[from] super::token_file::TokenFileError),
    #[error("device authorization failed: {0}")]
    DeviceFlow(#[from] DeviceFlowError),
    #[error("could not check the cached upstream credentials (the file is kept): {0}")]
    Unreachable(OidcError),
}

/// The OIDC client of the configuration.
pub fn oidc_client(config: &Config, http: &reqwest::Client) -> OidcClient {
    OidcClient::new(
        http.clone(),
        config.upstream.oidc_endpoint.clone(),
        config.tuning.oidc_timeout,
    )
}

fn timing(config: &Config) -> TokenTiming {
    TokenTiming {
        cache_ttl: config.tuning.token_cache_ttl,
        refresh_ahead: config.tuning.token_refresh_ahead,
        check_interval: config.tuning.token_check_interval,
    }
}

/// Load or obtain the primary credentials and return the manager that serves them.
pub async fn start_primary(
    config: &Config,
    http: &reqwest::Client,
) -> Result<TokenManager, BootstrapError> {
    let oidc = oidc_client(config, http);
    let file = TokenFile::new(config.tokens_path());
    let api_region = config.runtime.upstream_region.as_str().to_owned();
    let start_url = config.upstream.sso_mode.start_url();

    let mut reuse = None;
    if let Some(creds) = file.load_primary().await? {
        let same_login = creds.start_url.as_deref().is_none_or(|u| u == start_url);
        if !same_login {
            tracing::warn!(
                "{} holds credentials for another start URL; authorizing again",
                file.path().display()
            );
            file.clear_primary().await?;
        } else {
            match test_refresh(config, &oidc, &creds).await {
                Ok(grant) => {
                    tracing::info!("cached upstream credentials are valid");
                    let creds = persist_rotation(&file, creds, &grant).await?;
                    let creds = with_profile(config, http, &file, creds, &grant).await?;
                    return Ok(TokenManager::new(
                        oidc,
                        file,
                        api_region,
                        timing(config),
                        creds,
                        Some(&grant),
                    ));
                }
                Err(e) if e.is_rejection() => {
                    tracing::warn!(
                        "cached upstream credentials were rejected ({e}); clearing them and starting the device flow"
                    );
                    // The client registration survives a dead refresh token.
                    if !matches!(
                        &e,
                        OidcError::OAuth {
                            code: OAuthCode::InvalidClient | OAuthCode::UnauthorizedClient,
                            ..
                        }
                    ) {
                        reuse = Some(Registration {
                            client_id: creds.client_id.clone(),
                            client_secret: creds.client_secret.clone(),
                            client_secret_expires_at: creds.client_secret_expires_at,
                        });
                    }
                    file.clear_primary().await?;
                }
                Err(e) => return Err(BootstrapError::Unreachable(e)),
            }
        }
    } else {
        tracing::warn!(
            "no upstream credentials in {}: starting the device flow",
            file.path().display()
        );
    }

    let (creds, grant) = login(config, &oidc, &file, reuse).await?;
    let creds = with_profile(config, http, &file, creds, &grant).await?;
    Ok(TokenManager::new(
        oidc,
        file,
        api_region,
        timing(config),
        creds,
        Some(&grant),
    ))
}

/// For an organization (IAM Identity Center) account without a known
/// `profileArn`, look it up once and keep it with the credentials.
async fn with_profile(
    config: &Config,
    http: &reqwest::Client,
    file: &TokenFile,
    mut creds: PrimaryCredentials,
    grant: &TokenGrant,
) -> Result<PrimaryCredentials, BootstrapError> {
    if creds.profile_arn.is_some() || config.upstream.sso_mode.issuer_url().is_none() {
        return Ok(creds);
    }
    let found = super::profiles::discover(
        http,
        &config.upstream.api_endpoint,
        grant.access_token.expose(),
        config.runtime.upstream_region.as_str(),
        config.tuning.oidc_timeout,
    )
    .await;
    if found.is_some() {
        creds.profile_arn = found;
        file.save_primary(&creds).await?;
    }
    Ok(creds)
}

/// Run the device flow until it succeeds (expired codes start a new flow) and
/// save the credentials. Used at first boot and by `gateway login`.
pub async fn login(
    config: &Config,
    oidc: &OidcClient,
    file: &TokenFile,
    reuse: Option<Registration>,
) -> Result<(PrimaryCredentials, TokenGrant), BootstrapError> {
    let sso = &config.upstream.sso_mode;
    let registration = register_or_reuse(oidc, &config.tuning.oidc_client_name, sso, reuse)
        .await
        .map_err(DeviceFlowError::from)?;
    let grant = loop {
        match run_device_flow(oidc, &registration, sso, announce).await {
            Ok(grant) => break grant,
            Err(DeviceFlowError::Expired) => {
                tracing::warn!("the device code expired unused; starting a new authorization");
            }
            Err(e) => return Err(e.into()),
        }
    };
    let Some(refresh_token) = grant.refresh_token.clone() else {
        return Err(DeviceFlowError::NoRefreshToken.into());
    };
    let creds = PrimaryCredentials {
        refresh_token,
        client_id: registration.client_id,
        client_secret: registration.client_secret,
        client_secret_expires_at: registration.client_secret_expires_at,
        region: Some(config.runtime.upstream_region.as_str().to_owned()),
        sso_region: Some(config.upstream.sso_region.as_str().to_owned()),
        start_url: Some(sso.start_url().to_owned()),
        profile_arn: None,
    };
    file.save_primary(&creds).await?;
    tracing::info!(
        "upstream authorization complete; credentials saved to {}",
        file.path().display()
    );
    Ok((creds, grant))
}

/// The start-up test refresh, retried with backoff while OIDC is unreachable.
async fn test_refresh(
    config: &Config,
    oidc: &OidcClient,
    creds: &PrimaryCredentials,
) -> Result<TokenGrant, OidcError> {
    let attempts = config.tuning.startup_refresh_attempts.max(1);
    let mut delay = config.tuning.retry_base_delay;
    let mut attempt = 1;
    loop {
        match oidc
            .refresh(&creds.client_id, &creds.client_secret, &creds.refresh_token)
            .await
        {
            Ok(grant) => return Ok(grant),
            Err(e) if e.is_rejection() || attempt >= attempts => return Err(e),
            Err(e) => {
                tracing::warn!("test refresh failed (attempt {attempt} of {attempts}): {e}");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(30));
                attempt += 1;
            }
        }
    }
}

/// Save a rotated refresh token; returns the credentials now in force.
async fn persist_rotation(
    file: &TokenFile,
    mut creds: PrimaryCredentials,
    grant: &TokenGrant,
) -> Result<PrimaryCredentials, BootstrapError> {
    if let Some(new) = grant.refresh_token.as_ref().filter(|t| !t.is_empty()) {
        if *new != creds.refresh_token {
            creds.refresh_token = new.clone();
            file.save_primary(&creds).await?;
        }
    }
    Ok(creds)
}
