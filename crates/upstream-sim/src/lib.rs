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
//! # Cost
//!
//! The simulator is also the benchmark upstream: no added latency, no
//! per-request logging, TCP_NODELAY on accepted sockets, answers framed in
//! one buffer and written in one piece unless a scenario paces them.

pub mod config;
pub mod idp;
mod ids;
pub mod oidc;
pub mod primary;
pub mod recorder;
mod server;
mod state;
pub mod stats;

pub use config::{OidcConfig, SimConfig};
pub use idp::{IdTokenTweaks, IdpConfig, IdpRequest, IdpUser, NonceClaim, OAuthError, Signing};
pub use oidc::store::SeededCredentials;
pub use primary::models::{ModelInfo, TokenLimits};
pub use primary::scenario::{Fault, Scenario, ScenarioKind, ScenarioParseError};
pub use recorder::{RecordedRequest, Service};
pub use server::{start, SimHandle, OIDC_PREFIX};
pub use stats::StreamStats;
