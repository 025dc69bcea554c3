//! The gateway's configuration, read once at start from the environment and
//! `.env` (the environment wins) and validated as a whole: every bad value is
//! reported with the variable it came from, and secret values are never echoed.
//!
//! - [`Config`]: everything fixed for the life of the process (mode, data dir,
//!   keys, upstream endpoints, logging) plus the initial [`RuntimeConfig`].
//! - [`runtime`]: the runtime fields of spec 2.7 as one declared table.
//! - [`endpoints`]: upstream base URLs and the SSO start URL.
//! - [`value`]: the text forms of durations, booleans, sizes.

pub mod endpoints;
pub mod runtime;
pub mod secret;
pub mod source;
pub mod value;

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;

pub use endpoints::{ProviderKeys, SsoMode, UpstreamEndpoints};
pub use runtime::{FieldSpec, Region, Reload, RequestConfig, RuntimeConfig, FIELDS};
pub use secret::Secret;
pub use source::EnvSource;
pub use value::{ByteSize, DebugMode};

/// Which deployment this process runs (spec 1, "Deployment modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayMode {
    /// One shared `PROXY_API_KEY`, credentials in `tokens.json`, no database.
    Proxy,
    /// Users, per-user keys, web UI, store (the default).
    Full,
}

impl GatewayMode {
    pub fn as_str(self) -> &'static str {
        match self {
            GatewayMode::Proxy => "proxy",
            GatewayMode::Full => "full",
        }
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Logging settings (`LOG_LEVEL`, `LOG_FORMAT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// A `tracing` filter directive, e.g. `info` or `gateway=debug,info`.
    pub level: String,
    pub format: LogFormat,
    /// Whether lines are also kept for the admins' live log stream: only a
    /// full deployment has admins to read it (`logging::stream`).
    pub live_stream: bool,
}

/// Internal timings that are not user settings; tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tuning {
    /// Base of the exponential backoff between upstream retries (1 s, 2 s, 4 s, ...).
    pub retry_base_delay: Duration,
    /// Upper bound of one backoff delay.
    pub retry_max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the 429 goes to the client.
    pub retry_after_cap: Duration,
    /// How long a refreshed access token is used before the next request refreshes it (spec 3.5).
    pub token_cache_ttl: Duration,
    /// The background task refreshes a token this long before it expires (spec 5.9).
    pub token_refresh_ahead: Duration,
    /// How often the background task checks (spec 5.9).
    pub token_check_interval: Duration,
    /// Timeout of each SSO OIDC call.
    pub oidc_timeout: Duration,
    /// `clientName` sent when registering the OIDC client.
    pub oidc_client_name: String,
    /// Attempts of the start-up test refresh when the OIDC service cannot be reached.
    pub startup_refresh_attempts: u32,
    /// Lifetime of a pending SSO sign-in attempt (spec 2.5a: 10 minutes).
    pub sso_pending_ttl: Duration,
    /// Sign-in limits of full deployment (spec part 8); tests shorten them.
    pub auth: AuthTuning,
}

/// Sign-in and session limits of full deployment. The defaults are the spec's
/// values (part 8); tests shorten the durations and cheapen the password hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthTuning {
    /// Lifetime of a `gw_session` (spec 5.5: 24 h).
    pub session_ttl: Duration,
    /// A session older than this (since creation or its last extension) is
    /// extended on its next request (spec 3.2: 12 h).
    pub session_refresh_after: Duration,
    /// Lifetime of a pending 2FA login token (spec 2.5a: 5 min).
    pub pending_login_ttl: Duration,
    /// Failed sign-ins per email that lock it (spec 5.7: 5).
    pub lockout_threshold: u32,
    /// The lockout window and duration (spec 5.7: 15 min).
    pub lockout_window: Duration,
    /// Argon2id memory cost in KiB (OWASP: 19 MiB).
    pub argon2_memory_kib: u32,
    /// Argon2id passes.
    pub argon2_iterations: u32,
    /// How often expired sessions, pending logins and old failure counters are deleted.
    pub cleanup_interval: Duration,
}

impl Default for AuthTuning {
    fn default() -> Self {
        AuthTuning {
            session_ttl: Duration::from_secs(24 * 3600),
            session_refresh_after: Duration::from_secs(12 * 3600),
            pending_login_ttl: Duration::from_secs(300),
            lockout_threshold: 5,
            lockout_window: Duration::from_secs(900),
            argon2_memory_kib: 19 * 1024,
            argon2_iterations: 2,
            cleanup_interval: Duration::from_secs(300),
        }
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            retry_base_delay: Duration::from_secs(1),
            retry_max_delay: Duration::from_secs(30),
            retry_after_cap: Duration::from_secs(30),
            token_cache_ttl: Duration::from_secs(240),
            token_refresh_ahead: Duration::from_secs(300),
            token_check_interval: Duration::from_secs(60),
            oidc_timeout: Duration::from_secs(30),
            oidc_client_name: "chat-gateway".to_owned(),
            startup_refresh_attempts: 3,
            sso_pending_ttl: Duration::from_secs(600),
            auth: AuthTuning::default(),
        }
    }
}

/// The whole configuration of the process.
#[derive(Debug, Clone)]
pub struct Config {
    pub mode: GatewayMode,
    /// `tokens.json` (proxy mode), the SQLite file and key file (full mode).
    pub data_dir: PathBuf,
    /// Full-mode store (`sqlite://...` or `postgres://...`); may hold a password.
    pub database_url: Secret,
    /// `REDIS_URL`: where full deployment's rate-limit and budget counters
    /// are shared by replicas (`None`: counted in this process).
    pub redis_url: Option<Secret>,
    /// The one client key of proxy mode (required there).
    pub proxy_api_key: Option<Secret>,
    /// `METRICS_TOKEN`: when set, `/metrics` wants it as a bearer token.
    pub metrics_token: Option<Secret>,
    /// Where traces go (the `OTEL_*` variables); `None`: no tracing.
    pub traces: Option<TraceExport>,
    /// 32-byte key for stored secrets (full mode), as given (base64 or hex).
    pub config_encryption_key: Option<Secret>,
    pub initial_admin_email: Option<String>,
    pub initial_admin_password: Option<Secret>,
    pub initial_admin_totp_secret: Option<Secret>,
    /// `COOKIE_SECURE` (default true): `false` drops the `Secure` attribute of
    /// the web UI cookies for plain-HTTP local use (interfaces.md 6).
    pub cookie_secure: bool,
    pub upstream: UpstreamEndpoints,
    /// Other providers' credentials in proxy mode (interfaces.md 3).
    pub providers: ProviderKeys,
    pub log: LogConfig,
    /// The runtime fields as loaded; the live copy is in `AppState`.
    pub runtime: RuntimeConfig,
    pub tuning: Tuning,
}

/// The OTLP/HTTP export of traces, from the standard `OTEL_*` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceExport {
    /// Where spans are posted: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it
    /// is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`.
    pub endpoint: String,
    /// `OTEL_SERVICE_NAME` (default `gateway`).
    pub service_name: String,
    /// `OTEL_BSP_SCHEDULE_DELAY` in milliseconds (default 5000): the longest
    /// wait between a span's end and its export.
    pub schedule_delay: Duration,
}

