//! Serving a request through a direct provider (`messages_vendor`,
//! `completions_vendor`, `assistant_vendor`, `custom`).
//!
//! Same format as the client: native pass-through ([`super::passthrough`]).
//! The other format: the canonical request is written in the provider's
//! format (`from_chat_request`), and the answer read back as `ChatEvent`s,
//! streamed through the client's encoder or collected and rendered.
//!
//! The client's unknown fields (`ChatRequest::extra`) are named in the
//! client's format, so a cross-format relay does not forward them.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use translate::{
    ChatEvent, ChatRequest, ClientFormat, ContentPart, ResponseMeta, Role, ToolResultContent, Usage,
};

use super::passthrough;
use super::provider_events::ProviderEvents;
use super::raw_body::RawObject;
use super::respond::{self, Source};
use super::{ids, Inbound};
use crate::error::GatewayError;
use crate::providers::{
    CallExtras, DirectProvider, Endpoint, Initiator, ProviderId, Route, WireFormat,
};
use crate::state::AppState;

/// Serve `inbound` through `provider` as `route` says.
pub async fn run(
    app: &AppState,
    inbound: Inbound,
    route: &Route,
    provider: Arc<DirectProvider>,
) -> Result<Response, GatewayError> {
    let format = inbound.format;
    let usage = inbound.usage.clone();
    let native = provider.format().is_client_format(format);
    let req = &inbound.request;
    let extras = CallExtras {
        anthropic_beta: inbound.anthropic_beta.clone(),
        anthropic_version: inbound.anthropic_version.clone().filter(|_| native),
        vision: has_images(req),
        initiator: initiator(req),
        stream: req.stream,
    };
    crate::server::access_note::note_route(provider.id.as_str(), &route.model);
    tracing::debug!(
        provider = %provider.id,
        model = %route.model,
        requested = %req.model,
        account = account(app, &provider),
        relay = if native { "native" } else { "converted" },
        stream = req.stream,
        "routing request"
    );
    let runtime = app.runtime();
    let idle = runtime.http_request_timeout;
    let policy = app.retry_policy();
    let name = provider.id.as_str();

    if native {
        let mut body = RawObject::parse(&inbound.raw)?;
        body.set("model", &route.model)?;
        if format == ClientFormat::OpenAi && req.stream {
            body.force_include_usage()?;
        }
        let body = body.to_bytes()?;
        let resp = provider
            .send(app.http(), &policy, Endpoint::Chat, "", Some(body), &extras)
            .await?;
        return if req.stream {
            let strip_usage = format == ClientFormat::OpenAi && !req.include_usage;
            passthrough::stream(resp, format, strip_usage, idle, name, usage).await
        } else {
            passthrough::whole(resp, idle, name, usage.as_ref()).await
        };
    }

    let Inbound { request, .. } = inbound;
    let mut req = request;
    let client_model = std::mem::replace(&mut req.model, route.model.clone());
    req.extra.clear();
    let body = provider_body(&provider, &req)?;
    let meta = ResponseMeta {
        id: ids::response_id(format),
        model: client_model,
        created: ids::unix_now(),
    };
    let usage_hint = Usage {
        input_tokens: Some(translate::tokens::estimate_request(&req)),
        ..Usage::default()
    };
    let resp = provider
        .send(app.http(), &policy, Endpoint::Chat, "", Some(body), &extras)
        .await?;
    if req.stream {
        let mut source = ProviderEvents::new(resp, provider.format(), idle, name);
        let mut first = Vec::new();
        // Read past bookkeeping (start, usage) so that an error right after it
        // is still answered as a plain HTTP error.
        let mut more = true;
        while more && only_bookkeeping(&first) {
            more = source.fill(&mut first).await;
        }
        if let Some(err) = leading_error(&first) {
            return Err(passthrough::upstream_error(err.clone()));
        }
        let source = if more {
            Source::Provider(Box::new(source))
        } else {
            Source::Done
        };
        Ok(respond::stream(
            format,
            meta,
            req.include_usage,
            usage_hint,
            source,
            first,
            usage,
        ))
    } else {
        let bytes = passthrough::read_body(resp, idle).await?;
        let events = answer_events(provider.format(), &bytes)?;
        if let Some(err) = leading_error(&events) {
            return Err(passthrough::upstream_error(err.clone()));
        }
        respond::collect(
            format,
            &meta,
            usage_hint,
            Source::Done,
            events,
            usage.as_ref(),
        )
        .await
    }
}

