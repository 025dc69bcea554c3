//! The recorded provider answers (files under `fixtures/`) and, for each, what
//! it says, written out by hand: the content blocks in order, the usage in
//! canonical terms and the stop reason. Every cell checks the client-format
//! output against these, never against another converter's output.

use std::path::PathBuf;

use translate::{StopReason, Usage};

/// A provider wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// The `primary` upstream: AWS event-stream frames.
    Primary,
    /// An OpenAI chat-completions provider: SSE chunks, or a JSON response.
    OpenAi,
    /// An Anthropic messages provider: SSE events, or a JSON response.
    Anthropic,
}

impl Provider {
    pub fn dir(self) -> &'static str {
        match self {
            Provider::Primary => "primary",
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }
}

/// What the recorded answer contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text only.
    Text,
    /// Parallel tool calls (streamed one after another).
    Tools,
    /// Parallel tool calls whose argument fragments are interleaved.
    ToolsInterleaved,
    /// Native reasoning, then text.
    Thinking,
    /// Reasoning written inline as `<thinking>` tags (fake reasoning).
    ThinkingTags,
}

impl Kind {
    pub fn file_stem(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Tools => "tools",
            Kind::ToolsInterleaved => "tools_interleaved",
            Kind::Thinking => "thinking",
            Kind::ThinkingTags => "thinking_tags",
        }
    }
}

/// One content block of the answer, in the order the provider produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Thinking {
        text: &'static str,
        signature: Option<&'static str>,
    },
    Redacted(&'static str),
    Text(&'static str),
    Tool {
        id: &'static str,
        name: &'static str,
        /// The argument text exactly as the stream delivered it.
        arguments: &'static str,
    },
}

/// What a recorded answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub blocks: Vec<Block>,
    /// Canonical usage: `input` excludes cache reads and writes.
    pub usage: Usage,
    pub stop: StopReason,
    pub stop_sequence: Option<&'static str>,
}

impl Expected {
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text(t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    pub fn thinking(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Thinking { text, .. } => Some(*text),
                _ => None,
            })
            .collect()
    }

    /// `(id, name, arguments)` of each tool call, in order.
    pub fn tools(&self) -> Vec<(&'static str, &'static str, &'static str)> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Tool {
                    id,
                    name,
                    arguments,
                } => Some((*id, *name, *arguments)),
                _ => None,
            })
            .collect()
    }

    /// Thinking signatures and redacted-thinking data: what only the
    /// messages format can carry.
    pub fn opaque_reasoning(&self) -> Vec<&'static str> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Thinking {
                    signature: Some(s), ..
                } => Some(*s),
                Block::Redacted(d) => Some(*d),
                _ => None,
            })
            .collect()
    }

    pub fn has_unsigned_thinking(&self) -> bool {
        self.blocks.iter().any(|b| {
            matches!(
                b,
                Block::Thinking {
                    signature: None,
                    ..
                }
            )
        })
    }
}

fn usage(input: u32, output: u32, cache_read: Option<u32>, cache_write: Option<u32>) -> Usage {
    Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
    }
}

/// Path of a fixture file.
pub fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/fixtures")
        .join(rel)
}

