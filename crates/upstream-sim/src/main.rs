//! The `upstream-sim` binary: the simulator on fixed ports for local runs and
//! benchmarks. It maps flags (or `UPSTREAM_SIM_*` variables) onto a
//! `SimConfig`, prints both base URLs, and runs until Ctrl-C.
#![expect(
    clippy::print_stdout,
    reason = "the simulator prints its URLs for the person who started it"
)]

use std::net::IpAddr;
use std::time::Duration;

use clap::Parser;
use upstream_sim::{start, Scenario, SeededCredentials, SimConfig};

/// Simulator of the primary chat API, its SSO OIDC service, the vendor APIs
/// and the guardrail service.
#[derive(Debug, Parser)]
#[command(name = "upstream-sim", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "UPSTREAM_SIM_HOST", default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port of the primary API.
    #[arg(long, env = "UPSTREAM_SIM_PORT", default_value_t = 9100)]
    port: u16,
    /// Port of the SSO OIDC service (default: --port + 1, or any free port with --port 0).
    #[arg(long, env = "UPSTREAM_SIM_OIDC_PORT")]
    oidc_port: Option<u16>,
    /// Scenario for requests that name none, in directive syntax without `sim:`,
    /// e.g. "text len=200 chunk=20".
    #[arg(long, env = "UPSTREAM_SIM_DEFAULT_SCENARIO")]
    default_scenario: Option<Scenario>,
    /// Accept any bearer token on the API, and any well-formed signature on
    /// the guardrail service (benchmarks, manual runs).
    #[arg(long, env = "UPSTREAM_SIM_ACCEPT_ANY_TOKEN")]
    accept_any_token: bool,
    /// Device-code polls answered `authorization_pending` before success.
    #[arg(long, env = "UPSTREAM_SIM_APPROVE_AFTER", default_value_t = 1)]
    approve_after: u32,
    /// Wait for approval in a browser (verificationUriComplete) instead of --approve-after.
    #[arg(long)]
    manual_approval: bool,
    /// `interval` of device authorizations, in seconds.
    #[arg(long, default_value_t = 1)]
    interval: u64,
    /// Lifetime of issued access tokens, in seconds.
    #[arg(long, default_value_t = 3600)]
    access_token_ttl: u64,
    /// Rotate refresh tokens on every refresh grant.
    #[arg(long)]
    rotate_refresh_tokens: bool,
    /// Answer every refresh grant with `invalid_grant`.
    #[arg(long)]
    reject_refresh: bool,
    /// Answer the first poll of each device code with `slow_down`.
    #[arg(long)]
    slow_down_once: bool,
    /// End device logins with `access_denied`.
    #[arg(long)]
    deny: bool,
    /// Pre-register this client id (with --seed-client-secret and --seed-refresh-token).
    #[arg(long, requires_all = ["seed_client_secret", "seed_refresh_token"])]
    seed_client_id: Option<String>,
    /// Secret of the pre-registered client.
    #[arg(long, requires = "seed_client_id")]
    seed_client_secret: Option<String>,
    /// Refresh token of the pre-registered client.
    #[arg(long, requires = "seed_client_id")]
    seed_refresh_token: Option<String>,
    /// The guardrail service's access key id (with --guardrail-secret-access-key),
    /// instead of the default pair.
    #[arg(
        long,
        env = "UPSTREAM_SIM_GUARDRAIL_ACCESS_KEY_ID",
        requires = "guardrail_secret_access_key"
    )]
    guardrail_access_key_id: Option<String>,
    /// Its secret access key.
    #[arg(
        long,
        env = "UPSTREAM_SIM_GUARDRAIL_SECRET_ACCESS_KEY",
        requires = "guardrail_access_key_id"
    )]
    guardrail_secret_access_key: Option<String>,
    /// How many requests to keep for inspection (0: none).
    #[arg(long, default_value_t = 1000)]
    record_limit: usize,
}

impl Args {
    fn config(&self) -> SimConfig {
        let mut config = SimConfig {
            host: self.host,
            api_port: self.port,
            // Port 0 (any free port) for the API means any free port for OIDC too.
            oidc_port: self.oidc_port.unwrap_or(match self.port {
                0 => 0,
                p => p.saturating_add(1),
            }),
            accept_any_token: self.accept_any_token,
            default_scenario: self.default_scenario.clone(),
            record_limit: self.record_limit,
            ..SimConfig::default()
        };
        config.guardrail.accept_any_signature = self.accept_any_token;
        if let (Some(id), Some(secret)) = (
            &self.guardrail_access_key_id,
            &self.guardrail_secret_access_key,
        ) {
            config.guardrail.credentials = vec![(id.clone(), secret.clone())];
        }
        let oidc = &mut config.oidc;
        oidc.approve_after = (!self.manual_approval).then_some(self.approve_after);
        oidc.interval_secs = self.interval;
        oidc.access_token_ttl = Duration::from_secs(self.access_token_ttl);
        oidc.rotate_refresh_tokens = self.rotate_refresh_tokens;
        oidc.reject_refresh = self.reject_refresh;
        oidc.slow_down_once = self.slow_down_once;
        oidc.deny = self.deny;
        config
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args = Args::parse();
    let sim = start(args.config()).await?;
    if let (Some(client_id), Some(client_secret), Some(refresh_token)) = (
        &args.seed_client_id,
        &args.seed_client_secret,
        &args.seed_refresh_token,
    ) {
        sim.seed_credentials_with(&SeededCredentials {
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            refresh_token: refresh_token.clone(),
        });
    }
    println!("upstream-sim api:  {}", sim.base_url());
    println!("upstream-sim oidc: {}", sim.oidc_url());
    println!("messages vendor:   {}", sim.messages_vendor_url());
    println!("  its oauth:       {}", sim.messages_vendor_oauth_url());
    println!("completions:       {}", sim.completions_vendor_url());
    println!("custom (/v1 root): {}", sim.custom_url());
    println!(
        "  keys: messages {}, completions {}, custom {}",
        sim.messages_vendor_api_key(),
        sim.completions_vendor_api_key(),
        sim.custom_api_key().unwrap_or_else(|| "(any)".to_owned()),
    );
    println!("assistant token:   {}", sim.assistant_vendor_token_url());
    println!("assistant api:     {}", sim.assistant_vendor_api_url());
    let (key_id, secret) = sim.guardrail_credentials();
    println!("guardrail:         {}", sim.guardrail_url());
    println!("  its key:         {key_id} / {secret}");
    tokio::signal::ctrl_c().await?;
    sim.shutdown().await;
    Ok(())
}