/// The provider's request body for a canonical request.
fn provider_body(provider: &DirectProvider, req: &ChatRequest) -> Result<Bytes, GatewayError> {
    let bytes = match provider.format() {
        WireFormat::Anthropic => serde_json::to_vec(&translate::anthropic::from_chat_request(req)),
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
            let mut body = translate::openai::from_chat_request(req);
            // OpenAI itself wants `max_completion_tokens`; compatible servers
            // and the assistant vendor know `max_tokens`.
            if provider.id != ProviderId::CompletionsVendor {
                if let Some(n) = body.max_completion_tokens.take() {
                    body.max_tokens = Some(n);
                }
            }
            serde_json::to_vec(&body)
        }
    };
    bytes.map(Bytes::from).map_err(GatewayError::internal)
}

/// The events of a provider's whole (non-streaming) answer.
fn answer_events(format: WireFormat, body: &[u8]) -> Result<Vec<ChatEvent>, GatewayError> {
    let unreadable = |e: serde_json::Error| {
        GatewayError::upstream(
            StatusCode::BAD_GATEWAY,
            format!("the provider's answer is not understood: {e}"),
        )
    };
    Ok(match format {
        WireFormat::Anthropic => {
            let resp: wire::anthropic::MessagesResponse =
                serde_json::from_slice(body).map_err(unreadable)?;
            translate::anthropic::response_events(&resp)
        }
        WireFormat::OpenAi | WireFormat::PrimaryEventStream => {
            let resp: wire::openai::ChatCompletionResponse =
                serde_json::from_slice(body).map_err(unreadable)?;
            translate::openai::response_events(&resp)
        }
    })
}

/// Nothing but `Start` and `Usage` so far (nothing a client would see yet).
fn only_bookkeeping(events: &[ChatEvent]) -> bool {
    events
        .iter()
        .all(|e| matches!(e, ChatEvent::Start { .. } | ChatEvent::Usage(_)))
}

/// An error before any content.
fn leading_error(events: &[ChatEvent]) -> Option<&translate::StreamError> {
    for ev in events {
        match ev {
            ChatEvent::Start { .. } | ChatEvent::Usage(_) => {}
            ChatEvent::Error(err) => return Some(err),
            _ => return None,
        }
    }
    None
}

/// Whether the conversation carries an image anywhere.
pub fn has_images(req: &ChatRequest) -> bool {
    req.messages
        .iter()
        .flat_map(|m| &m.content)
        .any(|p| match p {
            ContentPart::Image(_) => true,
            ContentPart::ToolResult { content, .. } => content
                .iter()
                .any(|c| matches!(c, ToolResultContent::Image(_))),
            _ => false,
        })
}

/// `agent` when the last turn is a tool result or the assistant's own, else `user`.
pub fn initiator(req: &ChatRequest) -> Initiator {
    match req.messages.last() {
        Some(m) if m.role == Role::Assistant => Initiator::Agent,
        Some(m)
            if m.content
                .iter()
                .any(|p| matches!(p, ContentPart::ToolResult { .. })) =>
        {
            Initiator::Agent
        }
        _ => Initiator::User,
    }
}

/// The account a request used, for the log (no secrets).
fn account(app: &AppState, provider: &DirectProvider) -> String {
    format!("{}:{}", app.config().mode.as_str(), provider.auth.kind())
}

#[cfg(test)]
mod tests {
    use super::*;
    use translate::Message;

    fn user(parts: Vec<ContentPart>) -> Message {
        Message {
            role: Role::User,
            content: parts,
            name: None,
        }
    }

    #[test]
    fn initiator_and_vision_follow_the_conversation() {
        let text = ContentPart::Text {
            text: "hi".into(),
            cache_control: None,
        };
        let mut req = ChatRequest {
            messages: vec![user(vec![text.clone()])],
            ..ChatRequest::default()
        };
        assert_eq!(initiator(&req), Initiator::User);
        assert!(!has_images(&req));
        req.messages.push(user(vec![ContentPart::ToolResult {
            tool_use_id: "t".into(),
            content: vec![ToolResultContent::Image(translate::ImageSource::Url(
                "https://x/y.png".into(),
            ))],
            is_error: false,
        }]));
        assert_eq!(initiator(&req), Initiator::Agent);
        assert!(has_images(&req));
    }

    #[test]
    fn an_error_after_bookkeeping_is_leading() {
        let err = translate::StreamError {
            status: 529,
            kind: translate::StreamErrorKind::Overloaded,
            message: "Overloaded".into(),
        };
        let events = vec![
            ChatEvent::Start {
                id: None,
                model: None,
            },
            ChatEvent::Usage(Usage::default()),
            ChatEvent::Error(err.clone()),
        ];
        assert_eq!(leading_error(&events), Some(&err));
        assert!(only_bookkeeping(&events[..2]));
        let events = vec![ChatEvent::TextDelta("a".into()), ChatEvent::Error(err)];
        assert_eq!(leading_error(&events), None);
    }
}
