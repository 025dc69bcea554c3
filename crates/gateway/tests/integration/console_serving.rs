//! The web console served by the binary under `/_ui/` (issue 17): the
//! redirect of `/_ui`, the app's routes answered with `index.html`, JSON
//! (never HTML) under `/_ui/api/`, the security headers, and proxy mode
//! without a console. Whether this build embedded `web/dist` or serves the
//! "not built" notice, the same rules hold; the file-level rules (codings,
//! ETags, caching) are unit-tested in `console`.

use crate::common::*;

async fn full_gateway() -> (Gateway, TempDir) {
    let dir = TempDir::new();
    let config = config_from([("DATA_DIR", dir.path().display().to_string())]);
    (Gateway::start(config).await, dir)
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn assert_secure(resp: &reqwest::Response) {
    let h = resp.headers();
    let csp = h["content-security-policy"].to_str().unwrap();
    for part in [
        "default-src 'self'",
        "script-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["x-frame-options"], "DENY");
}

#[tokio::test]
async fn the_console_is_served_with_its_rules() {
    let (gw, _dir) = full_gateway().await;
    let http = no_redirects();

    let resp = http.get(gw.url("/_ui")).send().await.unwrap();
    assert_eq!(resp.status(), 308);
    assert_eq!(resp.headers()["location"], "/_ui/");

    let index = http.get(gw.url("/_ui/")).send().await.unwrap();
    assert_eq!(index.status(), 200);
    assert_secure(&index);
    assert!(index.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(index.headers()["cache-control"], "no-cache");
    let page = index.text().await.unwrap();

    // The app's own routes get the same page.
    for route in ["/_ui/keys", "/_ui/admin/users/123", "/_ui/setup-2fa"] {
        let resp = http.get(gw.url(route)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{route}");
        assert_secure(&resp);
        assert_eq!(resp.text().await.unwrap(), page, "{route}");
    }

    // The API is JSON, a path it does not know included.
    let resp = http.get(gw.url("/_ui/api/nope")).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "not_found");
    let resp = http.get(gw.url("/_ui/api/status")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");

    if page.contains("not part of this build") {
        // A build without web/dist: the notice says how to build it.
        assert!(page.contains("npm ci"), "{page}");
    } else {
        // A missing file with an extension is not the app.
        let resp = http
            .get(gw.url("/_ui/assets/missing-0000.js"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404);
        // The page's own script is served, precompressed, for a year.
        let script = page
            .split("src=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("index.html loads a script");
        assert!(script.starts_with("/_ui/assets/"), "{script}");
        let resp = http
            .get(gw.url(script))
            .header("accept-encoding", "br")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-encoding"], "br");
        assert_eq!(
            resp.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
        let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
        let resp = http
            .get(gw.url(script))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 304);
    }
    gw.stop().await.unwrap();
}

#[tokio::test]
async fn proxy_mode_has_no_console() {
    let env = ProxyEnv::start(&[]).await;
    let resp = client().get(env.url("/_ui/")).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.headers()["content-type"], "application/json");
}
