//! HTTP handlers: the infrastructure endpoints ([`health`]) and the client API ([`v1`]).

pub mod health;
pub mod v1;
