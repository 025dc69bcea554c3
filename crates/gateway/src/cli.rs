//! The command line (interfaces.md 7): `gateway` / `gateway serve` runs the
//! service, `gateway login` runs the proxy-mode device flow and exits,
//! `gateway healthcheck` asks the local `/health` (for container health
//! checks). Exit codes: 0 success, 1 failure, 2 bad configuration.
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the command line talks to the person at the terminal"
)]

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::config::value::FieldValue;
use crate::config::{Config, ConfigError, EnvSource};
use crate::providers::primary::credentials::{bootstrap, TokenFile};

/// Exit code of a configuration error.
pub const EXIT_CONFIG: u8 = 2;

/// Multi-provider chat gateway: OpenAI chat-completions and Anthropic messages
/// in front of the primary upstream and other providers.
///
/// Configuration comes from the environment and `.env` (see docs/configuration.md).
#[derive(Debug, Parser)]
#[command(name = "gateway", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Run the gateway (the default).
    Serve,
    /// Authorize with the upstream by device flow, write $DATA_DIR/tokens.json and exit.
    Login,
    /// Exit 0 when the local /health answers `healthy` (for container health checks).
    Healthcheck,
}

/// Print a configuration error to stderr in the form the operator needs.
pub fn report_config_error(err: &ConfigError) {
    eprintln!("gateway: {err}");
}

/// Load the configuration, or report it and give the exit code.
pub fn load_config() -> Result<Config, ExitCode> {
    Config::from_env().map_err(|e| {
        report_config_error(&e);
        ExitCode::from(EXIT_CONFIG)
    })
}

/// Resolve on Ctrl-C or SIGTERM (container stop).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
    tracing::info!("shutdown signal received");
}

/// `gateway login`: the device flow on its own. Proxy-mode settings apply
/// whatever `GATEWAY_MODE` says, and `PROXY_API_KEY` is not needed.
pub async fn login() -> ExitCode {
    let mut src = match EnvSource::from_process() {
        Ok(src) => src,
        Err(e) => {
            eprintln!("gateway: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    src.set("GATEWAY_MODE", "full");
    let config = match Config::from_source(&src) {
        Ok(c) => c,
        Err(e) => {
            report_config_error(&e);
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    crate::logging::init(&config.log);
    let http = match crate::upstream::build_http_client(&config.runtime) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("gateway: cannot build the HTTP client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let oidc = bootstrap::oidc_client(&config, &http);
    let file = TokenFile::new(config.tokens_path());
    tokio::select! {
        result = bootstrap::login(&config, &oidc, &file, None) => match result {
            Ok(_) => {
                println!("Authorized. Credentials saved to {}", file.path().display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("gateway: login failed: {e}");
                ExitCode::FAILURE
            }
        },
        _ = shutdown_signal() => {
            eprintln!("gateway: login cancelled");
            ExitCode::FAILURE
        }
    }
}

/// The URL `gateway healthcheck` asks: `SERVER_HOST` unless it is a wildcard
/// address (then loopback), `SERVER_PORT`.
pub fn healthcheck_url(src: &EnvSource) -> Result<String, String> {
    let port = match src.get("SERVER_PORT") {
        None => 8000,
        Some(raw) => u16::parse_value(raw).map_err(|e| format!("SERVER_PORT: {e}"))?,
    };
    let host = match src.get("SERVER_HOST") {
        None | Some("0.0.0.0") | Some("::") | Some("[::]") => "127.0.0.1".to_owned(),
        Some(h) if h.contains(':') && !h.starts_with('[') => format!("[{h}]"),
        Some(h) => h.to_owned(),
    };
    Ok(format!("http://{host}:{port}/health"))
}

/// `gateway healthcheck`.
pub async fn healthcheck() -> ExitCode {
    let url = match EnvSource::from_process()
        .map_err(|e| e.to_string())
        .and_then(|src| healthcheck_url(&src))
    {
        Ok(url) => url,
        Err(e) => {
            eprintln!("gateway: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gateway healthcheck: {e}");
            return ExitCode::FAILURE;
        }
    };
    let healthy = match client.get(&url).send().await {
        Ok(resp) if resp.status().is_success() => resp
            .json::<serde_json::Value>()
            .await
            .map(|body| body.get("status").and_then(|s| s.as_str()) == Some("healthy"))
            .unwrap_or(false),
        Ok(resp) => {
            eprintln!("gateway healthcheck: {url} answered {}", resp.status());
            false
        }
        Err(e) => {
            eprintln!("gateway healthcheck: {url}: {e}");
            false
        }
    };
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthcheck_targets_loopback_for_wildcards() {
        let url =
            |pairs: &[(&str, &str)]| healthcheck_url(&EnvSource::from_pairs(pairs.iter().copied()));
        assert_eq!(url(&[]).unwrap(), "http://127.0.0.1:8000/health");
        assert_eq!(
            url(&[("SERVER_PORT", "9999")]).unwrap(),
            "http://127.0.0.1:9999/health"
        );
        assert_eq!(
            url(&[("SERVER_HOST", "::")]).unwrap(),
            "http://127.0.0.1:8000/health"
        );
        assert_eq!(
            url(&[("SERVER_HOST", "10.0.0.5")]).unwrap(),
            "http://10.0.0.5:8000/health"
        );
        assert_eq!(
            url(&[("SERVER_HOST", "::1")]).unwrap(),
            "http://[::1]:8000/health"
        );
        assert!(url(&[("SERVER_PORT", "http")])
            .unwrap_err()
            .starts_with("SERVER_PORT"));
    }

    #[test]
    fn commands_parse() {
        assert_eq!(Cli::parse_from(["gateway"]).command, None);
        assert_eq!(
            Cli::parse_from(["gateway", "serve"]).command,
            Some(Command::Serve)
        );
        assert_eq!(
            Cli::parse_from(["gateway", "login"]).command,
            Some(Command::Login)
        );
        assert_eq!(
            Cli::parse_from(["gateway", "healthcheck"]).command,
            Some(Command::Healthcheck)
        );
        assert!(Cli::try_parse_from(["gateway", "bogus"]).is_err());
    }
}
