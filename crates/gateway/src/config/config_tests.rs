use super::*;

fn load(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    Config::from_source(&EnvSource::from_pairs(pairs.iter().copied()))
}

fn problem_vars(err: &ConfigError) -> Vec<&str> {
    err.problems.iter().map(|p| p.variable.as_str()).collect()
}

#[test]
fn an_empty_environment_is_a_valid_full_deployment() {
    let c = load(&[]).unwrap();
    assert_eq!(c.mode, GatewayMode::Full);
    assert_eq!(c.data_dir, PathBuf::from("./data"));
    assert_eq!(c.database_url.expose(), "sqlite://./data/gateway.db");
    assert_eq!(c.upstream.api_endpoint, "https://q.us-east-1.amazonaws.com");
    assert_eq!(
        c.upstream.oidc_endpoint,
        "https://oidc.us-east-1.amazonaws.com"
    );
    assert_eq!(c.upstream.sso_mode, SsoMode::Individual);
    assert_eq!(
        c.upstream.sso_mode.start_url(),
        "https://view.awsapps.com/start"
    );
    assert_eq!(c.log.level, "info");
    assert_eq!(c.log.format, LogFormat::Text);
    assert_eq!(c.runtime, RuntimeConfig::default());
}

#[test]
fn proxy_mode_requires_the_key() {
    let err = load(&[("GATEWAY_MODE", "proxy")]).unwrap_err();
    assert_eq!(problem_vars(&err), ["PROXY_API_KEY"]);
    let c = load(&[("GATEWAY_MODE", "proxy"), ("PROXY_API_KEY", "k1")]).unwrap();
    assert_eq!(c.mode, GatewayMode::Proxy);
    assert_eq!(c.proxy_api_key.as_ref().map(Secret::expose), Some("k1"));
}

#[test]
fn regions_are_kept_apart_and_shape_the_default_endpoints() {
    let c = load(&[("UPSTREAM_REGION", "eu-central-1")]).unwrap();
    assert_eq!(
        c.upstream.api_endpoint,
        "https://q.eu-central-1.amazonaws.com"
    );
    // SSO region defaults to the API region.
    assert_eq!(
        c.upstream.oidc_endpoint,
        "https://oidc.eu-central-1.amazonaws.com"
    );
    let c = load(&[
        ("UPSTREAM_REGION", "eu-central-1"),
        ("UPSTREAM_SSO_REGION", "ap-southeast-1"),
    ])
    .unwrap();
    assert_eq!(
        c.upstream.api_endpoint,
        "https://q.eu-central-1.amazonaws.com"
    );
    assert_eq!(
        c.upstream.oidc_endpoint,
        "https://oidc.ap-southeast-1.amazonaws.com"
    );
    assert_eq!(c.upstream.sso_region.as_str(), "ap-southeast-1");
}

#[test]
fn endpoint_overrides_lose_their_trailing_slash() {
    let c = load(&[
        ("UPSTREAM_API_ENDPOINT", "http://127.0.0.1:9000/"),
        ("UPSTREAM_OIDC_ENDPOINT", "http://127.0.0.1:9001/oidc/"),
    ])
    .unwrap();
    assert_eq!(c.upstream.api_endpoint, "http://127.0.0.1:9000");
    assert_eq!(c.upstream.oidc_endpoint, "http://127.0.0.1:9001/oidc");
}

#[test]
fn organization_start_url_is_normalized() {
    let c = load(&[(
        "UPSTREAM_SSO_URL",
        "https://d-1234567890.awsapps.com/start/#/",
    )])
    .unwrap();
    assert_eq!(
        c.upstream.sso_mode,
        SsoMode::Organization("https://d-1234567890.awsapps.com/start".into())
    );
    assert_eq!(
        c.upstream.sso_mode.issuer_url(),
        Some("https://d-1234567890.awsapps.com/start")
    );
}

#[test]
fn every_bad_value_is_reported_with_its_variable() {
    let err = load(&[
        ("GATEWAY_MODE", "cluster"),
        ("UPSTREAM_API_ENDPOINT", "ftp://x"),
        ("UPSTREAM_OIDC_ENDPOINT", "not a url"),
        ("UPSTREAM_SSO_URL", "nope"),
        ("UPSTREAM_SSO_REGION", "Mars"),
        ("LOG_FORMAT", "xml"),
        ("LOG_LEVEL", "[[["),
        ("DATABASE_URL", "mysql://x"),
        ("CONFIG_ENCRYPTION_KEY", "short"),
        ("INITIAL_ADMIN_EMAIL", "admin"),
        ("INITIAL_ADMIN_PASSWORD", "pw"),
        ("INITIAL_ADMIN_TOTP_SECRET", "not-base32!"),
        ("CUSTOM_BASE_URL", "localhost:1234"),
        ("HTTP_MAX_RETRIES", "-1"),
    ])
    .unwrap_err();
    let vars = problem_vars(&err);
    for var in [
        "GATEWAY_MODE",
        "UPSTREAM_API_ENDPOINT",
        "UPSTREAM_OIDC_ENDPOINT",
        "UPSTREAM_SSO_URL",
        "UPSTREAM_SSO_REGION",
        "LOG_FORMAT",
        "LOG_LEVEL",
        "DATABASE_URL",
        "CONFIG_ENCRYPTION_KEY",
        "INITIAL_ADMIN_EMAIL",
        "INITIAL_ADMIN_TOTP_SECRET",
        "CUSTOM_BASE_URL",
        "HTTP_MAX_RETRIES",
    ] {
        assert!(vars.contains(&var), "{var} missing from {vars:?}");
    }
    let text = err.to_string();
    assert!(text.starts_with("invalid configuration:"));
    assert!(text.contains("\n  GATEWAY_MODE: expected proxy or full"));
}

