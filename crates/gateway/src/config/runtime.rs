//! The runtime configuration (spec 2.7) as one declared table: each field's name,
//! type, default, whether a change applies at once (`Hot`) or after a restart
//! (`Restart`), and a description. The same table drives loading from the
//! environment (variable = upper-case field name), the docs, and later the admin
//! config API (`FIELDS`, [`RuntimeConfig::get`], [`RuntimeConfig::set`]).
//!
//! The live value sits behind `ArcSwap` in `AppState`; a change builds a new
//! `RuntimeConfig` and swaps it whole, so readers never see half an update.

use std::time::Duration;

use super::source::EnvSource;
use super::value::{ByteSize, DebugMode, FieldKind, FieldValue};
use super::ConfigProblem;

/// The runtime configuration one request reads: taken once, by the front
/// door, when the request arrives, and handed down through the request's
/// extensions (an extractor for handlers), so a change in the middle of a
/// request never gives it two versions.
#[derive(Debug, Clone)]
pub struct RequestConfig(pub std::sync::Arc<RuntimeConfig>);

/// When a changed value takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Reload {
    /// Read on every use: applies to the next request.
    Hot,
    /// Read once at start: stored, effective after a restart.
    Restart,
}

impl Reload {
    pub fn as_str(self) -> &'static str {
        match self {
            Reload::Hot => "hot",
            Reload::Restart => "restart",
        }
    }
}

/// One row of the declared table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Field name (`http_max_retries`); the environment variable is its upper case.
    pub name: &'static str,
    pub kind: FieldKind,
    pub reload: Reload,
    pub description: &'static str,
}

impl FieldSpec {
    /// The environment variable that sets this field (`HTTP_MAX_RETRIES`).
    pub fn env_var(&self) -> String {
        self.name.to_ascii_uppercase()
    }

    /// The default value in its text form.
    pub fn default_text(&self) -> String {
        RuntimeConfig::default().get(self.name).unwrap_or_default()
    }
}

/// A bad value for one field: what was expected (the value itself is not echoed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("unknown configuration field")]
    Unknown,
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for FieldError {
    fn from(message: String) -> Self {
        FieldError::Invalid(message)
    }
}

/// An AWS region name (`us-east-1`): it is put into host names, so only lower-case
/// letters, digits and hyphens are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region(String);

impl Region {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl FieldValue for Region {
    const KIND: FieldKind = FieldKind::String;
    fn parse_value(raw: &str) -> Result<Self, String> {
        let v = raw.trim();
        let ok = (2..=32).contains(&v.len())
            && v.starts_with(|c: char| c.is_ascii_lowercase())
            && v.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Region(v.to_owned()))
        } else {
            Err(
                "expected a region name such as us-east-1 (lower-case letters, digits, hyphens)"
                    .into(),
            )
        }
    }
    fn render(&self) -> String {
        self.0.clone()
    }
}

/// The gateway's public base URL (`public_url`), when configured: absolute
/// http(s), no query or fragment, kept without a trailing `/`. Unset (the
/// empty text) means "derive it from each request" (see `sso::redirect`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PublicUrl(Option<String>);

impl PublicUrl {
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl FieldValue for PublicUrl {
    const KIND: FieldKind = FieldKind::String;
    fn parse_value(raw: &str) -> Result<Self, String> {
        let v = raw.trim();
        if v.is_empty() {
            return Ok(PublicUrl(None));
        }
        const HINT: &str =
            "expected the gateway's public base URL, e.g. https://gateway.example.com (empty: derive it from the request)";
        let url = url::Url::parse(v).map_err(|_| HINT.to_string())?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || url.query().is_some()
            || url.fragment().is_some()
            || !url.username().is_empty()
        {
            return Err(HINT.into());
        }
        Ok(PublicUrl(Some(v.trim_end_matches('/').to_owned())))
    }
    fn render(&self) -> String {
        self.0.clone().unwrap_or_default()
    }
}

fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
}

fn positive(d: &Duration) -> Result<(), String> {
    if d.is_zero() {
        Err("must be greater than zero".into())
    } else {
        Ok(())
    }
}

fn at_least_one_minute(d: &Duration) -> Result<(), String> {
    if *d < Duration::from_secs(60) {
        Err("must be at least 1m".into())
    } else {
        Ok(())
    }
}

