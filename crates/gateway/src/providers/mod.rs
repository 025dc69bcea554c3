//! Upstream providers (spec 1.2-1.3, interfaces.md 3 and 5): each one in one
//! place, with the same inner names.
//!
//! | | `primary` ([`primary`]) | the direct providers ([`direct`]) |
//! |---|---|---|
//! | serving a request (`serve`) | `mod.rs` | `mod.rs` (native or converted) |
//! | the upstream request | `request.rs` | `request.rs` |
//! | reading the answer | `stream.rs` (+ `relay.rs`: truncation recovery) | `stream.rs` (converted), `passthrough.rs` (native) |
//! | models | `models/` | `models.rs` |
//! | credentials | `credentials/` | `credentials/` |
//!
//! Around them: the provider ids and their formats ([`id`]), the pure
//! selection rules ([`select`]), the environment's providers and the choice
//! of a provider for a request ([`registry`]), the accounts a caller may
//! use ([`accounts`]), and each user's connected accounts as providers
//! ([`user_direct`]). The model registry's side: its live view, which
//! refuses disabled models ([`model_gate`]), what a caller can call now
//! ([`offer`]), populating it ([`populate`]) from the listings or the
//! static lists kept in the repository ([`static_models`]).
//!
//! The interface every provider offers the pipeline: `serve(&Turn, account,
//! ChatCall) -> Answer`. A provider takes the request's context ([`Turn`]:
//! configuration snapshot, upstream client and policy, caller, reply shape),
//! one account (the credential chosen for this attempt) and the call; it
//! answers either canonical events for the client's encoder or a response it
//! relayed natively.

pub mod accounts;
pub mod cooldowns;
pub mod direct;
pub mod fallbacks;
pub mod id;
pub mod model_gate;
pub mod offer;
pub mod populate;
pub mod primary;
pub mod rate_limits;
pub mod registry;
pub mod select;
pub mod static_models;
pub mod switches;
pub mod user_direct;

use axum::response::Response;
use bytes::Bytes;
use translate::{ChatEvent, ChatRequest, ResponseMeta, StreamError, Usage};

pub use accounts::Accounts;
pub use direct::{CallExtras, DirectProvider, Endpoint, Initiator};
pub use id::{ProviderId, WireFormat};
pub use registry::{Registry, Route};

#[cfg(doc)]
use crate::turn::Turn;

/// What the client asked, as a provider needs it.
#[derive(Debug, Clone)]
pub struct ChatCall {
    /// The body converted to the canonical model.
    pub request: ChatRequest,
    /// The body as received (native pass-through relays it).
    pub raw: Bytes,
    /// The client's `anthropic-beta` header (passed on to the messages vendor).
    pub anthropic_beta: Option<String>,
    /// The client's `anthropic-version` header (passed on natively).
    pub anthropic_version: Option<String>,
    /// Whether a provider of the client's format may relay `raw` as it is;
    /// false when the gateway changed the request or must read the answer
    /// (guardrails), so it goes through the canonical model.
    pub relay_natively: bool,
}

/// A provider's answer.
pub enum Answer {
    /// Canonical events, for the client format's encoder or collector.
    Events(EventAnswer),
    /// A response already built (native pass-through: the provider's bytes).
    Relayed(Response),
}

/// An answer as canonical events: the first batch (read before the client
/// is answered, so an early error is a plain HTTP error) and the rest.
pub struct EventAnswer {
    pub meta: ResponseMeta,
    /// What is known before the provider reports usage (the input estimate).
    pub usage_hint: Usage,
    pub first: Vec<ChatEvent>,
    pub rest: Events,
}

/// Where the rest of an answer's events come from.
pub enum Events {
    /// A `primary` answer with truncation recovery.
    Primary(Box<primary::relay::PrimaryRelay>),
    /// A direct provider's stream in a format other than the client's.
    Provider(Box<direct::stream::ProviderEvents>),
    /// Every event is known already.
    Done,
}

impl Events {
    /// Append the next events to `out`; `false` once the answer is complete.
    pub async fn next(&mut self, out: &mut Vec<ChatEvent>) -> bool {
        match self {
            Events::Primary(relay) => relay.next(out).await,
            Events::Provider(events) => events.fill(out).await,
            Events::Done => false,
        }
    }
}

/// The error of a batch that carries nothing but bookkeeping (start, usage)
/// before it: still "before the first byte", a plain HTTP error.
pub fn leading_error(events: &[ChatEvent]) -> Option<&StreamError> {
    for ev in events {
        match ev {
            ChatEvent::Start { .. } | ChatEvent::Usage(_) => {}
            ChatEvent::Error(err) => return Some(err),
            _ => return None,
        }
    }
    None
}

/// The input-token estimate known before the provider answers.
pub fn input_estimate(req: &ChatRequest) -> Usage {
    Usage {
        input_tokens: Some(translate::tokens::estimate_request(req)),
        ..Usage::default()
    }
}
