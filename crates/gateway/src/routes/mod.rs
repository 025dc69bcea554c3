//! HTTP handlers: the infrastructure endpoints ([`health`], [`metrics`]) and the client API ([`v1`]).

pub(crate) mod health;
pub(crate) mod metrics;
pub(crate) mod v1;
