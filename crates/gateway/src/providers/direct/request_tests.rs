use super::*;

#[test]
fn betas_are_merged_once_each() {
    assert_eq!(merge_betas(None, None), None);
    assert_eq!(
        merge_betas(None, Some(OAUTH_BETA)).as_deref(),
        Some("oauth-2025-04-20")
    );
    assert_eq!(
        merge_betas(
            Some("interleaved-thinking-2025-05-14, oauth-2025-04-20,,x"),
            Some(OAUTH_BETA)
        )
        .as_deref(),
        Some("interleaved-thinking-2025-05-14,oauth-2025-04-20,x")
    );
    assert_eq!(merge_betas(Some("a,b"), None).as_deref(), Some("a,b"));
}

#[test]
fn endpoints_follow_each_format() {
    let mv = DirectProvider::new(
        ProviderId::MessagesVendor,
        "https://api.example/",
        Auth::ApiKey(Secret::new("k")),
    );
    assert_eq!(
        mv.url("https://api.example", Endpoint::Chat),
        "https://api.example/v1/messages"
    );
    assert_eq!(
        mv.url("https://api.example", Endpoint::CountTokens),
        "https://api.example/v1/messages/count_tokens"
    );
    assert_eq!(
        mv.url("https://api.example", Endpoint::Models),
        "https://api.example/v1/models"
    );
    let custom = DirectProvider::new(ProviderId::Custom, "http://h/v1", Auth::Bearer(None));
    assert_eq!(
        custom.url("http://h/v1", Endpoint::Chat),
        "http://h/v1/chat/completions"
    );
    assert_eq!(
        custom.url("http://h/v1", Endpoint::Models),
        "http://h/v1/models"
    );
}

#[tokio::test]
async fn api_key_and_bearer_headers() {
    let extras = CallExtras {
        anthropic_beta: Some("prompt-caching-2024-07-31".into()),
        anthropic_version: None,
        stream: true,
        ..CallExtras::default()
    };
    let mv = DirectProvider::new(
        ProviderId::MessagesVendor,
        "https://api.example",
        Auth::ApiKey(Secret::new("sk-ant-x")),
    );
    let (base, h, _) = mv.prepare(&extras).await.unwrap();
    assert_eq!(base, "https://api.example");
    assert_eq!(h["x-api-key"], "sk-ant-x");
    assert!(h["x-api-key"].is_sensitive());
    assert_eq!(h["anthropic-version"], ANTHROPIC_VERSION);
    assert_eq!(h["anthropic-beta"], "prompt-caching-2024-07-31");
    assert_eq!(h[ACCEPT], "text/event-stream");
    assert!(h.get(AUTHORIZATION).is_none());

    let oauth = super::super::credentials::oauth::OAuthSession::new(
        reqwest::Client::new(),
        super::super::credentials::oauth::OAuthSettings {
            token_url: "http://127.0.0.1:9/none".into(),
            client_id: "c".into(),
            refresh_ahead: std::time::Duration::from_secs(300),
            timeout: std::time::Duration::from_secs(1),
        },
        Secret::new("sk-ant-oat-1"),
        None,
        None,
    );
    let mv = DirectProvider::new(
        ProviderId::MessagesVendor,
        "https://api.example",
        Auth::OAuth(Arc::new(oauth)),
    );
    let extras = CallExtras {
        anthropic_version: Some("2024-01-01".into()),
        ..extras
    };
    let (_, h, _) = mv.prepare(&extras).await.unwrap();
    assert_eq!(h[AUTHORIZATION], "Bearer sk-ant-oat-1");
    assert!(h.get("x-api-key").is_none());
    assert_eq!(
        h["anthropic-beta"],
        "prompt-caching-2024-07-31,oauth-2025-04-20"
    );
    assert_eq!(h["anthropic-version"], "2024-01-01");

    let custom = DirectProvider::new(ProviderId::Custom, "http://h/v1", Auth::Bearer(None));
    let (_, h, _) = custom.prepare(&CallExtras::default()).await.unwrap();
    assert!(h.get(AUTHORIZATION).is_none());
    assert_eq!(h[ACCEPT], "application/json");
    assert!(h.get("anthropic-version").is_none());
    let openai = DirectProvider::new(
        ProviderId::CompletionsVendor,
        "http://h/v1",
        Auth::Bearer(Some(Secret::new("sk-o"))),
    );
    let (_, h, _) = openai.prepare(&CallExtras::default()).await.unwrap();
    assert_eq!(h[AUTHORIZATION], "Bearer sk-o");
}

#[test]
fn assistant_headers_say_vision_and_initiator() {
    let mut h = HeaderMap::new();
    assistant_headers(
        &mut h,
        &CallExtras {
            vision: true,
            initiator: Initiator::Agent,
            ..CallExtras::default()
        },
    );
    assert_eq!(h["copilot-integration-id"], "vscode-chat");
    assert_eq!(h["editor-version"], assistant_token::EDITOR_VERSION);
    assert_eq!(
        h["editor-plugin-version"],
        assistant_token::EDITOR_PLUGIN_VERSION
    );
    assert_eq!(h["user-agent"], assistant_token::USER_AGENT);
    assert_eq!(h["openai-intent"], "conversation-panel");
    assert_eq!(
        h["x-github-api-version"],
        assistant_token::GITHUB_API_VERSION
    );
    assert_eq!(h["copilot-vision-request"], "true");
    assert_eq!(h["x-initiator"], "agent");
    assert_eq!(h["x-request-id"].len(), 36);
    let mut h = HeaderMap::new();
    assistant_headers(&mut h, &CallExtras::default());
    assert!(h.get("copilot-vision-request").is_none());
    assert_eq!(h["x-initiator"], "user");
}
