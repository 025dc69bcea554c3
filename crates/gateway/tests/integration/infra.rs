//! The service foundation seen from outside: infrastructure endpoints, CORS,
//! request ids, client auth, body limit, error format, proxy-mode start-up
//! (device flow, cached credentials, failed test refresh), token refresh,
//! model list, graceful shutdown, and the binary's commands.

use std::time::Duration;

use gateway::providers::primary::credentials::{
    OidcClient, PrimaryCredentials, TokenFile, TokenManager, TokenTiming,
};
use gateway::providers::primary::models::{CatalogSource, ModelCache, ModelFetcher};
use serde_json::Value;

use crate::common::*;

async fn json(resp: reqwest::Response) -> Value {
    resp.json().await.unwrap()
}

/// A full-mode configuration with a fresh `DATA_DIR` (kept while the
/// returned folder lives): a store shared between runs or branches would
/// carry another build's migrations.
fn full_mode_gateway_config(extra: &[(&str, &str)]) -> (gateway::Config, TempDir) {
    let dir = TempDir::new();
    let mut pairs = vec![("DATA_DIR".to_owned(), dir.path().display().to_string())];
    pairs.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    (config_from(pairs), dir)
}

fn assert_cors(resp: &reqwest::Response) {
    let h = resp.headers();
    assert_eq!(h["access-control-allow-origin"], "*", "{:?}", resp.url());
    assert_eq!(h["access-control-allow-methods"], "*");
    assert!(h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .starts_with('*'));
}

#[tokio::test]
async fn health_and_root_answer_without_configuration() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let http = client();

    let resp = http.get(gw.url("/health")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_cors(&resp);
    let body = json(resp).await;
    assert_eq!(body["status"], "healthy");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    let ts = body["timestamp"].as_str().unwrap();
    assert!(ts.ends_with('Z') && ts.contains('T'), "{ts}");
    assert_eq!(body.as_object().unwrap().len(), 3);

    let body = json(http.get(gw.url("/")).send().await.unwrap()).await;
    assert_eq!(body["status"], "ok");
    assert!(body["message"].as_str().unwrap().contains("/v1/"));
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));

    gw.stop().await.unwrap();
}

#[tokio::test]
async fn full_mode_without_a_store_asks_for_setup() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let resp = client()
        .post(gw.url("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert_cors(&resp);
    let body = json(resp).await;
    assert_eq!(body["error"]["type"], "setup_required");
    assert!(body["error"]["message"].as_str().unwrap().contains("/_ui/"));
    gw.stop().await.unwrap();
}

#[tokio::test]
async fn errors_have_the_spec_format_and_cors() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let http = client();

    let resp = http.get(gw.url("/nope")).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    assert_cors(&resp);
    let body = json(resp).await;
    assert_eq!(body["error"]["type"], "not_found");
    assert_eq!(body["error"]["message"], "no route for /nope");
    assert_eq!(body["error"].as_object().unwrap().len(), 2);

    let resp = http.post(gw.url("/health")).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert_cors(&resp);
    assert!(resp.headers()["allow"].to_str().unwrap().contains("GET"));
    let body = json(resp).await;
    assert_eq!(body["error"]["type"], "method_not_allowed");

    gw.stop().await.unwrap();
}

