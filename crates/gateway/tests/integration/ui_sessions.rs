//! Sessions and CSRF over HTTP (spec 3.2, 5.5; interfaces.md 6): cookie
//! attributes, a new session id at every sign-in, CSRF missing or wrong,
//! logout everywhere, expiry, sliding extension, survival across restarts.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::{
    admin_env, client, totp_code, FullEnv, Gateway, TestDb, UiClient, ADMIN_EMAIL, ADMIN_PASSWORD,
    ADMIN_TOTP,
};

fn set_cookies(resp: &reqwest::Response) -> Vec<String> {
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// Both sign-in steps with a plain client; the second step's response.
async fn raw_sign_in(base: &str, offset: i64) -> reqwest::Response {
    let http = client();
    let body: Value = http
        .post(format!("{base}/_ui/api/auth/login"))
        .json(&json!({"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    http.post(format!("{base}/_ui/api/auth/login/2fa"))
        .json(&json!({"login_token": body["login_token"], "code": totp_code(ADMIN_TOTP, offset)}))
        .send()
        .await
        .unwrap()
}

/// 3.2 row 1, 5.5: both cookies with the documented attributes; `Secure`
/// by default and dropped by COOKIE_SECURE=false.
async fn cookie_attributes(db: TestDb) {
    let mut extra = admin_env();
    extra.push(("COOKIE_SECURE", "true"));
    let env = FullEnv::start(db, &extra).await;
    let resp = raw_sign_in(&env.gateway.base, 0).await;
    assert_eq!(resp.status(), 200);
    let cookies = set_cookies(&resp);
    assert_eq!(cookies.len(), 2, "{cookies:?}");
    let session = cookies
        .iter()
        .find(|c| c.starts_with("gw_session="))
        .unwrap();
    let id = session["gw_session=".len()..].split(';').next().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{session}");
    for attr in [
        "Path=/;",
        "Max-Age=86400",
        "SameSite=Strict",
        "HttpOnly",
        "Secure",
    ] {
        assert!(session.contains(attr), "{session} lacks {attr}");
    }
    let csrf = cookies
        .iter()
        .find(|c| c.starts_with("csrf_token="))
        .unwrap();
    for attr in ["Path=/_ui;", "Max-Age=86400", "SameSite=Strict", "Secure"] {
        assert!(csrf.contains(attr), "{csrf} lacks {attr}");
    }
    assert!(
        !csrf.contains("HttpOnly"),
        "scripts must read the CSRF cookie"
    );

    let mut config = env.config.clone();
    config.cookie_secure = false;
    let plain = Gateway::start(config).await;
    let resp = raw_sign_in(&plain.base, 1).await;
    assert_eq!(resp.status(), 200);
    assert!(set_cookies(&resp).iter().all(|c| !c.contains("Secure")));
}

/// Session fixation: a session id planted before sign-in is never used;
/// every sign-in makes a new id and CSRF token.
async fn new_session_id_on_every_sign_in(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let planted = uuid::Uuid::new_v4().to_string();
    let ui = env.ui();
    ui.plant(&format!("gw_session={planted}; Path=/"));
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 401);
    ui.login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 0)
        .await;
    let first = ui.session_id().unwrap();
    let first_csrf = ui.csrf().unwrap();
    assert_ne!(first, planted);
    let attacker = env.ui();
    attacker.plant(&format!("gw_session={planted}; Path=/"));
    assert_eq!(attacker.get("/_ui/api/auth/me").await.status(), 401);

    // Signing in again (same browser) gives another id and token.
    ui.login_totp(ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOTP, 1)
        .await;
    assert_ne!(ui.session_id().unwrap(), first);
    assert_ne!(ui.csrf().unwrap(), first_csrf);
}

/// CSRF: every mutating call needs the session's own token in X-CSRF-Token
/// (403 `forbidden` when missing or wrong); no session at all is 401.
async fn csrf_missing_or_wrong(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let admin = env.admin().await;
    let other = env.admin().await;
    let url = |p: &str| format!("{}{p}", env.gateway.base);
    let calls: Vec<(reqwest::Method, &str, Value)> = vec![
        (reqwest::Method::POST, "/_ui/api/auth/logout", json!({})),
        (
            reqwest::Method::POST,
            "/_ui/api/domains",
            json!({"domain": "example.com"}),
        ),
        (
            reqwest::Method::PUT,
            "/_ui/api/users/00000000-0000-0000-0000-000000000000/role",
            json!({"role": "User"}),
        ),
        (
            reqwest::Method::DELETE,
            "/_ui/api/domains/example.com",
            json!({}),
        ),
        (
            reqwest::Method::POST,
            "/_ui/api/auth/password/change",
            json!({}),
        ),
    ];
    let wrong_tokens = [None, Some("wrong".to_owned()), Some(other.csrf().unwrap())];
    for (method, path, body) in &calls {
        for token in &wrong_tokens {
            let mut rb = admin.http.request(method.clone(), url(path)).json(body);
            if let Some(t) = token {
                rb = rb.header("x-csrf-token", t);
            }
            let resp = rb.send().await.unwrap();
            assert_eq!(resp.status(), 403, "{method} {path} with {token:?}");
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["type"], "forbidden");
        }
        // Without a session: 401.
        let resp = client()
            .request(method.clone(), url(path))
            .header("x-csrf-token", admin.csrf().unwrap())
            .json(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{method} {path}");
    }
    // The right token works; reads need none.
    let resp = admin
        .post("/_ui/api/domains", json!({"domain": "example.com"}))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        admin
            .http
            .get(url("/_ui/api/domains"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // The session is still usable: nothing above changed it.
    assert_eq!(admin.get("/_ui/api/auth/me").await.status(), 200);
}

/// 3.2 row 3: logout ends the session on every replica and clears both cookies.
async fn logout_ends_the_session_everywhere(db: TestDb) {
    let env = FullEnv::start(db, &admin_env()).await;
    let replica = env.replica().await;
    let ui = env.admin().await;
    let on_replica: UiClient = ui.at(&replica.base);
    assert_eq!(on_replica.get("/_ui/api/auth/me").await.status(), 200);
    let session = ui.session_id().unwrap();

    let resp = ui.post("/_ui/api/auth/logout", json!({})).await;
    assert_eq!(resp.status(), 200);
    let cookies = set_cookies(&resp);
    assert!(cookies
        .iter()
        .any(|c| c.starts_with("gw_session=;") && c.contains("Max-Age=0")));
    assert!(cookies
        .iter()
        .any(|c| c.starts_with("csrf_token=;") && c.contains("Max-Age=0")));
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"ok": true}));

    // The old cookie is dead here and on the other replica.
    let stale = UiClient::new(&replica.base);
    stale.plant(&format!("gw_session={session}; Path=/"));
    let resp = stale.get("/_ui/api/auth/me").await;
    assert_eq!(resp.status(), 401);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "auth_error");
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 401);
}

