//! The `primary` request (protocol doc section 1.3): a `ChatRequest` written
//! as a `generateAssistantResponse` body, dressed per the request's
//! configuration snapshot ([`CallOptions`]: fake reasoning, the truncation
//! recovery instruction), and the chat URL it goes to ([`ChatUrl`]).

use std::sync::Arc;

use axum::http::{HeaderValue, Uri};
use bytes::Bytes;
use translate::primary::{build_request, RequestOptions};
use translate::ChatRequest;

use super::credentials::per_user::PrimaryAuth;
use super::models::ResolvedModel;
use crate::config::RuntimeConfig;
use crate::error::GatewayError;

/// Path of the chat call under `UPSTREAM_API_ENDPOINT`.
const CHAT_PATH: &str = "/generateAssistantResponse";

/// The URL of the chat call under one API endpoint, parsed once when the
/// endpoint is known rather than on every request (a parse, with its IDNA
/// pass, was about 2.5 % of a request's instructions). An `http::Uri`, as
/// the hot path's client takes it: a clone shares its bytes.
#[derive(Debug, Clone)]
pub struct ChatUrl(Arc<Result<Uri, String>>);

impl ChatUrl {
    /// The chat URL under `api_endpoint` (a base URL such as
    /// `https://q.us-east-1.amazonaws.com`).
    /// An invalid endpoint is logged here with its reason; requests are
    /// told only that the endpoint is invalid (a configured URL is not the
    /// client's business).
    pub fn under(api_endpoint: &str) -> Self {
        let text = format!("{}{CHAT_PATH}", api_endpoint.trim_end_matches('/'));
        ChatUrl(Arc::new(parse_absolute(&text).map_err(|e| {
            tracing::error!("invalid upstream API endpoint {text}: {e}");
            "invalid upstream API endpoint: the server log says why (UPSTREAM_API_ENDPOINT)"
                .to_owned()
        })))
    }

    /// The API endpoint this URL is under (what [`ChatUrl::under`] was given).
    pub fn api_endpoint(&self) -> Option<String> {
        let url = self.0.as_ref().as_ref().ok()?;
        url.to_string().strip_suffix(CHAT_PATH).map(str::to_owned)
    }

    /// The URL for one request (a clone sharing the parsed bytes).
    pub fn get(&self) -> Result<Uri, GatewayError> {
        self.0.as_ref().clone().map_err(GatewayError::Config)
    }
}

/// `text` as an `http` or `https` URL with a host.
fn parse_absolute(text: &str) -> Result<Uri, String> {
    let uri = Uri::try_from(text).map_err(|e| e.to_string())?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http" | "https"), Some(host)) if !host.is_empty() => Ok(uri),
        (Some("http" | "https"), _) => Err("no host".into()),
        _ => Err("the scheme must be http or https".into()),
    }
}

/// `Authorization: Bearer {token}`, marked sensitive (kept out of logs).
pub(crate) fn bearer_header(token: &str) -> Result<HeaderValue, GatewayError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
        GatewayError::Config("the upstream access token holds characters a header cannot".into())
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// How the request is dressed: fake reasoning and the truncation-recovery addition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallOptions {
    /// Reasoning budget to ask for through the prompt; `None` disables fake reasoning.
    pub fake_reasoning: Option<u32>,
    pub truncation_recovery: bool,
}

impl CallOptions {
    /// The options for `req` under the runtime configuration `rt`.
    ///
    /// With `fake_reasoning_enabled`, reasoning is asked for on every request
    /// (the spec's default behaviour) with the `fake_reasoning_max_tokens`
    /// budget, unless the client states its own wish: a thinking budget or a
    /// `reasoning_effort` sets the budget (capped), and `reasoning_effort:
    /// none` or a zero budget turns it off for that request.
    pub fn for_request(rt: &RuntimeConfig, req: &ChatRequest) -> Self {
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
    rt: &RuntimeConfig,
    auth: &PrimaryAuth,
    req: &ChatRequest,
    model: &ResolvedModel,
    opts: CallOptions,
) -> Result<Bytes, GatewayError> {
    let mut options =
        RequestOptions::new(crate::ids::fast_uuid_text(&mut [0; 36]), model.id.clone());
    options.profile_arn = auth.profile_arn();
    options.fake_reasoning = opts.fake_reasoning;
    options.truncation_recovery = opts.truncation_recovery;
    options.tool_description_max_length = rt.tool_description_max_length as usize;
    let body = build_request(req, &options)?;
    // Sized for the text, some escapes and the envelope: grown from empty,
    // the buffer was reallocated and copied several times a request.
    let mut json = Vec::with_capacity(body.text_len() + body.text_len() / 8 + 1024);
    body.write_json(&mut json);
    Ok(Bytes::from(json))
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
                url.to_string(),
                "https://q.us-east-1.amazonaws.com/generateAssistantResponse"
            );
        }
        let url = ChatUrl::under("http://127.0.0.1:9100/prefix")
            .get()
            .expect("a valid URL");
        assert_eq!(
            url.to_string(),
            "http://127.0.0.1:9100/prefix/generateAssistantResponse"
        );
        assert_eq!(
            ChatUrl::under("http://127.0.0.1:9100/prefix/")
                .api_endpoint()
                .as_deref(),
            Some("http://127.0.0.1:9100/prefix")
        );
    }

    #[test]
    fn an_invalid_endpoint_is_a_config_error_per_request() {
        for endpoint in [
            "not a url",
            "q.us-east-1.amazonaws.com",
            "ftp://h",
            "http://",
        ] {
            let err = ChatUrl::under(endpoint).get().expect_err(endpoint);
            assert!(
                matches!(err, GatewayError::Config(ref m) if m.contains("invalid upstream API endpoint")),
                "{endpoint}: {err:?}"
            );
        }
    }
}
