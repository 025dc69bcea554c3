//! A faithful simulator of the gateway's upstreams, for tests (started
//! in-process on ephemeral ports) and benchmarks (the `upstream-sim` binary).
//!
//! It owns one module per upstream: [`primary`] (the chat API:
//! `POST /generateAssistantResponse` answering real AWS event-stream frames,
//! `GET /ListAvailableModels`, the real error bodies) and [`oidc`] (the SSO
//! OIDC service: `POST /client/register`, `POST /device_authorization`,
//! `POST /token`; on its own listener, and also under `/oidc` on the API
//! listener for one-port setups), and [`idp`] (an OpenID Connect identity
//! provider for the gateway's web sign-in, under `/idp` on the API listener).
//! Around them: [`recorder`] (every request received),
//! [`stats`] (how streams ended), [`config`]. Frames are built with the
//! project's codec, `wire::eventstream`. It depends on `wire` only, never on
//! `translate` or `gateway`, so it simulates the protocol rather than echoing
//! the gateway's own understanding of it.
//!
//! # Use from a test
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use upstream_sim::{start, Scenario, SimConfig};
//! let sim = start(SimConfig::default()).await?;
//! // UPSTREAM_API_ENDPOINT = sim.base_url(), UPSTREAM_OIDC_ENDPOINT = sim.oidc_url()
//! let creds = sim.seed_credentials();          // write these into tokens.json
//! sim.push_scenario(Scenario::status(429).with_times(1));
//! // ... drive the gateway ...
//! let chats = sim.requests_to("/generateAssistantResponse");
//! assert!(chats[0].json().is_some());
//! sim.shutdown().await;
//! # let _ = creds; Ok(()) }
//! ```
//!
//! # Choosing the answer
//!
//! Each chat request plays one [`Scenario`]: the next one queued with
//! [`SimHandle::push_scenario`]; else the first active `sim:` directive line in
//! the current user message (e.g. `sim: tools n=2 fragments=4`, or
//! `sim: status code=429 times=1 retry_after=1` then `sim: text len=500
//! chunk=20` on the next line); else the configured default; else a short
//! answer that mentions the model id. The directive grammar and every key are
//! documented in [`primary::scenario`]; `times=N` counts per scenario key, so
//! a retry of the same request gets the next line (a 429 once, then 200).
//!
//! # Authentication
//!
//! The API accepts only access tokens the OIDC side issued (device-code or
//! refresh grant, or [`SimHandle::issue_access_token`]) that are not expired
//! or revoked; anything else is 403 `{"message":"The bearer token included
//! in the request is invalid."}`. [`SimHandle::revoke_access_tokens`] forces
//! the 403-refresh-retry path. [`SimConfig::accept_any_token`] turns the check
//! off (benchmarks).
//!
//! # Observing
//!
//! [`SimHandle::requests`] / [`SimHandle::requests_to`] return what arrived
//! (method, path, query, headers, raw and parsed body, time);
//! [`SimHandle::cancelled_streams`] counts answers whose body was dropped
//! before its end, i.e. a client disconnect that reached the upstream.
//!
//! # Vendors
//!
//! Four more upstreams share the API listener, each under its own prefix and
//! recorded as its own [`Service`], with the real services' paths below it:
//!
//! | upstream | gateway setting | URL ([`SimHandle`]) | paths below it |
//! |---|---|---|---|
//! | [`messages_vendor`] (Messages API) | `MESSAGES_VENDOR_BASE_URL` | `messages_vendor_url()` = `{base}/messages_vendor` | `POST /v1/messages`, `POST /v1/messages/count_tokens`, `GET /v1/models` |
//! | its OAuth | `MESSAGES_VENDOR_OAUTH_BASE_URL` | `messages_vendor_oauth_url()` = `{base}/messages_vendor_oauth` | `POST /v1/oauth/token` |
//! | [`completions_vendor`] (chat completions) | `COMPLETIONS_VENDOR_BASE_URL` | `completions_vendor_url()` = `{base}/completions_vendor` | `POST /v1/chat/completions`, `GET /v1/models` |
//! | custom (OpenAI-compatible) | `CUSTOM_BASE_URL` | `custom_url()` = `{base}/custom/v1` | `POST /chat/completions`, `GET /models` |
//! | [`assistant_vendor`] token exchange | `ASSISTANT_VENDOR_TOKEN_URL` | `assistant_vendor_token_url()` (the full URL) | `GET {base}/assistant_vendor_code_host/copilot_internal/v2/token` |
//! | its chat API (`endpoints.api`) | from the exchange | `assistant_vendor_api_url()` = `{base}/assistant_vendor_api` | `POST /chat/completions`, `GET /models` |
//!
//! Credentials come from [`VendorsConfig`] (defaults [`DEFAULT_MESSAGES_API_KEY`],
//! [`DEFAULT_COMPLETIONS_API_KEY`], [`DEFAULT_CUSTOM_API_KEY`],
//! [`DEFAULT_GITHUB_TOKEN`]); messages-vendor OAuth tokens come from its token
//! endpoint or [`SimHandle::seed_messages_vendor_oauth`], assistant tokens
//! from the exchange (with a configurable short lifetime). Each vendor request
//! plays one [`VendorScenario`]: the next one queued with
//! [`SimHandle::push_vendor_scenario`] for that [`Vendor`], else the first
//! active `sim:` line in the last user message's text, else the default; the
//! grammar is in [`vendor_common::scenario`] (`text`, `echo`, `tools`,
//! `thinking`, `status`, and `extra`, `finish=length`, `error_after`,
//! `disconnect_after`, `delay`, `header_delay`, `times`, ...). Streams are
//! counted per vendor ([`SimHandle::vendor_stream_stats`]).
//! [`SimConfig::accept_any_token`] also makes the vendors accept any
//! non-empty credential (their required headers are still checked).
//!
//! # Guardrail
//!
//! [`guardrail`] simulates the AWS Bedrock `ApplyGuardrail` API under
//! `{base}/guardrail-service` ([`SimHandle::guardrail_url`], the gateway's
//! `GUARDRAIL_ENDPOINT`): `POST /guardrail/{id}/version/{version}/apply`,
//! the id plain or a percent-encoded ARN. It verifies each call's SigV4
//! signature itself (service `bedrock`, the keys of [`GuardrailConfig`],
//! default [`DEFAULT_GUARDRAIL_ACCESS_KEY_ID`] /
//! [`DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY`]; [`GuardrailConfig::accept_any_signature`]
//! for benchmarks), validates the body, and answers from the `sim: guardrail …`
//! lines of the checked texts (`none`, `content`, `topic`, `word`, `pii`,
//! `regex`, `status`, with `source=INPUT|OUTPUT` and the timing keys; grammar
//! in [`guardrail::scenario`]). [`SimHandle::guardrail_calls`] counts the
//! calls per source.
//!
//! # Layers
//!
//! The top-level modules import only modules on a lower line (peers on one
//! line do not import each other), so no two of them reach each other:
//!
//! | layer | modules | what they are |
//! |---|---|---|
//! | 1 | `ids`, [`stats`], `http`, `state`, [`content`], [`directive`] | ids, stream counters, header and form helpers, the shared run-time switch, generated text, the `sim:` grammar |
//! | 2 | [`recorder`], [`body`] | the recording middleware; played response bodies |
//! | 3 | [`oidc`], [`idp`], [`guardrail`], [`vendor_common`] | services that need no other service; what the vendors share |
//! | 4 | [`primary`], [`messages_vendor`], [`completions_vendor`] | the chat upstreams (`primary` accepts the tokens `oidc` issued) |
//! | 5 | [`assistant_vendor`] | mounts `completions_vendor`'s OpenAI-format API with its own credentials |
//! | 6 | [`config`] | [`SimConfig`], made of each service's settings |
//! | 7 | `server` | [`start`] composes every service's state and router; [`SimHandle`] |
//!
//! Each service keeps its own state (its stores, behind their own locks);
//! only `server` sees them all.
//!
//! # Cost
//!
//! The simulator is also the benchmark upstream: no added latency, no
//! per-request logging, TCP_NODELAY on accepted sockets, answers framed in
//! one buffer and written in one piece unless a scenario paces them.
#![expect(
    clippy::disallowed_methods,
    reason = "a test tool: its ids need no speed, and its server task lives as long as the handle"
)]

