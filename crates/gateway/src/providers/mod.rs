//! Upstream providers. Each turns a canonical [`translate::ChatRequest`] into
//! its own request, sends it with the retry policy, and reads its answer back
//! as [`translate::ChatEvent`]s.

pub mod primary;
