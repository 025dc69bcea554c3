//! The pure half of provider selection (interfaces.md 5): reading a
//! `provider_id/model` prefix, the model family's native provider, the
//! proxy-mode priority order and the model name each provider is sent.
//!
//! The registry ([`super::Registry::select`]) adds what needs I/O: which
//! providers are configured and which models a listing-based provider offers.

use super::id::ProviderId;

/// What the client's model name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested<'a> {
    /// `provider_id/model`: that provider, no fallback.
    Explicit {
        provider: ProviderId,
        model: &'a str,
    },
    /// A plain name (which may itself contain `/`, e.g. `meta-llama/Llama-3`).
    Bare(&'a str),
}

/// Split a known provider id off the front of `name`. Only the five ids count
/// as prefixes, so model ids with their own `/` stay whole.
pub fn parse_model(name: &str) -> Requested<'_> {
    if let Some((head, rest)) = name.split_once('/') {
        if let Some(provider) = ProviderId::parse(head) {
            return Requested::Explicit {
                provider,
                model: rest,
            };
        }
    }
    Requested::Bare(name)
}

/// The provider whose own models these are: `claude-*` -> `messages_vendor`;
/// `gpt-*`, `o1*`, `o3*`, `o4*`, `chatgpt-*` -> `completions_vendor`.
pub fn native_family(model: &str) -> Option<ProviderId> {
    let lower = model.trim().to_ascii_lowercase();
    if lower.starts_with("claude-") {
        return Some(ProviderId::MessagesVendor);
    }
    let openai = ["gpt-", "o1", "o3", "o4", "chatgpt-"];
    if openai.iter().any(|p| lower.starts_with(p)) {
        return Some(ProviderId::CompletionsVendor);
    }
    None
}

/// Proxy-mode priority of each provider (lower wins). Only the native vendor
/// of a family and the providers that list a model compete, so the order
/// only matters between a native vendor and the listing-based ones:
/// the model's own vendor first, then `assistant_vendor`, then `custom`.
/// `primary` is not ranked: it serves what no configured provider takes.
pub fn default_priority(provider: ProviderId) -> u32 {
    match provider {
        ProviderId::MessagesVendor => 10,
        ProviderId::CompletionsVendor => 20,
        ProviderId::AssistantVendor => 30,
        ProviderId::Custom => 40,
        ProviderId::Primary => u32::MAX,
    }
}

/// Whether `provider` serves a bare name only when its listing has it
/// (rather than by family).
pub fn serves_by_listing(provider: ProviderId) -> bool {
    matches!(provider, ProviderId::AssistantVendor | ProviderId::Custom)
}

/// The model name `provider` is sent for the client's `model` (prefix gone).
///
/// `messages_vendor` ids never contain dots, while the primary provider's do
/// (`claude-sonnet-4.5`); a dot between digits becomes a dash there, so the
/// same name works with either provider. Other providers get the name as is.
pub fn upstream_model(provider: ProviderId, model: &str) -> String {
    if provider != ProviderId::MessagesVendor || !model.contains('.') {
        return model.to_owned();
    }
    let bytes = model.as_bytes();
    let mut out = String::with_capacity(model.len());
    for (i, c) in model.char_indices() {
        let between_digits = c == '.'
            && i > 0
            && bytes.get(i - 1).is_some_and(u8::is_ascii_digit)
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        out.push(if between_digits { '-' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_ids_are_prefixes() {
        assert_eq!(
            parse_model("custom/llama3"),
            Requested::Explicit {
                provider: ProviderId::Custom,
                model: "llama3"
            }
        );
        assert_eq!(
            parse_model("messages_vendor/claude-sonnet-4-5"),
            Requested::Explicit {
                provider: ProviderId::MessagesVendor,
                model: "claude-sonnet-4-5"
            }
        );
        assert_eq!(
            parse_model("custom/meta-llama/Llama-3-8b"),
            Requested::Explicit {
                provider: ProviderId::Custom,
                model: "meta-llama/Llama-3-8b"
            }
        );
        assert_eq!(
            parse_model("meta-llama/Llama-3-8b"),
            Requested::Bare("meta-llama/Llama-3-8b")
        );
        assert_eq!(parse_model("gpt-4o"), Requested::Bare("gpt-4o"));
        assert_eq!(
            parse_model("primary/claude-sonnet-4.5"),
            Requested::Explicit {
                provider: ProviderId::Primary,
                model: "claude-sonnet-4.5"
            }
        );
    }

    #[test]
    fn families_propose_their_native_vendor() {
        for m in ["claude-sonnet-4-5", "Claude-3-haiku", "claude-opus-4.1"] {
            assert_eq!(native_family(m), Some(ProviderId::MessagesVendor), "{m}");
        }
        for m in [
            "gpt-4o",
            "o1-mini",
            "o3",
            "o4-mini",
            "chatgpt-4o-latest",
            "GPT-5",
        ] {
            assert_eq!(native_family(m), Some(ProviderId::CompletionsVendor), "{m}");
        }
        for m in ["llama3", "gemini-2.5-pro", "claude", "omni", "auto"] {
            assert_eq!(native_family(m), None, "{m}");
        }
    }

    #[test]
    fn messages_vendor_names_lose_their_dots() {
        let mv = ProviderId::MessagesVendor;
        assert_eq!(upstream_model(mv, "claude-sonnet-4.5"), "claude-sonnet-4-5");
        assert_eq!(upstream_model(mv, "claude-3.5-sonnet"), "claude-3-5-sonnet");
        assert_eq!(upstream_model(mv, "claude-sonnet-4-5"), "claude-sonnet-4-5");
        assert_eq!(upstream_model(mv, "x.y"), "x.y");
        assert_eq!(
            upstream_model(ProviderId::AssistantVendor, "claude-sonnet-4.5"),
            "claude-sonnet-4.5"
        );
    }

    #[test]
    fn the_priority_order_is_fixed() {
        let mut ids: Vec<_> = ProviderId::ALL.to_vec();
        ids.sort_by_key(|p| default_priority(*p));
        assert_eq!(
            ids,
            [
                ProviderId::MessagesVendor,
                ProviderId::CompletionsVendor,
                ProviderId::AssistantVendor,
                ProviderId::Custom,
                ProviderId::Primary
            ]
        );
    }
}
