//! SSO sign-in over HTTP against the simulated identity provider (spec 5.3):
//! the first user becomes Admin, later users are Users once their domain is
//! allowlisted, link mode, the redirect URI, and an unconfigured provider.

use serde_json::json;
use upstream_sim::idp::config::subject_for;

use crate::both_stores;
use crate::common::{FullEnv, TestDb, ADMIN_EMAIL};
use crate::sso_support::{me, open_callback, sign_in_as, to_callback, walk, SsoEnv};

both_stores!(
    first_sign_in_creates_the_admin,
    later_users_need_an_allowlisted_domain,
    link_mode
);

async fn first_sign_in_creates_the_admin(db: TestDb) {
    let env = SsoEnv::start(db).await;
    let status: serde_json::Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["auth_google_enabled"], true);
    assert_eq!(status["setup_complete"], false);

    let (landing, ui) = sign_in_as(&env, "First@Corp.example").await;
    assert_eq!(landing.status, 302, "{landing:?}");
    assert_eq!(landing.location, "/_ui/");
    assert!(landing.sets_session(), "{landing:?}");
    assert!(landing.cookies.iter().any(|c| c.starts_with("csrf_token=")));
    // The flow cookie is spent.
    assert!(landing
        .cookies
        .iter()
        .any(|c| c.starts_with("gw_sso_flow=;") && c.contains("Max-Age=0")));

    let (status, who) = me(&ui).await;
    assert_eq!(status, 200, "{who}");
    assert_eq!(who["email"], "first@corp.example");
    assert_eq!(who["role"], "Admin");
    assert_eq!(who["auth_method"], "sso");
    let status: serde_json::Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["setup_complete"], true);

    // What the provider was asked.
    let requests = env.sim.idp_requests();
    let authorize = requests.iter().find(|r| r.path == "/authorize").unwrap();
    assert_eq!(authorize.param("response_type"), Some("code"));
    assert_eq!(authorize.param("scope"), Some("openid email profile"));
    assert_eq!(authorize.param("code_challenge_method"), Some("S256"));
    assert_eq!(authorize.param("code_challenge").map(str::len), Some(43));
    assert!(authorize.param("nonce").is_some_and(|n| n.len() >= 43));
    assert!(authorize.param("state").is_some_and(|s| s.len() >= 43));
    let redirect_uri = format!("{}/_ui/api/auth/google/callback", env.env.gateway.base);
    assert_eq!(authorize.param("redirect_uri"), Some(redirect_uri.as_str()));
    assert!(landing.callback_url.starts_with(&redirect_uri));
    let token = requests.iter().find(|r| r.path == "/token").unwrap();
    assert_eq!(token.param("grant_type"), Some("authorization_code"));
    assert_eq!(token.param("redirect_uri"), Some(redirect_uri.as_str()));
    assert_eq!(token.param("code_verifier").map(str::len), Some(43));
    assert!(token
        .authorization
        .as_deref()
        .unwrap()
        .starts_with("Basic "));
    assert!(
        token.param("client_secret").is_none(),
        "the secret went in the form"
    );
}

async fn later_users_need_an_allowlisted_domain(db: TestDb) {
    let env = SsoEnv::start(db).await;
    let (landing, admin) = sign_in_as(&env, "boss@corp.example").await;
    assert_eq!(landing.location, "/_ui/");

    // With an admin, an empty allowlist admits no new account.
    let (landing, ui) = sign_in_as(&env, "dev@corp.example").await;
    assert_eq!(landing.error().as_deref(), Some("sso_domain_not_allowed"));
    assert!(!landing.sets_session());
    assert_eq!(me(&ui).await.0, 401);

    let resp = admin
        .post("/_ui/api/domains", json!({"domain": "corp.example"}))
        .await;
    assert_eq!(resp.status(), 200);
    let (landing, ui) = sign_in_as(&env, "dev@corp.example").await;
    assert_eq!(landing.location, "/_ui/", "{landing:?}");
    let (_, who) = me(&ui).await;
    assert_eq!(who["role"], "User");
    assert_eq!(who["auth_method"], "sso");

    // Another domain stays out; the listed one does not admit subdomains.
    let (landing, _) = sign_in_as(&env, "x@sub.corp.example").await;
    assert_eq!(landing.error().as_deref(), Some("sso_domain_not_allowed"));

    // An existing account signs in again whatever the list says.
    let resp = admin.delete("/_ui/api/domains/corp.example").await;
    assert_eq!(resp.status(), 200);
    let (landing, ui) = sign_in_as(&env, "dev@corp.example").await;
    assert_eq!(landing.location, "/_ui/");
    assert_eq!(me(&ui).await.1["email"], "dev@corp.example");

    let store = env.env.db.store().await;
    assert_eq!(store.users().count().await.unwrap(), 2);
    store.close().await;
}

