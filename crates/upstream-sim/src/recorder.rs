//! Records every request a listener receives (method, path, query, headers,
//! body, time) so tests can assert what the gateway actually sent.
//!
//! The recording middleware reads the body once, parses it as JSON once, and
//! hands both to the handler through a request extension ([`ReceivedBody`]), so
//! recording costs no second parse.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use crate::http::form_decode;

/// Largest body the simulator reads (bigger bodies are answered 413 before any handler).
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Which simulated service received a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// The primary chat API (`base_url`).
    PrimaryApi,
    /// The SSO OIDC service (`oidc_url`).
    Oidc,
    /// The messages vendor's API (`messages_vendor_url`).
    MessagesVendor,
    /// The messages vendor's OAuth token endpoint (`messages_vendor_oauth_url`).
    MessagesVendorOauth,
    /// The completions vendor's API (`completions_vendor_url`).
    CompletionsVendor,
    /// The custom OpenAI-compatible endpoint (`custom_url`).
    Custom,
    /// The assistant vendor's token exchange (`assistant_vendor_token_url`).
    AssistantVendorCodeHost,
    /// The assistant vendor's chat API (`assistant_vendor_api_url`).
    AssistantVendorApi,
    /// The guardrail service (`guardrail_url`).
    Guardrail,
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub service: Service,
    pub method: String,
    /// Path without the query, e.g. `/generateAssistantResponse`.
    pub path: String,
    /// Raw query string without `?`, if any.
    pub query: Option<String>,
    /// Headers in arrival order; names lower-case.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Bytes,
    /// The body parsed as JSON, when it is JSON.
    pub json: Option<Arc<Value>>,
    /// When the request was received.
    pub at: SystemTime,
}

impl RecordedRequest {
    /// First value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The credential the request carried: `x-api-key`, else the credential
    /// of `Authorization: <scheme> <credential>` (`Bearer`, `token`, …).
    pub fn credential(&self) -> Option<&str> {
        if let Some(key) = self.header("x-api-key") {
            return Some(key);
        }
        let (_, credential) = self.header("authorization")?.trim().split_once(' ')?;
        Some(credential.trim()).filter(|c| !c.is_empty())
    }

    /// The parsed JSON body, if the body was JSON.
    pub fn json(&self) -> Option<&Value> {
        self.json.as_deref()
    }

    /// Value of one query parameter (not percent-decoded beyond `+`/`%XX` of ASCII).
    pub fn query_param(&self, name: &str) -> Option<String> {
        let query = self.query.as_deref()?;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == name).then(|| form_decode(v))
        })
    }
}

/// The body of the current request, read once by the middleware.
#[derive(Debug, Clone)]
pub(crate) struct ReceivedBody {
    pub raw: Bytes,
    pub json: Option<Arc<Value>>,
}

/// The fields of a JSON object body or of a form-encoded body (strings only;
/// other JSON values are kept as their JSON text). `None` when it is neither.
pub(crate) fn fields(body: &ReceivedBody) -> Option<HashMap<String, String>> {
    if let Some(json) = body.json.as_deref() {
        let obj = json.as_object()?;
        return Some(
            obj.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect(),
        );
    }
    let text = std::str::from_utf8(&body.raw).ok()?.trim();
    if text.is_empty() || text.starts_with('{') || text.starts_with('[') {
        return None;
    }
    Some(
        text.split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (form_decode(k), form_decode(v))
            })
            .collect(),
    )
}

/// A bounded log of requests shared by every listener of one simulator.
#[derive(Debug)]
pub(crate) struct Recorder {
    limit: usize,
    entries: Mutex<VecDeque<RecordedRequest>>,
}