pub mod assistant_vendor;
pub mod body;
pub mod completions_vendor;
pub mod config;
pub mod content;
pub mod directive;
pub mod guardrail;
pub(crate) mod http;
pub mod idp;
mod ids;
pub mod messages_vendor;
pub mod oidc;
pub mod pkce;
pub mod primary;
pub mod recorder;
mod server;
pub(crate) mod state;
pub mod stats;
pub mod vendor_common;

pub use config::{OidcConfig, SimConfig};
pub use guardrail::config::{
    GuardrailConfig, DEFAULT_BLOCKED_MESSAGE, DEFAULT_GUARDRAIL_ACCESS_KEY_ID,
    DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY,
};
pub use guardrail::scenario::{GuardrailKind, GuardrailScenario, Source as GuardrailSource};
pub use guardrail::GuardrailStats;
pub use idp::{IdTokenTweaks, IdpConfig, IdpRequest, IdpUser, NonceClaim, OAuthError, Signing};
pub use oidc::store::SeededCredentials;
pub use primary::models::{ModelInfo, TokenLimits};
pub use primary::scenario::{Fault, Scenario, ScenarioKind, ScenarioParseError};
pub use recorder::{RecordedRequest, Service};
pub use server::{start, SimHandle, OIDC_PREFIX};
pub use stats::StreamStats;

pub use assistant_vendor::code_host::store::{CodeHostLogin, CodeHostUser};
pub use assistant_vendor::tokens::AssistantToken;
pub use messages_vendor::oauth::{OAuthAccount, OAuthTokens};
pub use vendor_common::config::{
    CodeHostConfig, MessagesOAuthConfig, VendorsConfig, CODE_HOST_DEVICE_CLIENT_ID,
    CODE_HOST_OAUTH_CLIENT_ID, CODE_HOST_OAUTH_CLIENT_SECRET, DEFAULT_COMPLETIONS_API_KEY,
    DEFAULT_CUSTOM_API_KEY, DEFAULT_GITHUB_TOKEN, DEFAULT_MESSAGES_API_KEY,
    MESSAGES_VENDOR_OAUTH_CLIENT_ID, MESSAGES_VENDOR_OAUTH_REDIRECT_URI,
    MESSAGES_VENDOR_OAUTH_SCOPES,
};
pub use vendor_common::scenario::{
    Finish, VendorFault, VendorKind, VendorScenario, VendorScenarioParseError,
};
pub use vendor_common::Vendor;
