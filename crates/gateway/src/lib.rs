//! The gateway service.
