//! Credentials of the direct providers that need more than a static key:
//! the messages vendor's OAuth tokens with single-flight refresh ([`oauth`])
//! and the sign-in that gives them ([`oauth_signin`]), the assistant
//! vendor's exchanged token ([`assistant_token`]) and the code-host sign-in
//! that gives the token it exchanges ([`code_host`]). How a request carries
//! each kind is [`super::request::Auth`].

pub mod assistant_token;
pub mod code_host;
pub mod oauth;
pub mod oauth_signin;
