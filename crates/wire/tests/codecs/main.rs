//! Property tests of the two codecs and the cross-check of the event-stream
//! codec against `aws-smithy-eventstream`, in one test binary (one link).
//!
//! The modules sit under `cfg(test)` so clippy treats their helpers as test
//! code (where `unwrap` is allowed by `clippy.toml`).

#[cfg(test)]
mod eventstream_props;
#[cfg(test)]
mod smithy_crosscheck;
#[cfg(test)]
mod sse_props;
#[cfg(test)]
mod strategies;
