//! Provider ids (spec 2.5) and the wire format each provider speaks natively.

use translate::ClientFormat;

/// One of the registry's providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ProviderId {
    Primary,
    MessagesVendor,
    CompletionsVendor,
    AssistantVendor,
    Custom,
}

/// The native wire format of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// The primary upstream's request JSON answered by an AWS event stream.
    PrimaryEventStream,
    /// OpenAI chat completions (JSON, SSE `data:` chunks).
    OpenAi,
    /// Anthropic messages (JSON, named SSE events).
    Anthropic,
}

impl WireFormat {
    /// Whether a client of `format` can be relayed to this format unchanged.
    pub fn is_client_format(self, format: ClientFormat) -> bool {
        matches!(
            (self, format),
            (WireFormat::OpenAi, ClientFormat::OpenAi)
                | (WireFormat::Anthropic, ClientFormat::Anthropic)
        )
    }
}

impl ProviderId {
    /// Every provider, in the order `/v1/models` lists them.
    pub const ALL: [ProviderId; 5] = [
        ProviderId::Primary,
        ProviderId::MessagesVendor,
        ProviderId::CompletionsVendor,
        ProviderId::AssistantVendor,
        ProviderId::Custom,
    ];

    /// The id as clients and logs spell it (`messages_vendor`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderId::Primary => "primary",
            ProviderId::MessagesVendor => "messages_vendor",
            ProviderId::CompletionsVendor => "completions_vendor",
            ProviderId::AssistantVendor => "assistant_vendor",
            ProviderId::Custom => "custom",
        }
    }

    /// The provider named exactly `id`.
    pub fn parse(id: &str) -> Option<ProviderId> {
        ProviderId::ALL.into_iter().find(|p| p.as_str() == id)
    }

    pub fn native_format(self) -> WireFormat {
        match self {
            ProviderId::Primary => WireFormat::PrimaryEventStream,
            ProviderId::MessagesVendor => WireFormat::Anthropic,
            ProviderId::CompletionsVendor | ProviderId::AssistantVendor | ProviderId::Custom => {
                WireFormat::OpenAi
            }
        }
    }

    /// How a proxy-mode operator enables the provider (for error messages).
    pub fn how_to_configure(self) -> &'static str {
        match self {
            ProviderId::Primary => "log in with `gateway login` (proxy mode)",
            ProviderId::MessagesVendor => {
                "set MESSAGES_VENDOR_API_KEY, or MESSAGES_VENDOR_OAUTH_TOKEN with MESSAGES_VENDOR_REFRESH_TOKEN"
            }
            ProviderId::CompletionsVendor => "set COMPLETIONS_VENDOR_API_KEY",
            ProviderId::AssistantVendor => "set ASSISTANT_VENDOR_GITHUB_TOKEN",
            ProviderId::Custom => "set CUSTOM_BASE_URL (and CUSTOM_API_KEY when the server needs one)",
        }
    }
}

impl std::fmt::Display for ProviderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_formats_are_native() {
        for p in ProviderId::ALL {
            assert_eq!(ProviderId::parse(p.as_str()), Some(p));
        }
        assert_eq!(ProviderId::parse("openai"), None);
        assert!(ProviderId::MessagesVendor
            .native_format()
            .is_client_format(ClientFormat::Anthropic));
        assert!(ProviderId::Custom
            .native_format()
            .is_client_format(ClientFormat::OpenAi));
        assert!(!ProviderId::Primary
            .native_format()
            .is_client_format(ClientFormat::OpenAi));
    }
}
