//! The `primary` provider: a `ChatRequest` becomes a `generateAssistantResponse`
//! call (protocol doc section 1), sent with the retry policy and the bearer
//! token of the request's token source ([`PrimaryAuth`]: the shared manager
//! in proxy mode, the caller's own in full deployment); the binary event stream that answers is decoded
//! frame by frame (both CRCs checked) and parsed into `ChatEvent`s.
//!
//! Time limits: the status line and the first event must arrive within
//! `first_token_timeout` (the upstream may hold its headers back until the
//! first token is ready), else the call is retried up to `http_max_retries`
//! times; after that, the gap between two reads is bounded by
//! `http_request_timeout`, so a healthy long stream is never cut.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use bytes::{Bytes, BytesMut};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use translate::primary::{
    build_request, ParserOptions, RequestOptions, StreamParser, StreamSummary,
};
use translate::{ChatEvent, ChatRequest, StreamError};
use wire::eventstream::Decoder;

use crate::credentials::per_user::PrimaryAuth;
use crate::error::GatewayError;
use crate::models::ResolvedModel;
use crate::state::AppState;
use crate::upstream::http::send_with_retry;

/// Path of the chat call under `UPSTREAM_API_ENDPOINT`.
const CHAT_PATH: &str = "/generateAssistantResponse";

/// The URL of the chat call under one API endpoint, parsed once when the
/// endpoint is known rather than on every request (a parse, with its IDNA
/// pass, was about 2.5 % of a request's instructions).
#[derive(Debug, Clone)]
pub struct ChatUrl(Arc<Result<reqwest::Url, String>>);

impl ChatUrl {
    /// The chat URL under `api_endpoint` (a base URL such as
    /// `https://q.us-east-1.amazonaws.com`).
    pub fn under(api_endpoint: &str) -> Self {
        let text = format!("{}{CHAT_PATH}", api_endpoint.trim_end_matches('/'));
        ChatUrl(Arc::new(reqwest::Url::parse(&text).map_err(|e| {
            format!("invalid upstream API endpoint {text}: {e}")
        })))
    }

    /// The URL for one request (an owned copy, as the HTTP client takes it).
    pub fn get(&self) -> Result<reqwest::Url, GatewayError> {
        self.0.as_ref().clone().map_err(GatewayError::Config)
    }
}

/// How the request is dressed: fake reasoning and the truncation-recovery addition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallOptions {
    /// Reasoning budget to ask for through the prompt; `None` disables fake reasoning.
    pub fake_reasoning: Option<u32>,
    pub truncation_recovery: bool,
}

impl CallOptions {
    /// The options for `req` under the live runtime configuration.
    ///
    /// With `fake_reasoning_enabled`, reasoning is asked for on every request
    /// (the spec's default behaviour) with the `fake_reasoning_max_tokens`
    /// budget, unless the client states its own wish: a thinking budget or a
    /// `reasoning_effort` sets the budget (capped), and `reasoning_effort:
    /// none` or a zero budget turns it off for that request.
    pub fn for_request(app: &AppState, req: &ChatRequest) -> Self {
        let rt = app.runtime();
        let max = rt.fake_reasoning_max_tokens;
        let fake_reasoning = if !rt.fake_reasoning_enabled {
            None
        } else if req.thinking.is_some() || req.reasoning_effort.is_some() {
            translate::fake_reasoning::budget(req, max)
        } else {
            Some(max)
        };
        CallOptions {
            fake_reasoning,
            truncation_recovery: rt.truncation_recovery,
        }
    }
}

/// Serialize the upstream body for `req` (once; every retry reuses the bytes).
pub fn encode_request(
    app: &AppState,
    auth: &PrimaryAuth,
    req: &ChatRequest,
    model: &ResolvedModel,
    opts: CallOptions,
) -> Result<Bytes, GatewayError> {
    let rt = app.runtime();
    let mut options = RequestOptions::new(
        crate::pipeline::ids::fast_uuid().to_string(),
        model.id.clone(),
    );
    options.profile_arn = auth.profile_arn();
    options.fake_reasoning = opts.fake_reasoning;
    options.truncation_recovery = opts.truncation_recovery;
    options.tool_description_max_length = rt.tool_description_max_length as usize;
    let body = build_request(req, &options)?;
    serde_json::to_vec(&body)
        .map(Bytes::from)
        .map_err(GatewayError::internal)
}

/// What one read from the upstream gave.
#[derive(Debug)]
pub enum Step {
    /// Events were added; the stream goes on.
    More,
    /// The stream is over; the final events were added.
    Done(StreamSummary),
}

/// An open upstream answer, read as `ChatEvent` batches.
pub struct EventSource {
    response: reqwest::Response,
    decoder: Decoder,
    buf: BytesMut,
    parser: StreamParser,
    idle_timeout: Duration,
    done: bool,
}

impl EventSource {
    fn new(response: reqwest::Response, parser: StreamParser, idle_timeout: Duration) -> Self {
        EventSource {
            response,
            decoder: Decoder::new(),
            buf: BytesMut::with_capacity(16 * 1024),
            parser,
            idle_timeout,
            done: false,
        }
    }