async fn link_mode(db: TestDb) {
    let env = SsoEnv::with_admin(db).await;
    let admin = env.admin().await;

    // Not signed in: no link.
    assert_eq!(
        env.ui().get("/_ui/api/auth/google/link").await.status(),
        401
    );

    // A different email is refused and links nothing.
    env.sim.idp_set_user("someone@else.example", true);
    let landing = walk(&admin, "/_ui/api/auth/google/link").await;
    assert_eq!(landing.error().as_deref(), Some("sso_link_refused"));

    env.sim.idp_set_user(ADMIN_EMAIL, true);
    let landing = walk(&admin, "/_ui/api/auth/google/link").await;
    assert_eq!(landing.location, "/_ui/?sso=linked", "{landing:?}");
    assert!(!landing.sets_session(), "linking keeps the current session");
    assert_eq!(me(&admin).await.0, 200);

    let store = env.env.db.store().await;
    let user = store
        .users()
        .find_by_email(ADMIN_EMAIL)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.sso_subject, Some(subject_for(ADMIN_EMAIL)));
    store.close().await;

    // The linked identity now signs in to the same account.
    let (landing, ui) = sign_in_as(&env, ADMIN_EMAIL).await;
    assert_eq!(landing.location, "/_ui/", "{landing:?}");
    let (_, who) = me(&ui).await;
    assert_eq!(who["user_id"], json!(user.id.to_string()));
    assert_eq!(who["role"], "Admin");
}

#[tokio::test]
async fn the_redirect_uri_follows_public_url_or_the_forwarded_headers() {
    let db = TestDb::sqlite();
    let env = SsoEnv::start_tuned(db, &[("PUBLIC_URL", "https://gw.example.com/")], |_| {}).await;
    let resp = env.ui().get("/_ui/api/auth/google").await;
    assert_eq!(resp.status(), 302);
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    let url = reqwest::Url::parse(&location).unwrap();
    let redirect = url
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .unwrap()
        .1
        .into_owned();
    assert_eq!(
        redirect,
        "https://gw.example.com/_ui/api/auth/google/callback"
    );
    // The flow cookie: HttpOnly, Lax (it must survive the cross-site return), scoped.
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("gw_sso_flow="), "{cookie}");
    for attr in [
        "HttpOnly",
        "SameSite=Lax",
        "Path=/_ui/api/auth/google",
        "Max-Age=600",
    ] {
        assert!(cookie.contains(attr), "{cookie}");
    }

    let db = TestDb::sqlite();
    let env = SsoEnv::start(db).await;
    let resp = env
        .ui()
        .http
        .get(env.env.url("/_ui/api/auth/google"))
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-host", "sso.example.org")
        .send()
        .await
        .unwrap();
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.contains(
            "redirect_uri=https%3A%2F%2Fsso.example.org%2F_ui%2Fapi%2Fauth%2Fgoogle%2Fcallback"
        ),
        "{location}"
    );
}

#[tokio::test]
async fn without_a_configured_provider_sign_in_says_so() {
    let env = FullEnv::start(TestDb::sqlite(), &[]).await;
    let status: serde_json::Value = env.ui().get("/_ui/api/status").await.json().await.unwrap();
    assert_eq!(status["auth_google_enabled"], false);
    let resp = env.ui().get("/_ui/api/auth/google").await;
    assert_eq!(resp.status(), 302);
    assert_eq!(
        resp.headers()["location"],
        "/_ui/login?error=sso_not_configured"
    );
}

#[tokio::test]
async fn a_callback_url_works_once_and_only_in_its_browser() {
    let env = SsoEnv::start(TestDb::sqlite()).await;
    env.sim.idp_set_user("first@corp.example", true);

    // Opened in another browser (no flow cookie): refused, and the attempt is spent.
    let starter = env.ui();
    let callback = to_callback(&starter, "/_ui/api/auth/google").await;
    let landing = open_callback(&env.ui(), &callback).await;
    assert_eq!(landing.error().as_deref(), Some("sso_state_invalid"));
    assert!(!landing.sets_session());
    let landing = open_callback(&starter, &callback).await;
    assert_eq!(landing.error().as_deref(), Some("sso_state_invalid"));

    // The right browser signs in once; replaying the callback fails.
    let ui = env.ui();
    let callback = to_callback(&ui, "/_ui/api/auth/google").await;
    assert_eq!(open_callback(&ui, &callback).await.location, "/_ui/");
    let replay = open_callback(&ui, &callback).await;
    assert_eq!(replay.error().as_deref(), Some("sso_state_invalid"));
    assert!(!replay.sets_session());

    // Unknown and missing states.
    for query in ["state=made-up&code=abc", "code=abc", ""] {
        let url = env
            .env
            .url(&format!("/_ui/api/auth/google/callback?{query}"));
        let landing = open_callback(&ui, &url).await;
        assert_eq!(
            landing.error().as_deref(),
            Some("sso_state_invalid"),
            "{query}"
        );
    }
}
