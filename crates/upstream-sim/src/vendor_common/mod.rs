//! What the four SSE vendors share: the [`Vendor`] names, the scenario type
//! and its directive grammar ([`scenario`]), scenario choice per vendor
//! ([`select`]), the vendor-neutral answer plan every format renders
//! ([`answer`]), SSE framing and pacing with faults (`sse`), the played
//! responses (`reply`), ids (`ids`), the configuration ([`config`]) and the
//! state kept across requests (`state`).

pub mod answer;
pub mod config;
pub(crate) mod ids;
pub(crate) mod reply;
pub mod scenario;
pub mod select;
pub(crate) mod sse;
pub(crate) mod state;

use std::fmt;
use std::str::FromStr;

/// One of the simulated vendor APIs (each has its own scenario queue and
/// stream counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// The messages vendor (Anthropic Messages API), under `/messages_vendor`.
    Messages,
    /// The completions vendor (OpenAI chat completions), under `/completions_vendor`.
    Completions,
    /// An OpenAI-compatible server, under `/custom/v1`.
    Custom,
    /// The assistant vendor's chat API (Copilot), under `/assistant_vendor_api`.
    Assistant,
}

impl Vendor {
    /// Every vendor, in a fixed order.
    pub const ALL: [Vendor; 4] = [
        Vendor::Messages,
        Vendor::Completions,
        Vendor::Custom,
        Vendor::Assistant,
    ];

    /// The provider id the gateway uses for it.
    pub fn id(self) -> &'static str {
        match self {
            Vendor::Messages => "messages_vendor",
            Vendor::Completions => "completions_vendor",
            Vendor::Custom => "custom",
            Vendor::Assistant => "assistant_vendor",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Vendor::Messages => 0,
            Vendor::Completions => 1,
            Vendor::Custom => 2,
            Vendor::Assistant => 3,
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Vendor {
    type Err = String;

    /// Parse a provider id (`messages_vendor`, `completions_vendor`, `custom`, `assistant_vendor`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Vendor::ALL
            .into_iter()
            .find(|v| v.id() == s)
            .ok_or_else(|| format!("unknown vendor '{s}'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_index_is_dense() {
        for (i, v) in Vendor::ALL.into_iter().enumerate() {
            assert_eq!(v.id().parse::<Vendor>(), Ok(v));
            assert_eq!(v.index(), i);
        }
        assert!("primary".parse::<Vendor>().is_err());
    }
}