impl TraceExport {
    /// `None` when no endpoint is set, or `OTEL_SDK_DISABLED=true`, or
    /// `OTEL_TRACES_EXPORTER=none`.
    fn from_env(src: &EnvSource, problems: &mut Vec<ConfigProblem>) -> Option<TraceExport> {
        let set = |name: &str| src.get(name).map(str::trim).filter(|v| !v.is_empty());
        let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let endpoint = match (
            set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            set("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(url), _) => ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.to_owned()),
            (None, Some(base)) => (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("{}/v1/traces", base.trim_end_matches('/')),
            ),
            (None, None) => return None,
        };
        let mut ok = true;
        if !(endpoint.1.starts_with("http://") || endpoint.1.starts_with("https://")) {
            problems.push(ConfigProblem::new(
                endpoint.0,
                "expected an http:// or https:// URL",
            ));
            ok = false;
        }
        for name in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(protocol) = set(name) {
                if protocol != "http/protobuf" {
                    problems.push(ConfigProblem::new(name, "only http/protobuf is supported"));
                    ok = false;
                }
                break;
            }
        }
        let schedule_delay = match set("OTEL_BSP_SCHEDULE_DELAY") {
            None => Duration::from_millis(5000),
            Some(raw) => match raw.parse::<u64>() {
                Ok(ms) => Duration::from_millis(ms),
                Err(_) => {
                    problems.push(ConfigProblem::new(
                        "OTEL_BSP_SCHEDULE_DELAY",
                        "expected a number of milliseconds",
                    ));
                    ok = false;
                    Duration::from_millis(5000)
                }
            },
        };
        (ok && !disabled).then(|| TraceExport {
            endpoint: endpoint.1,
            service_name: set("OTEL_SERVICE_NAME").unwrap_or("gateway").to_owned(),
            schedule_delay,
        })
    }
}

