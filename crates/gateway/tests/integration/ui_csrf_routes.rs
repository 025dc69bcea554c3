//! CSRF on every mutating `/_ui/api` route (OWASP ASVS 4.0 13.2.3 / 3.5):
//! the routes are read from the router's own source, so a route added
//! tomorrow is checked without editing this test. Each is called by a
//! signed-in admin without the `X-CSRF-Token` header and must be refused
//! 403 `forbidden` before its handler runs; the only mutating routes that
//! answer otherwise are the public sign-in steps listed here.

use std::collections::BTreeSet;
use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use crate::common::{admin_env, FullEnv, TestDb};

/// The mutating calls that need no session, and so no CSRF token (spec
/// 4.3): the sign-in steps, first-admin setup, and the provider OAuth relay
/// (interfaces-full.md 2.1: its single-use `state` is the credential).
const PUBLIC: [&str; 4] = [
    "/auth/login",
    "/auth/login/2fa",
    "/providers/{provider}/relay",
    "/setup",
];

/// `(method, path below /_ui/api)` of every POST, PUT, PATCH and DELETE
/// route that `src/ui_api/` declares with `.route(path, handlers)`.
fn mutating_routes() -> Vec<(Method, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui_api");
    let mut routes = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(".route(") {
            let after = &rest[at + ".route(".len()..];
            let mut depth = 1;
            let end = after
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map(|(i, _)| i)
                .unwrap_or_else(|| panic!("unclosed .route( in {name}"));
            let call = &after[..end];
            let route = call.split('"').nth(1).unwrap().to_owned();
            let handlers = &call[call.find(',').unwrap()..];
            for (word, method) in [
                ("post(", Method::POST),
                ("put(", Method::PUT),
                ("patch(", Method::PATCH),
                ("delete(", Method::DELETE),
            ] {
                if handlers.contains(word) {
                    routes.push((method, route.clone()));
                }
            }
            rest = &after[end..];
        }
    }
    routes.sort_by(|a, b| (a.1.as_str(), a.0.as_str()).cmp(&(b.1.as_str(), b.0.as_str())));
    routes
}

/// A concrete path for a route pattern: each `{param}` filled in.
fn concrete(route: &str) -> String {
    route
        .split('/')
        .map(|segment| match segment {
            "{id}" => "00000000-0000-0000-0000-000000000000",
            s if s.starts_with('{') => "example.com",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_mutating_ui_route_needs_the_csrf_token() {
    let routes = mutating_routes();
    assert!(
        routes.len() >= 15,
        "the route scan found only {} mutating routes: is the router still \
         declared with .route(path, handlers) in src/ui_api/?",
        routes.len()
    );
    let env = FullEnv::start(TestDb::sqlite(), &admin_env()).await;
    let admin = env.admin().await;
    let mut answered = BTreeSet::new();
    for (method, route) in &routes {
        let url = format!("{}/_ui/api{}", env.gateway.base, concrete(route));
        let resp = admin
            .http
            .request(method.clone(), &url)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        let refused = status == 403
            && body["error"]["type"] == "forbidden"
            && body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("CSRF"));
        if !refused {
            answered.insert(route.as_str());
        }
    }
    assert_eq!(
        answered,
        PUBLIC.into_iter().collect::<BTreeSet<_>>(),
        "mutating routes that answered without a CSRF token (only the public \
         sign-in steps may)"
    );
    // The session survived every refused call.
    assert_eq!(admin.get("/_ui/api/auth/me").await.status(), 200);
}