    /// Read until at least one event was produced or the stream ended.
    ///
    /// Transport failures, timeouts and corrupt frames end the stream with a
    /// `ChatEvent::Error` (never a silent cut).
    pub async fn fill(&mut self, out: &mut Vec<ChatEvent>) -> Step {
        if self.done {
            return Step::Done(self.parser.finish(out));
        }
        let start = out.len();
        loop {
            // Whole frames already buffered come first.
            loop {
                match self.decoder.decode(&mut self.buf) {
                    Ok(Some(frame)) => match frame.message() {
                        Ok(msg) => self.parser.push(&msg, out),
                        Err(e) => {
                            return self.fail(out, format!("malformed event-stream message: {e}"))
                        }
                    },
                    Ok(None) => break,
                    Err(e) => return self.fail(out, format!("corrupt event-stream frame: {e}")),
                }
            }
            if out.len() > start {
                return Step::More;
            }
            match tokio::time::timeout(self.idle_timeout, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Ok(None)) => {
                    self.done = true;
                    if let Err(e) = self.decoder.decode_eof(&mut self.buf) {
                        return self.fail(out, format!("the stream ended inside a frame: {e}"));
                    }
                    return Step::Done(self.parser.finish(out));
                }
                Ok(Err(e)) => {
                    return self.fail(out, format!("the upstream connection failed: {e}"))
                }
                Err(_) => {
                    return self.fail(
                        out,
                        format!(
                            "no data from the upstream for {}s",
                            self.idle_timeout.as_secs()
                        ),
                    )
                }
            }
        }
    }

    fn fail(&mut self, out: &mut Vec<ChatEvent>, message: String) -> Step {
        tracing::warn!("primary stream failed: {message}");
        self.done = true;
        let mut summary = self.parser.finish(&mut Vec::new());
        let err = StreamError {
            status: StatusCode::BAD_GATEWAY.as_u16(),
            kind: translate::StreamErrorKind::UpstreamApi,
            message,
        };
        summary.error = Some(err.clone());
        out.push(ChatEvent::Error(err));
        Step::Done(summary)
    }
}

/// Send the call with the access tokens of `auth` and wait for its first events.
///
/// Returns the open source, the first batch of events and whether that batch
/// already ended the stream. A first event that does not come within
/// `first_token_timeout` makes a new attempt (up to `http_max_retries`).
pub async fn open(
    app: &AppState,
    auth: &PrimaryAuth,
    body: Bytes,
    model: &ResolvedModel,
    extract_thinking: bool,
) -> Result<(EventSource, Vec<ChatEvent>, Option<StreamSummary>), GatewayError> {
    let rt = app.runtime();
    let mut policy = app.retry_policy();
    // The upstream may hold its headers until the first token is ready.
    policy.request_timeout = policy.request_timeout.min(rt.first_token_timeout);
    let url = auth.chat_url().get()?;
    let mut late_retries = 0u32;
    loop {
        let response = send_with_retry(
            &policy,
            |_| {
                let body = body.clone();
                let url = url.clone();
                async move {
                    let token = auth.access_token().await?;
                    Ok(app
                        .http()
                        .post(url)
                        .bearer_auth(token)
                        .header(CONTENT_TYPE, "application/json")
                        .header(ACCEPT, "application/vnd.amazon.eventstream")
                        .body(body))
                }
            },
            || async { auth.force_refresh().await },
        )
        .await
        .map_err(|e| auth.explain(e.into()))?;
        let parser = StreamParser::new(ParserOptions {
            extract_thinking,
            context_window: model.context_window,
        });
        let mut source = EventSource::new(response, parser, rt.http_request_timeout);
        let mut first = Vec::new();
        match tokio::time::timeout(rt.first_token_timeout, source.fill(&mut first)).await {
            Ok(Step::More) => return Ok((source, first, None)),
            Ok(Step::Done(summary)) => return Ok((source, first, Some(summary))),
            Err(_) if late_retries < policy.max_retries => {
                late_retries += 1;
                tracing::warn!(
                    attempt = late_retries,
                    "no first event within {}s; retrying",
                    rt.first_token_timeout.as_secs()
                );
            }
            Err(_) => {
                return Err(GatewayError::Upstream {
                    status: StatusCode::GATEWAY_TIMEOUT,
                    message: format!(
                        "the upstream sent no first event within {}s ({} attempts)",
                        rt.first_token_timeout.as_secs(),
                        late_retries + 1
                    ),
                    retry_after: None,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chat_url_sits_under_the_endpoint() {
        for base in [
            "https://q.us-east-1.amazonaws.com",
            "https://q.us-east-1.amazonaws.com/",
        ] {
            let url = ChatUrl::under(base).get().expect("a valid URL");
            assert_eq!(
                url.as_str(),
                "https://q.us-east-1.amazonaws.com/generateAssistantResponse"
            );
        }
        let url = ChatUrl::under("http://127.0.0.1:9100/prefix")
            .get()
            .expect("a valid URL");
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9100/prefix/generateAssistantResponse"
        );
    }

    #[test]
    fn an_invalid_endpoint_is_a_config_error_per_request() {
        let err = ChatUrl::under("not a url").get().expect_err("no URL");
        assert!(
            matches!(err, GatewayError::Config(ref m) if m.contains("invalid upstream API endpoint")),
            "{err:?}"
        );
    }
}
