//! Serving a request through a direct provider (`messages_vendor`,
//! `completions_vendor`, `assistant_vendor`, `custom`), one account of which
//! ([`DirectProvider`]: endpoint and credential) the caller may use.
//!
//! Same format as the client: native pass-through ([`passthrough`]).
//! The other format: the canonical request is written in the provider's
//! format ([`request::provider_body`]), and the answer read back as
//! `ChatEvent`s ([`stream`]), streamed through the client's encoder or
//! collected and rendered by the pipeline.
//!
//! The client's unknown fields (`ChatRequest::extra`) are named in the
//! client's format, so a cross-format relay does not forward them.

pub mod credentials;
pub mod models;
pub mod passthrough;
pub mod request;
pub mod stream;

use std::sync::Arc;

use axum::http::StatusCode;

use translate::{ChatEvent, ChatRequest, ClientFormat, ContentPart, Role, ToolResultContent};

pub use request::{Auth, CallExtras, DirectProvider, Endpoint, Initiator, UserBase};

use super::cooldowns::Cooldowns;
use super::{input_estimate, leading_error, Answer, ChatCall, EventAnswer, Events, Route};
use crate::error::GatewayError;
use crate::turn::Turn;
use stream::ProviderEvents;
use wire::json::RawObject;

/// Serve `call` through `provider` as `route` says.
pub async fn serve(
    turn: &Turn,
    provider: &DirectProvider,
    route: &Route,
    call: ChatCall,
) -> Result<Answer, GatewayError> {
    let format = turn.reply.format;
    let native = call.relay_natively && provider.format().is_client_format(format);
    let req = &call.request;
    let extras = CallExtras {
        anthropic_beta: call.anthropic_beta.clone(),
        anthropic_version: call.anthropic_version.clone().filter(|_| native),
        vision: has_images(req),
        initiator: initiator(req),
        stream: req.stream,
    };
    turn.record_route(provider.id.as_str(), &route.model);
    tracing::debug!(
        provider = %provider.id,
        model = %route.model,
        requested = %req.model,
        account = provider.auth.kind(),
        relay = if native { "native" } else { "converted" },
        stream = req.stream,
        "routing request"
    );
    let upstream = &turn.upstream;

    // What goes out is built once; every attempt sends the same bytes.
    let (body, meta_and_hint, req) = if native {
        let mut body = RawObject::parse(&call.raw).map_err(malformed)?;
        body.set("model", &route.model)
            .map_err(GatewayError::internal)?;
        if format == ClientFormat::OpenAi && req.stream {
            body.force_include_usage().map_err(GatewayError::internal)?;
        }
        (body.to_bytes(), None, call.request)
    } else {
        let mut req = call.request;
        let client_model = std::mem::replace(&mut req.model, route.model.clone());
        req.extra.clear();
        let body = request::provider_body(provider, &req)?;
        let meta = turn.reply.meta(client_model);
        let hint = input_estimate(&req);
        (body, Some((meta, hint)), req)
    };

    // An answer that breaks before any content reached the client (a reset,
    // a cut, a stall, bytes that are not the format) is asked for again,
    // within `http_max_retries`; the provider's own errors are its answer.
    let mut retries = 0u32;
    loop {
        let resp = provider
            .send(
                &upstream.http,
                &upstream.policy,
                Endpoint::Chat,
                "",
                Some(body.clone()),
                &extras,
            )
            .await?;
        let opened = match &meta_and_hint {
            None => relay_native(turn, provider, &req, resp).await,
            Some((meta, hint)) => read_converted(turn, provider, &req, resp, meta, *hint).await,
        };
        match opened {
            Ok(answer) => return Ok(answer),
            Err(Early::Broken(e)) if retries < upstream.policy.max_retries => {
                retries += 1;
                tracing::warn!(
                    provider = %provider.id,
                    attempt = retries,
                    "the provider's answer broke before any content ({e}); retrying"
                );
            }
            Err(Early::Broken(e) | Early::Answered(e)) => return Err(e),
        }
    }
}

/// Most switches to another account of the provider after 429s, for one
/// request (interfaces-full.md 2, selection step 3).
pub const MAX_ACCOUNT_SWITCHES: usize = 3;