/// 3.2 row 4: after the TTL the session is gone (401).
async fn expired_session(db: TestDb) {
    let env = FullEnv::start_tuned(db, &admin_env(), |c| {
        c.tuning.auth.session_ttl = Duration::from_secs(2);
    })
    .await;
    let ui = env.admin().await;
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 200);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let resp = ui.get("/_ui/api/auth/me").await;
    assert_eq!(resp.status(), 401);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "auth_error");
}

/// 3.2 row 2: a session older than `session_refresh_after` is extended on
/// its next request, and both cookies are set again.
async fn sliding_extension(db: TestDb) {
    let env = FullEnv::start_tuned(db, &admin_env(), |c| {
        c.tuning.auth.session_ttl = Duration::from_secs(4);
        c.tuning.auth.session_refresh_after = Duration::from_secs(2);
    })
    .await;
    let ui = env.admin().await;
    let id = ui.session_id().unwrap();
    let resp = ui.get("/_ui/api/auth/me").await;
    assert!(
        set_cookies(&resp).is_empty(),
        "a young session is not refreshed"
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let resp = ui.get("/_ui/api/auth/me").await;
    assert_eq!(resp.status(), 200);
    let cookies = set_cookies(&resp);
    assert_eq!(cookies.len(), 2, "{cookies:?}");
    assert!(cookies[0].starts_with(&format!("gw_session={id};")));
    assert!(cookies.iter().all(|c| c.contains("Max-Age=4")));
    // Past the original expiry, the extended session still works.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(ui.get("/_ui/api/auth/me").await.status(), 200);
}

/// Sessions are in the store: a restarted gateway knows them.
async fn sessions_survive_a_restart(db: TestDb) {
    let mut env = FullEnv::start(db, &admin_env()).await;
    let ui = env.admin().await;
    let fresh = env.replica().await;
    let old = std::mem::replace(&mut env.gateway, fresh);
    old.stop().await.unwrap();
    let ui = ui.at(&env.gateway.base);
    let me: Value = ui.get("/_ui/api/auth/me").await.json().await.unwrap();
    assert_eq!(me["email"], ADMIN_EMAIL);
    let resp = ui.post("/_ui/api/auth/logout", json!({})).await;
    assert_eq!(resp.status(), 200);
}

crate::both_stores!(
    cookie_attributes,
    new_session_id_on_every_sign_in,
    csrf_missing_or_wrong,
    logout_ends_the_session_everywhere,
    expired_session,
    sliding_extension,
    sessions_survive_a_restart,
);