/// Bytes of a fixture file.
pub fn read(rel: &str) -> Vec<u8> {
    let p = path(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

/// The recorded stream of a provider for a kind (`.frames` or `.sse`).
pub fn stream_file(provider: Provider, kind: Kind) -> Vec<u8> {
    let ext = match provider {
        Provider::Primary => "frames",
        Provider::OpenAi | Provider::Anthropic => "sse",
    };
    read(&format!("{}/{}.{ext}", provider.dir(), kind.file_stem()))
}

/// The recorded whole (non-streaming) JSON response of a provider for a kind.
pub fn json_file(provider: Provider, kind: Kind) -> Vec<u8> {
    read(&format!("{}/{}.json", provider.dir(), kind.file_stem()))
}

/// What the recording of `provider` for `kind` says. The JSON responses
/// record the same answers as the streams of the same name.
pub fn expected(provider: Provider, kind: Kind) -> Expected {
    use Block::*;
    match (provider, kind) {
        (Provider::Primary, Kind::Text) => Expected {
            blocks: vec![Text(
                "Bonjour ! Voici la réponse courte : le café ☕ ouvre à 8 h, et le marché 日曜日 aussi. 🦀",
            )],
            usage: usage(312, 29, Some(2048), Some(640)),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (Provider::Primary, Kind::Tools) => Expected {
            blocks: vec![
                Text("Je vérifie la météo des deux villes."),
                Tool {
                    id: "tooluse_Qm3xKd9LQ0aZ",
                    name: "get_weather",
                    arguments: r#"{"city": "Zürich", "unit": "celsius"}"#,
                },
                Tool {
                    id: "tooluse_Vb81pTzW2rEc",
                    name: "get_local_time",
                    arguments: r#"{"city": "São Paulo"}"#,
                },
            ],
            usage: usage(845, 71, None, None),
            stop: StopReason::ToolUse,
            stop_sequence: None,
        },
        (Provider::Primary, Kind::Thinking) => Expected {
            blocks: vec![
                Thinking {
                    text: "L'utilisateur veut la somme de 17 et 25 : 17 + 25 = 42, rien à vérifier de plus.",
                    signature: Some("EqQBCkgIBxABGAIiQGNvbmZvcm1hbmNlLXNpZ25hdHVyZS1wcmltYXJ5LTAx"),
                },
                Text("La somme vaut **42**."),
            ],
            usage: usage(54, 38, None, None),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (Provider::Primary, Kind::ThinkingTags) => Expected {
            blocks: vec![
                Thinking {
                    text: "Le client demande une conversion : 3 km ≈ 1,86 miles. Vérifions : 3 × 0,621 = 1,863.",
                    signature: None,
                },
                Text("Trois kilomètres font environ 1,86 mille."),
            ],
            usage: usage(1410, 64, None, None),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (Provider::OpenAi, Kind::Text) => Expected {
            blocks: vec![Text(
                "Voilà : la tour Eiffel mesure 330 m — soit ≈ 1 083 pieds. 🗼",
            )],
            // prompt_tokens 1890 of which 1792 cached.
            usage: usage(98, 23, Some(1792), None),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (Provider::OpenAi, Kind::Tools) => Expected {
            blocks: vec![
                Tool {
                    id: "call_8fKq2ZrLw1XyQe5T",
                    name: "get_weather",
                    arguments: r#"{"city": "Zürich", "unit": "celsius"}"#,
                },
                Tool {
                    id: "call_Tn4v0HsPq9BdW2mK",
                    name: "get_local_time",
                    arguments: r#"{"city": "São Paulo"}"#,
                },
            ],
            usage: usage(402, 58, Some(0), None),
            stop: StopReason::ToolUse,
            stop_sequence: None,
        },
        (Provider::OpenAi, Kind::ToolsInterleaved) => Expected {
            blocks: vec![
                Text("Deux appels en parallèle…"),
                Tool {
                    id: "chatcmpl-tool-a1f3",
                    name: "get_weather",
                    arguments: r#"{"city": "Köln", "unit": "celsius"}"#,
                },
                Tool {
                    id: "chatcmpl-tool-b7e2",
                    name: "get_local_time",
                    arguments: r#"{"city": "Reykjavík"}"#,
                },
            ],
            usage: usage(377, 49, None, None),
            stop: StopReason::ToolUse,
            stop_sequence: None,
        },
        (Provider::OpenAi, Kind::Thinking) => Expected {
            blocks: vec![
                Thinking {
                    text: "On cherche 12 × 12 = 144 ; vérifié deux fois.",
                    signature: None,
                },
                Text("12² = 144."),
            ],
            usage: usage(21, 187, Some(0), None),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (Provider::Anthropic, Kind::Text) => Expected {
            blocks: vec![Text(
                "Ja, gern! Die Größe beträgt 12 m², der Preis 1 250 € — ganz ohne Gewähr.",
            )],
            usage: usage(42, 31, Some(0), Some(0)),
            stop: StopReason::StopSequence,
            stop_sequence: Some("###"),
        },
        (Provider::Anthropic, Kind::Tools) => Expected {
            blocks: vec![
                Text("Ich prüfe beide Städte."),
                Tool {
                    id: "toolu_01A09q90qw90lq917835lq9",
                    name: "get_weather",
                    arguments: r#"{"city": "Zürich", "unit": "celsius"}"#,
                },
                Tool {
                    id: "toolu_01B7fQ2mNcV8pXsL4dKe3Wz",
                    name: "get_local_time",
                    arguments: r#"{"city": "São Paulo"}"#,
                },
            ],
            usage: usage(512, 96, Some(0), Some(2210)),
            stop: StopReason::ToolUse,
            stop_sequence: None,
        },
        (Provider::Anthropic, Kind::Thinking) => Expected {
            blocks: vec![
                Thinking {
                    text: "Die Frage: Wie viele Sekunden hat ein Tag? 24 × 60 × 60 = 86 400.",
                    signature: Some(
                        "ErUBCkYIBRgCIkDmT2Nmb3JtYW5jZS1zaWduYXR1cmUtYW50aHJvcGljLTAxEgx0aGlua2luZy1ibG9jaw==",
                    ),
                },
                Redacted(
                    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB",
                ),
                Text("Ein Tag hat 86 400 Sekunden."),
            ],
            usage: usage(87, 245, Some(3072), Some(0)),
            stop: StopReason::EndTurn,
            stop_sequence: None,
        },
        (provider, kind) => panic!("no recording of {kind:?} for {provider:?}"),
    }
}
