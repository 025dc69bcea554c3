//! The gateway's integration tests: one binary (one link), one module per area.
//! Helpers panic on setup failures, as tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod infra;
