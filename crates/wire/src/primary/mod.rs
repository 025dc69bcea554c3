//! The `primary` upstream's JSON: the `generateAssistantResponse` request, the
//! payloads of its event-stream events, the model listing and the HTTP error body.
//!
//! Field names are camelCase on the wire. Requests serialize exactly the shape
//! the upstream accepts (optional members are left out rather than sent as
//! `null` or `[]`, since the service rejects fields it does not know). Inputs
//! (events, listings, errors) are read leniently: unknown fields are ignored and
//! missing members take their defaults, so a new upstream field never breaks a
//! stream. The stream parser reads the per-token payloads through borrowed
//! views ([`EventView`]) so that a delta is not copied on the way.

mod events;
mod models;
mod request;
mod text_delta;
mod views;

pub use events::*;
pub use models::*;
pub use request::*;
pub use views::*;
