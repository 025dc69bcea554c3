//! Upstream providers (spec 1.2-1.3, interfaces.md 3 and 5).
//!
//! - [`primary`]: the default upstream, reached through its own request
//!   format and event stream.
//! - [`direct`]: the four direct-relay providers (`messages_vendor`,
//!   `completions_vendor`, `assistant_vendor`, `custom`) as one type: base
//!   URLs, authentication, renewal after a 401; with [`oauth`] (the messages
//!   vendor's OAuth refresh) and [`assistant_token`] (the assistant token
//!   exchange).
//! - [`registry`]: which providers are configured, selection per request,
//!   model lists ([`model_list`]); [`select`] holds the pure selection rules
//!   and [`id`] the provider ids and their native formats.

pub mod assistant_token;
pub mod direct;
pub mod id;
pub mod model_list;
pub mod oauth;
pub mod primary;
pub mod registry;
pub mod select;

pub use direct::{CallExtras, DirectProvider, Endpoint, Initiator};
pub use id::{ProviderId, WireFormat};
pub use registry::{Registry, Route};
