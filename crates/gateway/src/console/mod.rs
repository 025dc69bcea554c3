//! The web console under `/_ui/` (full deployment), served from the files
//! `build.rs` embedded ([`assets`]).
//!
//! - A file is answered in the best coding the client accepts (brotli, gzip,
//!   none; `Vary: Accept-Encoding`), with a strong `ETag` and 304 on a
//!   matching `If-None-Match`.
//! - Hashed build output (`/_ui/assets/*`) is cached for a year and marked
//!   `immutable`; everything else (`index.html`) is `no-cache`, so a new
//!   release is picked up on the next load.
//! - The single-page app's own routes (`/_ui/keys`, `/_ui/admin/users/...`)
//!   are extension-less `GET`s: they get `index.html`. A missing file with
//!   an extension is a 404, and `/_ui/api/*` never reaches here (its router
//!   answers, JSON always).
//! - Every answer carries a strict Content-Security-Policy (scripts, styles
//!   and connections from this origin only; images also as `data:` URLs for
//!   the 2FA QR code; no framing), `X-Content-Type-Options: nosniff`,
//!   `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY`.
//! - A binary built without the console (no Node where it was built) serves
//!   a page saying how to build it.

mod assets;

use assets::Asset;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse as _, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::error::GatewayError;

/// The content security policy of every console answer.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/// How long a hashed asset may be cached.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The console's routes: `/_ui` and everything under `/_ui/` but the API.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/_ui", get(|| async { Redirect::permanent("/_ui/") }))
        .route("/_ui/", get(serve))
        .route("/_ui/{*path}", get(serve))
}

async fn serve(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().strip_prefix("/_ui/").unwrap_or_default();
    if path == "api" || path.starts_with("api/") {
        // An API path no API route took: JSON, never the app's page.
        return GatewayError::NotFound(format!("no route for {}", uri.path())).into_response();
    }
    let mut response = if assets::built() {
        file(assets::ASSETS, path, &method, &headers)
    } else {
        notice()
    };
    secure(response.headers_mut());
    response
}

/// The file at `path` of `table`, or the app's `index.html` for one of its
/// routes.
fn file(table: &'static [Asset], path: &str, method: &Method, headers: &HeaderMap) -> Response {
    let wanted = if path.is_empty() { "index.html" } else { path };
    let asset = match assets::find(table, wanted) {
        Some(asset) => asset,
        None if is_app_route(wanted) => match assets::find(table, "index.html") {
            Some(index) => index,
            None => {
                return GatewayError::NotFound("the console has no index.html".into())
                    .into_response()
            }
        },
        None => {
            return GatewayError::NotFound(format!("no console file /_ui/{path}")).into_response()
        }
    };
    let cache = if asset.path.starts_with("assets/") {
        IMMUTABLE
    } else {
        "no-cache"
    };
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| etag_matches(tags, asset.etag))
    {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let accept = headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let (coding, bytes) = assets::negotiate(asset, accept);
        let body = if *method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(bytes)
        };
        let mut r = Response::new(body);
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        if let Some(name) = coding.header() {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
        }
        r
    };
    let h = response.headers_mut();
    h.insert(header::ETAG, HeaderValue::from_static(asset.etag));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    response
}

/// A route of the single-page app rather than a file: no extension in its
/// last segment.
fn is_app_route(path: &str) -> bool {
    !path.rsplit('/').next().unwrap_or_default().contains('.')
}

/// Whether an `If-None-Match` list names `etag` (or is `*`).
fn etag_matches(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

/// The page of a binary built without the console.
fn notice() -> Response {
    let mut response = Response::new(Body::from(NOTICE));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

const NOTICE: &str = "<!doctype html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Gateway console not built</title></head>
<body><main>
<h1>The web console is not part of this build</h1>
<p>This gateway binary was built without its web console (there was no <code>web/dist</code>
when it was compiled, usually because Node.js was not installed). The API under
<code>/_ui/api/</code> and <code>/v1</code> work as usual.</p>
<p>To build the console: install Node.js 20 or later, then run
<code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code> and build the gateway again
(<code>scripts/run</code> does both).</p>
</main></body></html>
";

/// The security headers of every console answer.
fn secure(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_routes_have_no_extension() {
        assert!(is_app_route("keys"));
        assert!(is_app_route("admin/users/123"));
        assert!(!is_app_route("index.html"));
        assert!(!is_app_route("assets/app-1a2b.js"));
        assert!(!is_app_route("favicon.svg"));
    }

    /// A console of two files, as build.rs would embed it.
    static TABLE: &[Asset] = &[
        Asset {
            path: "assets/app-1a2b.js",
            content_type: "text/javascript; charset=utf-8",
            etag: "\"js1\"",
            raw: b"console.log(1)",
            brotli: Some(b"BR"),
            gzip: Some(b"GZ"),
        },
        Asset {
            path: "index.html",
            content_type: "text/html; charset=utf-8",
            etag: "\"idx1\"",
            raw: b"<!doctype html>",
            brotli: None,
            gzip: Some(b"GZ-INDEX"),
        },
    ];

    fn get(path: &str, headers: &[(&str, &str)]) -> Response {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        file(TABLE, path, &Method::GET, &map)
    }

    fn header<'a>(r: &'a Response, name: &str) -> Option<&'a str> {
        r.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn hashed_assets_are_immutable_and_compressed() {
        let r = get("assets/app-1a2b.js", &[("accept-encoding", "gzip, br")]);
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "content-encoding"), Some("br"));
        assert_eq!(header(&r, "cache-control"), Some(IMMUTABLE));
        assert_eq!(header(&r, "etag"), Some("\"js1\""));
        assert_eq!(header(&r, "vary"), Some("Accept-Encoding"));
        assert_eq!(header(&r, "content-length"), Some("2"));
        let r = get("assets/app-1a2b.js", &[]);
        assert_eq!(header(&r, "content-encoding"), None);
        assert_eq!(header(&r, "content-length"), Some("14"));
    }

    #[test]
    fn the_index_is_not_cached_and_serves_the_app_routes() {
        for path in ["", "index.html", "keys", "admin/users/42"] {
            let r = get(path, &[("accept-encoding", "gzip")]);
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(header(&r, "cache-control"), Some("no-cache"), "{path}");
            assert_eq!(header(&r, "etag"), Some("\"idx1\""), "{path}");
            assert_eq!(header(&r, "content-encoding"), Some("gzip"), "{path}");
        }
        // A missing file is not the app.
        assert_eq!(
            get("assets/gone-9z.js", &[]).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(get("favicon.ico", &[]).status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn a_matching_etag_is_304() {
        let r = get(
            "assets/app-1a2b.js",
            &[("if-none-match", "\"other\", \"js1\"")],
        );
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(header(&r, "etag"), Some("\"js1\""));
        let r = get("assets/app-1a2b.js", &[("if-none-match", "\"other\"")]);
        assert_eq!(r.status(), StatusCode::OK);
    }

    #[test]
    fn etags_match_as_the_header_lists_them() {
        assert!(etag_matches("\"a\", \"b\"", "\"b\""));
        assert!(etag_matches("W/\"b\"", "\"b\""));
        assert!(etag_matches("*", "\"b\""));
        assert!(!etag_matches("\"c\"", "\"b\""));
    }
}