#[test]
fn secret_values_are_never_echoed() {
    let err = load(&[
        ("CONFIG_ENCRYPTION_KEY", "my-secret-key-material"),
        ("INITIAL_ADMIN_TOTP_SECRET", "my-totp-secret!"),
        ("DATABASE_URL", "mysql://user:hunter2@db"),
        ("REDIS_URL", "http://:hunter3@cache:6379"),
    ])
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("REDIS_URL: expected a redis://"), "{text}");
    assert!(!text.contains("hunter3"));
    assert!(!text.contains("my-secret-key-material"));
    assert!(!text.contains("my-totp-secret"));
    assert!(!text.contains("hunter2"));
    let c = load(&[
        ("GATEWAY_MODE", "proxy"),
        ("PROXY_API_KEY", "sk-abc"),
        ("REDIS_URL", "redis://:hunter3@cache:6379"),
    ])
    .unwrap();
    assert!(!format!("{c:?}").contains("sk-abc"));
    assert!(!format!("{c:?}").contains("hunter3"));
}

#[test]
fn encryption_keys_in_both_forms_are_accepted() {
    let hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    assert!(load(&[("CONFIG_ENCRYPTION_KEY", hex)]).is_ok());
    let b64 = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    assert!(load(&[("CONFIG_ENCRYPTION_KEY", b64.as_str())]).is_ok());
    let short = base64::engine::general_purpose::STANDARD.encode([7u8; 16]);
    assert!(load(&[("CONFIG_ENCRYPTION_KEY", short.as_str())]).is_err());
}

#[test]
fn admin_seed_needs_email_and_password_together() {
    let err = load(&[("INITIAL_ADMIN_EMAIL", "a@example.com")]).unwrap_err();
    assert_eq!(problem_vars(&err), ["INITIAL_ADMIN_PASSWORD"]);
    assert!(load(&[
        ("INITIAL_ADMIN_EMAIL", "a@example.com"),
        ("INITIAL_ADMIN_PASSWORD", "pw"),
        ("INITIAL_ADMIN_TOTP_SECRET", "JBSWY3DPEHPK3PXP"),
    ])
    .is_ok());
}

#[test]
fn data_dir_shapes_the_default_database_and_tokens_path() {
    let c = load(&[("DATA_DIR", "/data")]).unwrap();
    assert_eq!(c.database_url.expose(), "sqlite:///data/gateway.db");
    assert_eq!(c.tokens_path(), PathBuf::from("/data/tokens.json"));
}

#[test]
fn custom_key_needs_a_base_url() {
    let err = load(&[("CUSTOM_API_KEY", "k")]).unwrap_err();
    assert_eq!(problem_vars(&err), ["CUSTOM_BASE_URL"]);
}

#[test]
fn traces_follow_the_standard_otel_variables() {
    assert_eq!(load(&[]).unwrap().traces, None);
    let c = load(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")]).unwrap();
    assert_eq!(
        c.traces,
        Some(TraceExport {
            endpoint: "http://collector:4318/v1/traces".to_owned(),
            service_name: "gateway".to_owned(),
            schedule_delay: Duration::from_secs(5),
        })
    );
    let c = load(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "https://traces.example/otlp",
        ),
        ("OTEL_SERVICE_NAME", "edge"),
        ("OTEL_BSP_SCHEDULE_DELAY", "250"),
    ])
    .unwrap()
    .traces
    .unwrap();
    assert_eq!(c.endpoint, "https://traces.example/otlp");
    assert_eq!(c.service_name, "edge");
    assert_eq!(c.schedule_delay, Duration::from_millis(250));
    for off in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        let c = load(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), off]).unwrap();
        assert_eq!(c.traces, None, "{off:?}");
    }
    let err = load(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_BSP_SCHEDULE_DELAY", "soon"),
    ])
    .unwrap_err();
    assert_eq!(
        problem_vars(&err),
        [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_BSP_SCHEDULE_DELAY"
        ]
    );
}