impl Recorder {
    pub fn new(limit: usize) -> Self {
        Recorder {
            limit,
            entries: Mutex::new(VecDeque::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<RecordedRequest>> {
        // A poisoned lock only means a panic elsewhere; the log itself is still usable.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn push(&self, req: RecordedRequest) {
        if self.limit == 0 {
            return;
        }
        let mut entries = self.lock();
        while entries.len() >= self.limit {
            entries.pop_front();
        }
        entries.push_back(req);
    }

    pub fn all(&self) -> Vec<RecordedRequest> {
        self.lock().iter().cloned().collect()
    }

    pub fn to_path(&self, path: &str) -> Vec<RecordedRequest> {
        self.lock()
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// State of the recording middleware of one listener.
#[derive(Clone)]
pub(crate) struct RecordLayer {
    pub service: Service,
    pub recorder: Arc<Recorder>,
}

/// Middleware: read the body, parse it, record the request, and pass both on.
pub(crate) async fn record(State(layer): State<RecordLayer>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let raw = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(raw) => raw,
        Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    let json = parse_json(&raw).map(Arc::new);
    layer.recorder.push(RecordedRequest {
        service: layer.service,
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: raw.clone(),
        json: json.clone(),
        at: SystemTime::now(),
    });
    parts.extensions.insert(ReceivedBody {
        raw: raw.clone(),
        json,
    });
    next.run(Request::from_parts(parts, Body::from(raw))).await
}

fn parse_json(raw: &[u8]) -> Option<Value> {
    let first = raw.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' && *first != b'[' {
        return None;
    }
    serde_json::from_slice(raw).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str, query: Option<&str>) -> RecordedRequest {
        RecordedRequest {
            service: Service::PrimaryApi,
            method: "GET".into(),
            path: path.into(),
            query: query.map(str::to_owned),
            headers: vec![("authorization".into(), "Bearer x".into())],
            body: Bytes::new(),
            json: None,
            at: SystemTime::now(),
        }
    }

    #[test]
    fn keeps_at_most_limit_dropping_oldest() {
        let rec = Recorder::new(2);
        rec.push(req("/a", None));
        rec.push(req("/b", None));
        rec.push(req("/c", None));
        let paths: Vec<_> = rec.all().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/b", "/c"]);
        assert_eq!(rec.to_path("/c").len(), 1);
        rec.clear();
        assert!(rec.all().is_empty());
    }

    #[test]
    fn zero_limit_records_nothing() {
        let rec = Recorder::new(0);
        rec.push(req("/a", None));
        assert!(rec.all().is_empty());
    }

    #[test]
    fn header_and_query_lookup() {
        let r = req(
            "/ListAvailableModels",
            Some("origin=AI_EDITOR&profileArn=arn%3Aaws%3Ax&x"),
        );
        assert_eq!(r.header("Authorization"), Some("Bearer x"));
        assert_eq!(r.query_param("origin").as_deref(), Some("AI_EDITOR"));
        assert_eq!(r.query_param("profileArn").as_deref(), Some("arn:aws:x"));
        assert_eq!(r.query_param("x").as_deref(), Some(""));
        assert_eq!(r.query_param("missing"), None);
    }

    #[test]
    fn credential_of_either_header() {
        let mut r = req("/v1/models", None);
        assert_eq!(r.credential(), Some("x"));
        r.headers.push(("x-api-key".into(), "sk-ant-1".into()));
        assert_eq!(r.credential(), Some("sk-ant-1"));
        r.headers = vec![("authorization".into(), "token gho_1".into())];
        assert_eq!(r.credential(), Some("gho_1"));
        r.headers = vec![("authorization".into(), "Bearer ".into())];
        assert_eq!(r.credential(), None);
    }

    #[test]
    fn only_json_bodies_are_parsed() {
        assert!(parse_json(b"  {\"a\":1}").is_some());
        assert!(parse_json(b"a=1&b=2").is_none());
        assert!(parse_json(b"{broken").is_none());
        assert!(parse_json(b"").is_none());
    }

    fn received(raw: &'static [u8]) -> ReceivedBody {
        ReceivedBody {
            raw: Bytes::from_static(raw),
            json: serde_json::from_slice(raw).ok().map(Arc::new),
        }
    }

    #[test]
    fn fields_of_json_and_form_bodies() {
        let f = fields(&received(br#"{"grant_type":"refresh_token","n":1}"#)).unwrap();
        assert_eq!(f["grant_type"], "refresh_token");
        assert_eq!(f["n"], "1");
        let f = fields(&received(
            b"grant_type=refresh_token&refresh_token=a%2Bb+c&x",
        ))
        .unwrap();
        assert_eq!(f["refresh_token"], "a+b c");
        assert_eq!(f["x"], "");
        assert!(fields(&received(b"")).is_none());
        assert!(fields(&received(b"[1]")).is_none());
    }
}