#[tokio::test]
async fn preflight_is_answered_without_auth() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client()
        .request(reqwest::Method::OPTIONS, env.url("/v1/chat/completions"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert_cors(&resp);
    assert_eq!(
        resp.headers()["access-control-allow-headers"],
        "*, authorization, content-type"
    );
    assert!(resp.headers().contains_key("x-request-id"));

    let resp = client()
        .request(reqwest::Method::OPTIONS, env.url("/v1/messages"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert_eq!(resp.headers()["access-control-allow-headers"], "*");
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn request_ids_are_echoed_or_generated() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let http = client();

    let resp = http
        .get(gw.url("/health"))
        .header("x-request-id", "client-id-42")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], "client-id-42");

    let resp = http.get(gw.url("/health")).send().await.unwrap();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");

    // An id that is not sane is replaced, on errors too.
    let resp = http
        .get(gw.url("/missing"))
        .header("x-request-id", "a b c")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let id = resp.headers()["x-request-id"].to_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");

    gw.stop().await.unwrap();
}

#[tokio::test]
async fn client_auth_missing_versus_invalid() {
    let env = ProxyEnv::start(&[]).await;
    let http = client();
    let url = env.url("/v1/not-a-route");

    let resp = http.post(&url).body("{}").send().await.unwrap();
    assert_eq!(resp.status(), 401);
    assert_cors(&resp);
    let body = json(resp).await;
    assert_eq!(body["error"]["type"], "auth_error");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("missing API key"));

    for (name, value) in [
        ("authorization", "Bearer wrong-key".to_owned()),
        ("x-api-key", "wrong-key".to_owned()),
    ] {
        let resp = http
            .post(&url)
            .header(name, value)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{name}");
        let body = json(resp).await;
        assert_eq!(body["error"]["message"], "invalid API key", "{name}");
    }

    // The right key in either header passes auth (and meets the 404 of an unknown path).
    for (name, value) in [
        ("authorization", format!("Bearer {API_KEY}")),
        ("x-api-key", API_KEY.to_owned()),
    ] {
        let resp = http
            .post(&url)
            .header(name, value)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{name}");
        assert_eq!(json(resp).await["error"]["type"], "not_found");
    }

    // Infrastructure endpoints need no key.
    assert_eq!(
        http.get(env.url("/health")).send().await.unwrap().status(),
        200
    );
    assert_eq!(http.get(env.url("/")).send().await.unwrap().status(), 200);
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let env = ProxyEnv::start(&[("MAX_REQUEST_BODY", "64KiB")]).await;
    let http = client();
    let url = env.url("/v1/chat/completions");

    // Announced size.
    let resp = http
        .post(&url)
        .bearer_auth(API_KEY)
        .body(vec![b'x'; 64 * 1024 + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    assert_cors(&resp);
    let body = json(resp).await;
    assert_eq!(body["error"]["type"], "request_too_large");
    assert!(body["error"]["message"].as_str().unwrap().contains("65536"));

    // Chunked, size discovered while reading.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..20).map(|_| Ok(vec![b'y'; 8192])).collect();
    let resp = http
        .post(&url)
        .bearer_auth(API_KEY)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);

    // At the limit: accepted (and then not routed).
    let resp = http
        .post(env.url("/v1/unknown"))
        .bearer_auth(API_KEY)
        .body(vec![b'x'; 64 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn the_default_limit_is_ten_mebibytes() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let resp = client()
        .post(gw.url("/v1/chat/completions"))
        .body(vec![b'x'; 10 * 1024 * 1024 + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    gw.stop().await.unwrap();
}

#[tokio::test]
async fn first_boot_runs_the_device_flow_and_saves_tokens() {
    let sim = start_sim().await;
    let dir = TempDir::new();
    assert!(!dir.tokens_path().exists());
    let gw = Gateway::start(config_from(proxy_env(&sim, &dir))).await;

    // The gateway serves once the flow is done (the simulator approves after one poll).
    let resp = client().get(gw.url("/health")).send().await.unwrap();
    assert_eq!(resp.status(), 200);

    assert_eq!(sim.requests_to("/client/register").len(), 1);
    let reg = sim.requests_to("/client/register")[0]
        .json()
        .unwrap()
        .clone();
    assert_eq!(reg["clientType"], "public");
    assert_eq!(
        reg["scopes"],
        serde_json::json!([
            "codewhisperer:completions",
            "codewhisperer:analysis",
            "codewhisperer:conversations"
        ])
    );
    let start = sim.requests_to("/device_authorization")[0]
        .json()
        .unwrap()
        .clone();
    assert_eq!(start["startUrl"], "https://view.awsapps.com/start");

    let saved: Value = serde_json::from_slice(&std::fs::read(dir.tokens_path()).unwrap()).unwrap();
    let refresh = saved["refresh_token"].as_str().unwrap();
    assert!(sim.refresh_token_live(refresh));
    assert!(saved["client_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(saved["client_secret"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.tokens_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The model list was fetched with the new token.
    let listing = sim.requests_to("/ListAvailableModels");
    assert_eq!(listing.len(), 1);
    assert_eq!(
        listing[0].query_param("origin").as_deref(),
        Some("AI_EDITOR")
    );
    assert!(listing[0]
        .header("authorization")
        .unwrap()
        .starts_with("Bearer "));

    gw.stop().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn restart_with_cached_credentials_needs_no_login() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client().get(env.url("/health")).send().await.unwrap();
    assert_eq!(resp.status(), 200);

    assert!(env.sim.requests_to("/client/register").is_empty());
    assert!(env.sim.requests_to("/device_authorization").is_empty());
    let tokens = env.sim.requests_to("/token");
    assert_eq!(tokens.len(), 1, "one test refresh");
    let body = tokens[0].json().unwrap();
    assert_eq!(body["grantType"], "refresh_token");
    assert_eq!(body["refreshToken"], env.creds.refresh_token.as_str());
    assert_eq!(body["clientId"], env.creds.client_id.as_str());
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn a_rotated_refresh_token_is_saved_at_start() {
    let sim = start_sim_with(|c| c.oidc.rotate_refresh_tokens = true).await;
    let env = ProxyEnv::start_with_sim(sim, &[]).await;
    client().get(env.url("/health")).send().await.unwrap();
    let saved = TokenFile::new(env.dir.tokens_path())
        .load_primary()
        .await
        .unwrap()
        .unwrap();
    assert_ne!(saved.refresh_token.expose(), env.creds.refresh_token);
    assert!(env.sim.refresh_token_live(saved.refresh_token.expose()));
    assert!(!env.sim.refresh_token_live(&env.creds.refresh_token));
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn a_failing_test_refresh_clears_the_file_and_reruns_the_flow() {
    let sim = start_sim().await;
    let dir = TempDir::new();
    let old = sim.seed_credentials();
    // Keep another provider's entry to check it survives.
    let mut file: Value = serde_json::json!({
        "refresh_token": "aor-dead-token",
        "client_id": old.client_id,
        "client_secret": old.client_secret,
        "copilot": {"token": "keep-me"},
    });
    std::fs::write(dir.tokens_path(), file.to_string()).unwrap();

    let gw = Gateway::start(config_from(proxy_env(&sim, &dir))).await;
    assert_eq!(
        client()
            .get(gw.url("/health"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    assert_eq!(sim.requests_to("/device_authorization").len(), 1);
    file = serde_json::from_slice(&std::fs::read(dir.tokens_path()).unwrap()).unwrap();
    let refresh = file["refresh_token"].as_str().unwrap();
    assert_ne!(refresh, "aor-dead-token");
    assert!(sim.refresh_token_live(refresh));
    assert_eq!(file["copilot"]["token"], "keep-me");
    gw.stop().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn an_unreachable_oidc_service_keeps_the_file_and_fails_start() {
    let dir = TempDir::new();
    let creds = upstream_sim::SeededCredentials {
        client_id: "c".into(),
        client_secret: "s".into(),
        refresh_token: "r".into(),
    };
    write_tokens(&dir, &creds);
    let port = free_port();
    let config = config_from([
        ("GATEWAY_MODE", "proxy".to_owned()),
        ("PROXY_API_KEY", API_KEY.to_owned()),
        ("DATA_DIR", dir.path().display().to_string()),
        ("UPSTREAM_OIDC_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("UPSTREAM_API_ENDPOINT", format!("http://127.0.0.1:{port}")),
    ]);
    let gw = Gateway::start(config).await;
    let err = gw.wait().await.unwrap_err();
    assert!(err.to_string().contains("the file is kept"), "{err:#}");
    assert!(dir.tokens_path().exists());
}

#[tokio::test]
async fn concurrent_forced_refreshes_make_one_token_call() {
    let sim = start_sim().await;
    let creds = sim.seed_credentials();
    let dir = TempDir::new();
    let manager = TokenManager::new(
        OidcClient::new(
            reqwest::Client::new(),
            sim.oidc_url(),
            Duration::from_secs(10),
        ),
        TokenFile::new(dir.tokens_path()),
        "us-east-1",
        TokenTiming {
            cache_ttl: Duration::from_secs(240),
            refresh_ahead: Duration::from_secs(300),
            check_interval: Duration::from_secs(60),
        },
        PrimaryCredentials {
            refresh_token: creds.refresh_token.clone().into(),
            client_id: creds.client_id.clone(),
            client_secret: creds.client_secret.clone().into(),
            client_secret_expires_at: None,
            region: None,
            sso_region: None,
            start_url: None,
            profile_arn: None,
        },
        None,
    );
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let m = manager.clone();
            tokio::spawn(async move { m.force_refresh().await.unwrap() })
        })
        .collect();
    let mut tokens = Vec::new();
    for t in tasks {
        tokens.push(t.await.unwrap());
    }
    tokens.dedup();
    assert_eq!(tokens.len(), 1, "every caller got the same token");
    assert_eq!(sim.requests_to("/token").len(), 1);
    // The cached token is served without another call.
    assert_eq!(manager.access_token().await.unwrap(), tokens[0]);
    assert_eq!(sim.requests_to("/token").len(), 1);
    sim.shutdown().await;
}

#[tokio::test]
async fn the_model_cache_is_filled_from_the_simulator() {
    let sim = start_sim_with(|c| {
        c.models.push(upstream_sim::ModelInfo::new(
            "sim-only-model-1",
            "Sim Only",
            "exists only in the simulator",
            123_456,
            1_000,
        ));
    })
    .await;
    let creds = sim.seed_credentials();
    let dir = TempDir::new();
    let tokens = TokenManager::new(
        OidcClient::new(
            reqwest::Client::new(),
            sim.oidc_url(),
            Duration::from_secs(10),
        ),
        TokenFile::new(dir.tokens_path()),
        "us-east-1",
        TokenTiming {
            cache_ttl: Duration::from_secs(240),
            refresh_ahead: Duration::from_secs(300),
            check_interval: Duration::from_secs(60),
        },
        PrimaryCredentials {
            refresh_token: creds.refresh_token.clone().into(),
            client_id: creds.client_id.clone(),
            client_secret: creds.client_secret.clone().into(),
            client_secret_expires_at: None,
            region: None,
            sso_region: None,
            start_url: None,
            profile_arn: Some("arn:aws:codewhisperer:us-east-1:123:profile/ABC".into()),
        },
        None,
    );
    let config = config_from([("DATA_DIR", dir.path().display().to_string())]);
    let fetcher = ModelFetcher {
        http: gateway::upstream::build_upstream_client(&config.runtime).unwrap(),
        api_endpoint: sim.base_url(),
        tokens: tokens.clone(),
        policy: gateway::upstream::http::RetryPolicy::new(&config.runtime, &config.tuning),
    };
    let cache = ModelCache::with_fallback();
    assert!(cache.resolve("sim-only-model-1").is_err());
    let n = cache.refresh(&fetcher).await.unwrap();
    assert_eq!(cache.source(), CatalogSource::Upstream);
    assert_eq!(n, cache.list().len());
    let resolved = cache.resolve("SIM-ONLY-MODEL-1").unwrap();
    assert_eq!(resolved.id, "sim-only-model-1");
    assert_eq!(resolved.context_window, Some(123_456));
    assert_eq!(
        cache.resolve("claude-sonnet-4-5-20250929").unwrap().id,
        "claude-sonnet-4.5"
    );
    let req = &sim.requests_to("/ListAvailableModels")[0];
    assert_eq!(
        req.query_param("profileArn").as_deref(),
        Some("arn:aws:codewhisperer:us-east-1:123:profile/ABC")
    );

    // A revoked token is refreshed once and the listing retried.
    sim.revoke_access_tokens();
    cache.refresh(&fetcher).await.unwrap();
    assert_eq!(sim.requests_to("/token").len(), 2);
    sim.shutdown().await;
}

#[tokio::test]
async fn shutdown_waits_for_open_requests() {
    let mut env = ProxyEnv::start(&[]).await;
    // A request whose upstream answer takes a while is in flight when
    // shutdown starts; it must still complete.
    let url = env.url("/v1/chat/completions");
    let body = serde_json::json!({
        "model": "claude-sonnet-4.5",
        "messages": [{"role": "user", "content": "hello\nsim: text len=40 delay=500ms"}],
    });
    let request = tokio::spawn(async move {
        let resp = client()
            .post(url)
            .bearer_auth(API_KEY)
            .json(&body)
            .send()
            .await?;
        let status = resp.status().as_u16();
        let json: Value = resp.json().await?;
        Ok::<_, reqwest::Error>((status, json))
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    env.gateway.trigger_shutdown();
    let (status, json) = request.await.unwrap().unwrap();
    assert_eq!(status, 200, "{json}");
    assert!(json["choices"][0]["message"]["content"]
        .as_str()
        .is_some_and(|t| !t.is_empty()));
    env.gateway.stop().await.unwrap();
}

#[tokio::test]
async fn shutdown_cuts_requests_after_the_grace_period() {
    let (config, _data) = full_mode_gateway_config(&[("SHUTDOWN_GRACE", "300ms")]);
    let mut gw = Gateway::start(config).await;
    let never_ending = futures::stream::unfold((), |()| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Some((Ok::<_, std::io::Error>(vec![b' '; 1]), ()))
    });
    let url = gw.url("/v1/chat/completions");
    let request = tokio::spawn(async move {
        client()
            .post(url)
            .body(reqwest::Body::wrap_stream(never_ending))
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    gw.trigger_shutdown();
    for _ in 0..100 {
        if gw.finished() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gw.finished(), "serve did not return after the grace period");
    assert!(started.elapsed() < Duration::from_secs(2));
    gw.stop().await.unwrap();
    request.abort();
}

// ---- the binary ----

fn gateway_bin() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gateway"));
    // No inherited configuration and no `.env` from the working directory.
    cmd.env_clear().current_dir(std::env::temp_dir());
    cmd
}

#[tokio::test]
async fn healthcheck_exit_codes() {
    let (config, _data) = full_mode_gateway_config(&[]);
    let gw = Gateway::start(config).await;
    let port = gw.addr.port().to_string();
    let status = tokio::task::spawn_blocking(move || {
        gateway_bin()
            .arg("healthcheck")
            .env("SERVER_PORT", port)
            .status()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(0));
    gw.stop().await.unwrap();

    let port = free_port().to_string();
    let out = tokio::task::spawn_blocking(move || {
        gateway_bin()
            .arg("healthcheck")
            .env("SERVER_PORT", port)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_bad_value_stops_the_binary_naming_the_variable() {
    let out = gateway_bin()
        .env("HTTP_MAX_RETRIES", "lots")
        .env("FIRST_TOKEN_TIMEOUT", "soon")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("HTTP_MAX_RETRIES"), "{stderr}");
    assert!(stderr.contains("FIRST_TOKEN_TIMEOUT"), "{stderr}");
    assert!(!stderr.contains("lots"), "{stderr}");

    let out = gateway_bin().env("GATEWAY_MODE", "proxy").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PROXY_API_KEY"));
}

#[test]
fn help_lists_the_commands() {
    let out = gateway_bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["serve", "login", "healthcheck"] {
        assert!(text.contains(word), "{text}");
    }
}

#[test]
fn the_binary_serves_and_stops_on_sigterm() {
    let dir = TempDir::new();
    let port = free_port();
    let child = gateway_bin()
        .env("SERVER_HOST", "127.0.0.1")
        .env("SERVER_PORT", port.to_string())
        .env("DATA_DIR", dir.path())
        .env("LOG_FORMAT", "json")
        .env("DEBUG_MODE", "all")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut healthy = false;
    for _ in 0..100 {
        let ok = gateway_bin()
            .arg("healthcheck")
            .env("SERVER_PORT", port.to_string())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        if ok {
            healthy = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // A request whose body holds a secret: logged (DEBUG_MODE=all), masked.
    if healthy {
        use std::io::{Read as _, Write as _};
        let body = r#"{"model":"x","api_key":"sk-topsecret1234567"}"#;
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    }
    // The shell's built-in `kill`: no dependency on a `kill` binary.
    let killed = std::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(healthy, "the binary never became healthy");
    assert_eq!(out.status.code(), Some(0));
    // JSON log lines, each carrying its request id inside the request span.
    let logs = String::from_utf8_lossy(&out.stdout);
    let access: Vec<Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["path"] == "/health")
        .collect();
    assert!(!access.is_empty(), "{logs}");
    assert!(access[0]["span"]["request_id"].as_str().is_some(), "{logs}");
    assert_eq!(access[0]["status"], 200);
    assert!(!logs.contains("topsecret"), "{logs}");
    let body_line = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| {
            v["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("request body"))
        })
        .unwrap_or_else(|| panic!("no body line in {logs}"));
    assert!(body_line["message"]
        .as_str()
        .unwrap()
        .contains(r#""api_key":"***""#));
    assert_eq!(body_line["status"], 503);
}