/// Serve on the first of `accounts` (one provider's, preferred first) that
/// is not resting after a 429. A 429 from an account, before anything
/// reached the client, rests it ([`Cooldowns`]) and the next account is
/// tried, at most [`MAX_ACCOUNT_SWITCHES`] times; when none is left the last
/// 429 is the answer. When every account is resting, the answer is a 429
/// saying until when.
pub async fn serve_any(
    turn: &Turn,
    accounts: &[&Arc<DirectProvider>],
    route: &Route,
    call: ChatCall,
    cooldowns: &Cooldowns,
) -> Result<Answer, GatewayError> {
    let ready: Vec<&Arc<DirectProvider>> = accounts
        .iter()
        .copied()
        .filter(|p| {
            p.account
                .is_none_or(|id| cooldowns.resting_until(id).is_none())
        })
        .take(MAX_ACCOUNT_SWITCHES + 1)
        .collect();
    let Some((last, first)) = ready.split_last() else {
        let now = std::time::Instant::now();
        let soonest = accounts
            .iter()
            .filter_map(|p| p.account.and_then(|id| cooldowns.resting_until(id)))
            .min()
            .map(|t| t.saturating_duration_since(now).as_secs().max(1));
        return Err(GatewayError::Upstream {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: format!(
                "every {} account of yours is resting after a 429 from the provider",
                route.provider
            ),
            retry_after: soonest,
        });
    };
    for provider in first {
        let answer = serve(turn, provider, route, call.clone()).await;
        if !rest_after_429(provider, &answer, cooldowns) {
            return answer;
        }
    }
    let answer = serve(turn, last, route, call).await;
    rest_after_429(last, &answer, cooldowns);
    answer
}

/// Rest `provider`'s account when `answer` is a 429; whether it was.
fn rest_after_429(
    provider: &DirectProvider,
    answer: &Result<Answer, GatewayError>,
    cooldowns: &Cooldowns,
) -> bool {
    let (
        Some(id),
        Err(GatewayError::Upstream {
            status,
            retry_after,
            ..
        }),
    ) = (provider.account, answer)
    else {
        return false;
    };
    if *status != StatusCode::TOO_MANY_REQUESTS {
        return false;
    }
    cooldowns.start(id, *retry_after);
    if let Some(limits) = &provider.limits {
        limits.observe_429(id);
    }
    tracing::warn!(
        provider = %provider.id,
        account_id = %id,
        retry_after = *retry_after,
        "429 from the provider: the account rests, the next one (if any) is tried"
    );
    true
}

/// How an answer failed before anything reached the client.
pub enum Early {
    /// The transport broke (worth another attempt).
    Broken(GatewayError),
    /// The provider answered with an error (final).
    Answered(GatewayError),
}

/// The native relay of one attempt's answer.
async fn relay_native(
    turn: &Turn,
    provider: &DirectProvider,
    req: &ChatRequest,
    resp: crate::upstream::client::Response,
) -> Result<Answer, Early> {
    let format = turn.reply.format;
    let upstream = &turn.upstream;
    let name = provider.id.as_str();
    let usage = turn.reply.usage.clone();
    let response = if req.stream {
        let strip_usage = format == ClientFormat::OpenAi && !req.include_usage;
        passthrough::stream(resp, format, strip_usage, upstream.idle, name, usage).await?
    } else {
        passthrough::whole(resp, provider.format(), upstream.idle, name, usage.as_ref()).await?
    };
    Ok(Answer::Relayed(response))
}

/// One attempt's answer read as canonical events (the client speaks the
/// other format).
async fn read_converted(
    turn: &Turn,
    provider: &DirectProvider,
    req: &ChatRequest,
    resp: crate::upstream::client::Response,
    meta: &translate::ResponseMeta,
    usage_hint: translate::Usage,
) -> Result<Answer, Early> {
    let upstream = &turn.upstream;
    let name = provider.id.as_str();
    if req.stream {
        let mut source = ProviderEvents::new(resp, provider.format(), upstream.idle, name);
        let mut first = Vec::new();
        // Read past bookkeeping (start, usage) so that an error right after it
        // is still answered as a plain HTTP error.
        let mut more = true;
        while more && only_bookkeeping(&first) {
            more = source.fill(&mut first).await;
        }
        if let Some(err) = leading_error(&first) {
            let err = GatewayError::from(err.clone());
            return Err(if source.broken() {
                Early::Broken(err)
            } else {
                Early::Answered(err)
            });
        }
        let rest = if more {
            Events::Provider(Box::new(source))
        } else {
            Events::Done
        };
        Ok(Answer::Events(EventAnswer {
            meta: meta.clone(),
            usage_hint,
            first,
            rest,
        }))
    } else {
        let bytes = passthrough::read_body(resp, upstream.idle)
            .await
            .map_err(Early::Broken)?;
        let events = stream::answer_events(provider.format(), &bytes).map_err(Early::Answered)?;
        if let Some(err) = leading_error(&events) {
            return Err(Early::Answered(err.clone().into()));
        }
        Ok(Answer::Events(EventAnswer {
            meta: meta.clone(),
            usage_hint,
            first: events,
            rest: Events::Done,
        }))
    }
}

/// A client body that is not the JSON object its format needs.
pub fn malformed(e: serde_json::Error) -> GatewayError {
    GatewayError::validation(format!("malformed JSON: {e}"))
}

/// Nothing but `Start` and `Usage` so far (nothing a client would see yet).
fn only_bookkeeping(events: &[ChatEvent]) -> bool {
    events
        .iter()
        .all(|e| matches!(e, ChatEvent::Start { .. } | ChatEvent::Usage(_)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::leading_error;
    use translate::Message;
    use translate::Usage;

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