fn at_most_ten(n: &u32) -> Result<(), String> {
    if *n > 10 {
        Err("must be from 0 to 10".into())
    } else {
        Ok(())
    }
}

fn at_least_one(n: &u32) -> Result<(), String> {
    if *n == 0 {
        Err("must be at least 1".into())
    } else {
        Ok(())
    }
}

fn body_limit(b: &ByteSize) -> Result<(), String> {
    if b.bytes() < 1024 {
        Err("must be at least 1KiB".into())
    } else {
        Ok(())
    }
}

macro_rules! runtime_fields {
    ($( $name:ident : $ty:ty = $default:expr, $reload:ident, $check:path, $desc:literal; )*) => {
        /// The runtime configuration; see the module doc and [`FIELDS`].
        #[derive(Debug, Clone, PartialEq)]
        pub struct RuntimeConfig {
            $( #[doc = $desc] pub $name: $ty, )*
        }

        impl Default for RuntimeConfig {
            fn default() -> Self {
                RuntimeConfig { $( $name: $default, )* }
            }
        }

        /// Every runtime field, in declaration order.
        pub const FIELDS: &[FieldSpec] = &[
            $( FieldSpec {
                name: stringify!($name),
                kind: <$ty as FieldValue>::KIND,
                reload: Reload::$reload,
                description: $desc,
            }, )*
        ];

        impl RuntimeConfig {
            /// The current value of field `name` in its text form.
            pub fn get(&self, name: &str) -> Option<String> {
                match name {
                    $( stringify!($name) => Some(self.$name.render()), )*
                    _ => None,
                }
            }

            /// Parse and validate `raw` and store it in field `name`. On error
            /// nothing changes.
            pub fn set(&mut self, name: &str, raw: &str) -> Result<(), FieldError> {
                match name {
                    $( stringify!($name) => {
                        let value = <$ty as FieldValue>::parse_value(raw)?;
                        $check(&value)?;
                        self.$name = value;
                        Ok(())
                    } )*
                    _ => Err(FieldError::Unknown),
                }
            }
        }
    };
}

runtime_fields! {
    server_host: String = "0.0.0.0".to_owned(), Restart, any,
        "Address the HTTP server listens on.";
    server_port: u16 = 8000, Restart, any,
        "TCP port the HTTP server listens on (the full-deployment compose file sets 9999).";
    upstream_region: Region = Region("us-east-1".to_owned()), Restart, any,
        "Region of the primary API (its data plane exists in us-east-1 and eu-central-1).";
    debug_mode: DebugMode = DebugMode::Off, Hot, any,
        "Body logging: off, errors (bodies of failed requests) or all; secrets are always masked.";
    http_max_retries: u32 = 3, Hot, at_most_ten,
        "Retries of an upstream call after a 429, a 5xx or a connection error (0-10), with exponential backoff.";
    http_connect_timeout: Duration = Duration::from_secs(30), Restart, positive,
        "Time allowed to open a connection to an upstream.";
    http_request_timeout: Duration = Duration::from_secs(300), Hot, positive,
        "Time allowed for an upstream to answer with its status and headers (streams are not cut by it).";
    first_token_timeout: Duration = Duration::from_secs(15), Hot, positive,
        "Time a streaming upstream answer may take to deliver its first event before the call is retried.";
    truncation_recovery: bool = true, Hot, any,
        "Detect truncated answers and inject recovery instructions.";
    fake_reasoning_enabled: bool = true, Hot, any,
        "Ask the primary upstream for <thinking> reasoning through the prompt and expose it as reasoning.";
    fake_reasoning_max_tokens: u32 = 4000, Hot, at_least_one,
        "Reasoning budget, in tokens, given to the primary upstream when fake reasoning is on.";
    tool_description_max_length: u32 = 10000, Hot, at_least_one,
        "Tool descriptions longer than this many characters are moved into the system prompt.";
    model_cache_refresh: Duration = Duration::from_secs(6 * 3600), Restart, at_least_one_minute,
        "How often the model list is fetched again from the primary upstream.";
    shutdown_grace: Duration = Duration::from_secs(30), Hot, any,
        "On shutdown, how long open requests and streams may run before they are cut.";
    max_request_body: ByteSize = ByteSize::mib(10), Hot, body_limit,
        "Largest request body accepted; a larger one is answered 413 request_too_large.";
    header_read_timeout: Duration = Duration::from_secs(30), Restart, positive,
        "Time a client has to send a request's line and headers; a slower one is disconnected.";
    body_read_timeout: Duration = Duration::from_secs(60), Hot, positive,
        "Time a client has to send a request's whole body; a slower one is answered 408 request_timeout.";
    custom_allow_private_networks: bool = false, Hot, any,
        "Let users' own provider base URLs reach loopback, private and link-local addresses (on-premise model servers, tests); off, such URLs are refused.";
    guardrails_enabled: bool = false, Hot, any,
        "Check requests (and non-streaming answers) with the guardrail rules and profiles; off, no rule runs.";
    guardrail_timeout: Duration = Duration::from_secs(5), Hot, positive,
        "Longest wait for one guardrail service call; a slower one fails open (the request goes on).";
    otel_capture_content: bool = false, Hot, any,
        "Export the messages and answers of chat calls in their trace spans (gen_ai.input.messages, gen_ai.output.messages) when tracing is on; off, no message content leaves the gateway.";
    public_url: PublicUrl = PublicUrl::default(), Hot, any,
        "Public base URL of the gateway (e.g. https://gateway.example.com), used for the SSO redirect URI; empty: derived from the request's Host and X-Forwarded-Proto.";
}

impl RuntimeConfig {
    /// Defaults overlaid with the environment; every bad value is reported, each
    /// naming its variable.
    pub fn from_env(src: &EnvSource) -> Result<Self, Vec<ConfigProblem>> {
        let mut config = RuntimeConfig::default();
        let mut problems = Vec::new();
        for field in FIELDS {
            let var = field.env_var();
            if let Some(raw) = src.get(&var) {
                if let Err(e) = config.set(field.name, raw) {
                    problems.push(ConfigProblem::new(var, e.to_string()));
                }
            }
        }
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_spec() {
        let rt = RuntimeConfig::default();
        assert_eq!(rt.server_host, "0.0.0.0");
        assert_eq!(rt.server_port, 8000);
        assert_eq!(rt.upstream_region.as_str(), "us-east-1");
        assert_eq!(rt.debug_mode, DebugMode::Off);
        assert_eq!(rt.http_max_retries, 3);
        assert_eq!(rt.http_connect_timeout, Duration::from_secs(30));
        assert_eq!(rt.http_request_timeout, Duration::from_secs(300));
        assert_eq!(rt.first_token_timeout, Duration::from_secs(15));
        assert!(rt.truncation_recovery);
        assert!(rt.fake_reasoning_enabled);
        assert_eq!(rt.fake_reasoning_max_tokens, 4000);
        assert_eq!(rt.tool_description_max_length, 10000);
        assert_eq!(rt.model_cache_refresh, Duration::from_secs(21600));
        assert_eq!(rt.max_request_body, ByteSize::mib(10));
    }

    #[test]
    fn every_default_round_trips_through_its_text_form() {
        let defaults = RuntimeConfig::default();
        for field in FIELDS {
            let text = field.default_text();
            let mut rt = RuntimeConfig::default();
            rt.set(field.name, &text)
                .unwrap_or_else(|e| panic!("{}: default {text:?} rejected: {e}", field.name));
            assert_eq!(rt, defaults, "{}", field.name);
        }
    }

    #[test]
    fn the_table_lists_every_field_once() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
        assert_eq!(FIELDS.len(), 22);
        let hot: Vec<_> = FIELDS
            .iter()
            .filter(|f| f.reload == Reload::Restart)
            .map(|f| f.name)
            .collect();
        assert_eq!(
            hot,
            [
                "server_host",
                "server_port",
                "upstream_region",
                "http_connect_timeout",
                "model_cache_refresh",
                "header_read_timeout"
            ]
        );
    }

    #[test]
    fn the_configuration_doc_lists_every_field_with_its_default() {
        let doc = include_str!("../../../../docs/configuration.md");
        for field in FIELDS {
            let start = format!("| {} | `{}` |", field.name, field.env_var());
            let row = doc
                .lines()
                .find(|l| l.starts_with(&start))
                .unwrap_or_else(|| panic!("docs/configuration.md has no row for {}", field.name));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells[3], field.kind.as_str().replace('_', " "), "{row}");
            assert_eq!(cells[4], format!("`{}`", field.default_text()), "{row}");
            assert_eq!(cells[5], field.reload.as_str(), "{row}");
        }
    }

    #[test]
    fn environment_overrides_defaults() {
        let src = EnvSource::from_pairs([
            ("HTTP_MAX_RETRIES", "5"),
            ("FIRST_TOKEN_TIMEOUT", "20s"),
            ("HTTP_CONNECT_TIMEOUT", "10"),
            ("TRUNCATION_RECOVERY", "0"),
            ("DEBUG_MODE", "errors"),
            ("MAX_REQUEST_BODY", "1MiB"),
            ("UPSTREAM_REGION", "eu-central-1"),
        ]);
        let rt = RuntimeConfig::from_env(&src).unwrap();
        assert_eq!(rt.http_max_retries, 5);
        assert_eq!(rt.first_token_timeout, Duration::from_secs(20));
        assert_eq!(rt.http_connect_timeout, Duration::from_secs(10));
        assert!(!rt.truncation_recovery);
        assert_eq!(rt.debug_mode, DebugMode::Errors);
        assert_eq!(rt.max_request_body, ByteSize::mib(1));
        assert_eq!(rt.upstream_region.as_str(), "eu-central-1");
    }

    #[test]
    fn each_bad_value_names_its_variable() {
        let src = EnvSource::from_pairs([
            ("HTTP_MAX_RETRIES", "many"),
            ("FIRST_TOKEN_TIMEOUT", "soon"),
            ("TRUNCATION_RECOVERY", "maybe"),
            ("DEBUG_MODE", "verbose"),
            ("SERVER_PORT", "70000"),
            ("HTTP_CONNECT_TIMEOUT", "0"),
            ("UPSTREAM_REGION", "US East"),
            ("MAX_REQUEST_BODY", "12"),
        ]);
        let problems = RuntimeConfig::from_env(&src).unwrap_err();
        let vars: Vec<_> = problems.iter().map(|p| p.variable.as_str()).collect();
        for var in [
            "HTTP_MAX_RETRIES",
            "FIRST_TOKEN_TIMEOUT",
            "TRUNCATION_RECOVERY",
            "DEBUG_MODE",
            "SERVER_PORT",
            "HTTP_CONNECT_TIMEOUT",
            "UPSTREAM_REGION",
            "MAX_REQUEST_BODY",
        ] {
            assert!(vars.contains(&var), "{var} not reported: {problems:?}");
        }
        assert_eq!(problems.len(), 8);
        // The bad value is not echoed back.
        assert!(problems.iter().all(|p| !p.message.contains("many")));
    }

    #[test]
    fn public_url_is_optional_and_validated() {
        let mut rt = RuntimeConfig::default();
        assert_eq!(rt.public_url.as_deref(), None);
        assert_eq!(rt.get("public_url").as_deref(), Some(""));
        rt.set("public_url", "https://gw.example.com/").unwrap();
        assert_eq!(rt.public_url.as_deref(), Some("https://gw.example.com"));
        for bad in [
            "gw.example.com",
            "ftp://gw",
            "https://gw/?a=1",
            "https://u:p@gw",
        ] {
            assert!(rt.set("public_url", bad).is_err(), "{bad}");
        }
        rt.set("public_url", "").unwrap();
        assert_eq!(rt.public_url.as_deref(), None);
    }

    #[test]
    fn set_rejects_without_changing_and_knows_its_fields() {
        let mut rt = RuntimeConfig::default();
        assert_eq!(
            rt.set("http_max_retries", "11"),
            Err(FieldError::Invalid("must be from 0 to 10".into()))
        );
        assert_eq!(rt.http_max_retries, 3);
        assert_eq!(rt.set("no_such_field", "1"), Err(FieldError::Unknown));
        rt.set("shutdown_grace", "5m").unwrap();
        assert_eq!(rt.get("shutdown_grace").as_deref(), Some("5m"));
    }
}
