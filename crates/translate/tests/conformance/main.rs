//! Conformance matrix of the pure core.
//!
//! Every provider wire format (`primary` event stream, OpenAI SSE, Anthropic
//! SSE, and the whole JSON responses of the last two) x every client format
//! (OpenAI chat completions, Anthropic messages) x streaming / whole x content
//! kind (text, parallel tool calls, thinking): a recorded provider answer runs
//! through the real decoders and converters, and the client-format result is
//! checked field by field against what the recording says. Plus the
//! cross-format request cells. `docs/conformance.md` is the map.
//!
//! Layout: `fixtures` (recordings and what they say), `chunking` (awkward
//! network reads), one module per provider format (recording -> events), one
//! per client format (events -> checked output), `matrix` (the list of cells),
//! and the cells beside it: `requests`, `stop_reasons`, `errors`.
//!
//! The modules sit under `cfg(test)` so clippy treats their helpers as test
//! code (where `unwrap` is allowed by `clippy.toml`).

#[cfg(test)]
mod anthropic_client;
#[cfg(test)]
mod anthropic_provider;
#[cfg(test)]
mod chunking;
#[cfg(test)]
mod errors;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod matrix;
#[cfg(test)]
mod openai_client;
#[cfg(test)]
mod openai_provider;
#[cfg(test)]
mod primary;
#[cfg(test)]
mod requests;
#[cfg(test)]
mod stop_reasons;
