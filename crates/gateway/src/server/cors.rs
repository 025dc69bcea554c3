//! CORS (spec 4.4 item 2): every response carries
//! `Access-Control-Allow-Origin: *`, `Access-Control-Allow-Methods: *` and
//! `Access-Control-Allow-Headers: *`, errors included; an `OPTIONS` request is
//! answered here with 204, before authentication.
//!
//! On a preflight the requested headers are listed after the `*`
//! (`*, authorization, ...`): browsers do not let the `*` wildcard cover
//! `Authorization`, and a browser client of the chat-completions format sends
//! its key there.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;

use super::Next;

const ANY: HeaderValue = HeaderValue::from_static("*");
/// Browsers may cache a preflight answer this long (seconds).
const MAX_AGE: HeaderValue = HeaderValue::from_static("86400");

fn add_cors(headers: &mut HeaderMap) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY);
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, ANY);
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, ANY);
}

/// The CORS middleware.
pub(crate) async fn cors(request: Request, next: impl Next) -> Response {
    if request.method() == Method::OPTIONS {
        let requested = request
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "*")
            .and_then(|v| HeaderValue::from_str(&format!("*, {v}")).ok());
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        let headers = response.headers_mut();
        add_cors(headers);
        if let Some(list) = requested {
            headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, list);
        }
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, MAX_AGE);
        return response;
    }
    let mut response = next.run(request).await;
    add_cors(response.headers_mut());
    response
}
