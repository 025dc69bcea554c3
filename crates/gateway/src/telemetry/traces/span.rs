//! The spans the gateway makes: a request's server span ([`ServerSpan`],
//! shared by the parts of the request that add to it and ended when the
//! last of them lets go), an upstream attempt's client span
//! ([`ClientSpan`]) and a guardrail check's internal span
//! ([`InternalSpan`]). A finished span becomes a [`SpanRecord`] for the
//! exporter.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use super::context::SpanContext;
use super::export::Exporter;

/// OTLP's `SpanKind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanKind {
    Internal = 1,
    Server = 2,
    Client = 3,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AttrValue {
    Str(String),
    Int(i64),
}

/// A span's parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParentRef {
    pub span_id: [u8; 8],
    /// The parent is the client's (from its `traceparent`).
    pub remote: bool,
}

/// A finished span.
#[derive(Debug, Clone)]
pub(crate) struct SpanRecord {
    pub context: SpanContext,
    pub parent: Option<ParentRef>,
    pub name: String,
    pub kind: SpanKind,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// The span's status is an error with this message.
    pub error: Option<String>,
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The server span of one `/v1` request; clones share it. It ends (and is
/// queued for export) when the last clone is dropped: the response's head
/// for most calls, the answer's end for a chat call, whose usage ticket
/// holds a clone.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpan(Arc<Server>);

#[derive(Debug)]
struct Server {
    exporter: Exporter,
    context: SpanContext,
    parent: Option<SpanContext>,
    start: u64,
    /// `otel_capture_content` when the request began.
    capture: bool,
    data: Mutex<ServerData>,
}

#[derive(Debug, Default)]
struct ServerData {
    /// `METHOD /path` of a call that is not a chat.
    http_name: Option<String>,
    chat: bool,
    provider: Option<&'static str>,
    request_model: Option<String>,
    response_model: Option<String>,
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    status: Option<u16>,
    /// A stream answered 200 and then failed with this status.
    stream_status: Option<u16>,
    system_instructions: Option<String>,
    input_messages: Option<String>,
    output_text: Option<String>,
}

impl ServerSpan {
    /// The span of a request, child of the client's span when its
    /// `traceparent` was valid. `chat`: a chat call (named after its
    /// model), else named `http_name`.
    pub(crate) fn start(
        exporter: Exporter,
        traceparent: Option<&[u8]>,
        chat: bool,
        http_name: String,
        capture: bool,
    ) -> ServerSpan {
        let parent = traceparent.and_then(SpanContext::parse);
        let context = match &parent {
            Some(parent) => SpanContext::child_of(parent),
            None => SpanContext::new_root(),
        };
        ServerSpan(Arc::new(Server {
            exporter,
            context,
            parent,
            start: now_nanos(),
            capture,
            data: Mutex::new(ServerData {
                http_name: Some(http_name),
                chat,
                ..ServerData::default()
            }),
        }))
    }

    fn data(&self) -> MutexGuard<'_, ServerData> {
        // Plain data: a panic elsewhere mid-update leaves it usable.
        self.0
            .data
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether message contents go into the span (`otel_capture_content`).
    pub(crate) fn captures(&self) -> bool {
        self.0.capture
    }

    /// The provider and model the request was sent to.
    pub(crate) fn route(&self, provider: &'static str, model: &str) {
        let mut d = self.data();
        d.provider = Some(provider);
        d.request_model = Some(model.to_owned());
    }

    /// The model the provider says answered.
    pub(crate) fn response_model(&self, model: &str) {
        self.data().response_model = Some(model.to_owned());
    }

    /// The tokens of the answer, as its usage account ends.
    pub(crate) fn usage(&self, input: Option<u32>, output: Option<u32>) {
        let mut d = self.data();
        d.input_tokens = input;
        d.output_tokens = output;
    }

    /// The HTTP status of the response.
    pub(crate) fn status(&self, status: u16) {
        self.data().status = Some(status);
    }

    /// A stream that began with 200 ended with an error of this status.
    pub(crate) fn stream_failed(&self, status: u16) {
        self.data().stream_status.get_or_insert(status);
    }

    /// The request's messages and system instructions (JSON), when
    /// [`ServerSpan::captures`].
    pub(crate) fn input(&self, system: Option<String>, messages: Option<String>) {
        if self.0.capture {
            let mut d = self.data();
            d.system_instructions = system;
            d.input_messages = messages;
        }
    }

    /// Text of the answer, appended as it goes, when [`ServerSpan::captures`].
    pub(crate) fn output_text(&self, text: &str) {
        if self.0.capture {
            self.data()
                .output_text
                .get_or_insert_with(String::new)
                .push_str(text);
        }
    }

    /// A child span of the request (a client span per upstream attempt).
    pub(crate) fn client(&self, provider: &'static str, server_address: &str) -> ClientSpan {
        let model = self.data().request_model.clone();
        ClientSpan {
            exporter: self.0.exporter.clone(),
            context: SpanContext::child_of(&self.0.context),
            parent: self.0.context.span_id,
            start: now_nanos(),
            provider,
            model,
            server_address: server_address.to_owned(),
        }
    }

    /// An internal child span (a guardrail check).
    pub(crate) fn internal(&self, name: &'static str) -> InternalSpan {
        InternalSpan {
            exporter: self.0.exporter.clone(),
            context: SpanContext::child_of(&self.0.context),
            parent: self.0.context.span_id,
            start: now_nanos(),
            name,
            attributes: Vec::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.context.sampled {
            return;
        }
        let d = std::mem::take(
            self.data
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        let mut attributes = Vec::with_capacity(12);
        let name = if d.chat {
            attributes.push(("gen_ai.operation.name", AttrValue::Str("chat".to_owned())));
            match &d.request_model {
                Some(model) => format!("chat {model}"),
                None => "chat".to_owned(),
            }
        } else {
            d.http_name.unwrap_or_default()
        };
        if let Some(provider) = d.provider {
            attributes.push(("gen_ai.provider.name", AttrValue::Str(provider.to_owned())));
        }
        let response_model = d.response_model.or_else(|| d.request_model.clone());
        if let Some(model) = d.request_model {
            attributes.push(("gen_ai.request.model", AttrValue::Str(model)));
        }
        if let Some(model) = response_model {
            attributes.push(("gen_ai.response.model", AttrValue::Str(model)));
        }
        if let Some(n) = d.input_tokens {
            attributes.push(("gen_ai.usage.input_tokens", AttrValue::Int(i64::from(n))));
        }
        if let Some(n) = d.output_tokens {
            attributes.push(("gen_ai.usage.output_tokens", AttrValue::Int(i64::from(n))));
        }
        if let Some(status) = d.status {
            attributes.push((
                "http.response.status_code",
                AttrValue::Int(i64::from(status)),
            ));
        }
        if let Some(system) = d.system_instructions {
            attributes.push(("gen_ai.system_instructions", AttrValue::Str(system)));
        }
        if let Some(messages) = d.input_messages {
            attributes.push(("gen_ai.input.messages", AttrValue::Str(messages)));
        }
        if let Some(text) = d.output_text {
            attributes.push((
                "gen_ai.output.messages",
                AttrValue::Str(output_messages(&text)),
            ));
        }
        // Server spans: a 5xx (or a stream that failed after its 200) is an
        // error; a 4xx is the client's and leaves the status unset.
        let failed = match (d.stream_status, d.status) {
            (Some(s), _) if s != crate::telemetry::traces::CLIENT_GONE => {
                Some((s, format!("the answer's stream failed ({s})")))
            }
            (_, Some(s)) if s >= 500 => Some((s, format!("answered {s}"))),
            _ => None,
        };
        let error = failed.map(|(status, message)| {
            attributes.push(("error.type", AttrValue::Str(status.to_string())));
            message
        });
        self.exporter.send(SpanRecord {
            context: self.context,
            parent: self.parent.map(|p| ParentRef {
                span_id: p.span_id,
                remote: true,
            }),
            name,
            kind: SpanKind::Server,
            start_unix_nanos: self.start,
            end_unix_nanos: now_nanos(),
            attributes,
            error,
        });
    }
}

/// The answer as the GenAI conventions' output messages: one assistant
/// message with one text part.
fn output_messages(text: &str) -> String {
    let part = serde_json::json!([{
        "role": "assistant",
        "parts": [{"type": "text", "content": text}],
    }]);
    part.to_string()
}

/// One upstream attempt.
#[derive(Debug)]
pub(crate) struct ClientSpan {
    exporter: Exporter,
    context: SpanContext,
    parent: [u8; 8],
    start: u64,
    provider: &'static str,
    model: Option<String>,
    server_address: String,
}

impl ClientSpan {
    /// The `traceparent` the upstream request carries: this span.
    pub(crate) fn traceparent(&self) -> String {
        self.context.traceparent()
    }

    /// The attempt got an answer with this status (an error status is the
    /// span's error).
    pub(crate) fn answered(self, status: u16) {
        let error = (status >= 400).then(|| status.to_string());
        self.finish(Some(status), error);
    }

    /// The attempt got no answer (`kind`: `timeout`, `connect`, ...).
    pub(crate) fn failed(self, kind: &str) {
        self.finish(None, Some(kind.to_owned()));
    }

    fn finish(self, status: Option<u16>, error: Option<String>) {
        if !self.context.sampled {
            return;
        }
        let mut attributes = vec![
            ("gen_ai.operation.name", AttrValue::Str("chat".to_owned())),
            (
                "gen_ai.provider.name",
                AttrValue::Str(self.provider.to_owned()),
            ),
            ("server.address", AttrValue::Str(self.server_address)),
        ];
        let mut name = "chat".to_owned();
        if let Some(model) = self.model {
            let _ = write!(name, " {model}");
            attributes.push(("gen_ai.request.model", AttrValue::Str(model)));
        }
        if let Some(status) = status {
            attributes.push((
                "http.response.status_code",
                AttrValue::Int(i64::from(status)),
            ));
        }
        if let Some(e) = &error {
            attributes.push(("error.type", AttrValue::Str(e.clone())));
        }
        self.exporter.send(SpanRecord {
            context: self.context,
            parent: Some(ParentRef {
                span_id: self.parent,
                remote: false,
            }),
            name,
            kind: SpanKind::Client,
            start_unix_nanos: self.start,
            end_unix_nanos: now_nanos(),
            attributes,
            error,
        });
    }
}

/// A step of the request inside the gateway (a guardrail check).
#[derive(Debug)]
pub(crate) struct InternalSpan {
    exporter: Exporter,
    context: SpanContext,
    parent: [u8; 8],
    start: u64,
    name: &'static str,
    attributes: Vec<(&'static str, AttrValue)>,
}

impl InternalSpan {
    pub(crate) fn attribute(&mut self, key: &'static str, value: AttrValue) {
        self.attributes.push((key, value));
    }
}

impl Drop for InternalSpan {
    fn drop(&mut self) {
        if !self.context.sampled {
            return;
        }
        self.exporter.send(SpanRecord {
            context: self.context,
            parent: Some(ParentRef {
                span_id: self.parent,
                remote: false,
            }),
            name: self.name.to_owned(),
            kind: SpanKind::Internal,
            start_unix_nanos: self.start,
            end_unix_nanos: now_nanos(),
            attributes: std::mem::take(&mut self.attributes),
            error: None,
        });
    }
}