/// One bad value: the variable and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub variable: String,
    pub message: String,
}

impl ConfigProblem {
    pub fn new(variable: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigProblem {
            variable: variable.into(),
            message: message.into(),
        }
    }
}

/// Every problem found while loading; `Display` lists one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid configuration:")?;
        for p in &self.problems {
            write!(f, "\n  {}: {}", p.variable, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Load from `.env` and the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        let src = EnvSource::from_process().map_err(|message| ConfigError {
            problems: vec![ConfigProblem::new(".env", message)],
        })?;
        Self::from_source(&src)
    }

    /// Load from an explicit source (tests build one from pairs).
    pub fn from_source(src: &EnvSource) -> Result<Self, ConfigError> {
        let mut problems = Vec::new();

        let runtime = RuntimeConfig::from_env(src).unwrap_or_else(|mut p| {
            problems.append(&mut p);
            RuntimeConfig::default()
        });

        let mode = match src
            .get("GATEWAY_MODE")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("full") => GatewayMode::Full,
            Some("proxy") => GatewayMode::Proxy,
            Some(_) => {
                problems.push(ConfigProblem::new("GATEWAY_MODE", "expected proxy or full"));
                GatewayMode::Full
            }
        };

        let data_dir = PathBuf::from(src.get("DATA_DIR").unwrap_or("./data"));

        let database_url = match src.get("DATABASE_URL") {
            Some(url) => {
                let ok = ["sqlite:", "postgres://", "postgresql://"]
                    .iter()
                    .any(|p| url.starts_with(p));
                if !ok {
                    problems.push(ConfigProblem::new(
                        "DATABASE_URL",
                        "expected a sqlite://... or postgres://... URL",
                    ));
                }
                Secret::new(url)
            }
            None => Secret::new(format!("sqlite://{}/gateway.db", data_dir.display())),
        };

        let redis_url = src.get("REDIS_URL").map(Secret::new);
        let metrics_token = src
            .get("METRICS_TOKEN")
            .filter(|t| !t.trim().is_empty())
            .map(Secret::new);
        if let Some(url) = &redis_url {
            let ok = ["redis://", "rediss://", "unix://", "redis+unix://"]
                .iter()
                .any(|p| url.expose().starts_with(p));
            if !ok {
                problems.push(ConfigProblem::new(
                    "REDIS_URL",
                    "expected a redis://, rediss:// or unix:// URL",
                ));
            }
        }

        let traces = TraceExport::from_env(src, &mut problems);

        let proxy_api_key = src.get("PROXY_API_KEY").map(Secret::new);
        if mode == GatewayMode::Proxy && proxy_api_key.is_none() {
            problems.push(ConfigProblem::new(
                "PROXY_API_KEY",
                "is required when GATEWAY_MODE=proxy",
            ));
        }

        let config_encryption_key = src.get("CONFIG_ENCRYPTION_KEY").map(Secret::new);
        if let Some(key) = &config_encryption_key {
            if !is_valid_encryption_key(key.expose()) {
                problems.push(ConfigProblem::new(
                    "CONFIG_ENCRYPTION_KEY",
                    "expected 32 bytes as base64 or as 64 hex characters",
                ));
            }
        }

        let initial_admin_email = src.get("INITIAL_ADMIN_EMAIL").map(str::to_owned);
        if let Some(email) = &initial_admin_email {
            if !email.contains('@') || email.contains(char::is_whitespace) {
                problems.push(ConfigProblem::new(
                    "INITIAL_ADMIN_EMAIL",
                    "expected an email address",
                ));
            }
        }
        let initial_admin_password = src.get("INITIAL_ADMIN_PASSWORD").map(Secret::new);
        let initial_admin_totp_secret = src.get("INITIAL_ADMIN_TOTP_SECRET").map(Secret::new);
        if let Some(totp) = &initial_admin_totp_secret {
            if !is_base32(totp.expose()) {
                problems.push(ConfigProblem::new(
                    "INITIAL_ADMIN_TOTP_SECRET",
                    "expected a base32 secret (A-Z, 2-7)",
                ));
            }
        }
        if initial_admin_email.is_some() != initial_admin_password.is_some() {
            let missing = if initial_admin_email.is_some() {
                "INITIAL_ADMIN_PASSWORD"
            } else {
                "INITIAL_ADMIN_EMAIL"
            };
            problems.push(ConfigProblem::new(
                missing,
                "INITIAL_ADMIN_EMAIL and INITIAL_ADMIN_PASSWORD must be set together",
            ));
        }

        let cookie_secure = match src.get("COOKIE_SECURE") {
            None => true,
            Some(raw) => <bool as value::FieldValue>::parse_value(raw).unwrap_or_else(|message| {
                problems.push(ConfigProblem::new("COOKIE_SECURE", message));
                true
            }),
        };

        let upstream = UpstreamEndpoints::from_env(src, &runtime.upstream_region, &mut problems);
        let providers = ProviderKeys::from_env(src, &mut problems);

        let level = src.get("LOG_LEVEL").unwrap_or("info").to_owned();
        if tracing_subscriber::EnvFilter::try_new(&level).is_err() {
            problems.push(ConfigProblem::new(
                "LOG_LEVEL",
                "expected a tracing filter such as info, debug or gateway=debug,info",
            ));
        }
        let format = match src
            .get("LOG_FORMAT")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(_) => {
                problems.push(ConfigProblem::new("LOG_FORMAT", "expected text or json"));
                LogFormat::Text
            }
        };

        if !problems.is_empty() {
            return Err(ConfigError { problems });
        }
        Ok(Config {
            mode,
            data_dir,
            database_url,
            redis_url,
            metrics_token,
            traces,
            proxy_api_key,
            config_encryption_key,
            initial_admin_email,
            initial_admin_password,
            initial_admin_totp_secret,
            cookie_secure,
            upstream,
            providers,
            log: LogConfig {
                level,
                format,
                live_stream: mode == GatewayMode::Full,
            },
            runtime,
            tuning: Tuning::default(),
        })
    }

    /// `$DATA_DIR/tokens.json`.
    pub fn tokens_path(&self) -> PathBuf {
        self.data_dir.join("tokens.json")
    }
}

/// 32 bytes as standard or URL-safe base64 (padded or not), or 64 hex characters.
fn is_valid_encryption_key(raw: &str) -> bool {
    if raw.len() == 64 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
        return true;
    }
    let engines = [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    engines
        .iter()
        .any(|e| e.decode(raw).map(|b| b.len() == 32).unwrap_or(false))
}

fn is_base32(raw: &str) -> bool {
    let body = raw.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b))
}
