//! Credentials of the direct providers that need more than a static key:
//! the messages vendor's OAuth tokens with single-flight refresh ([`oauth`])
//! and the assistant vendor's exchanged token ([`assistant_token`]). How a
//! request carries each kind is [`super::request::Auth`].

pub mod assistant_token;
pub mod oauth;
