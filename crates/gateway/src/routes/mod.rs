//! HTTP handlers: the infrastructure endpoints ([`health`]) and the client API ([`v1`]).

pub(crate) mod health;
pub(crate) mod v1;
