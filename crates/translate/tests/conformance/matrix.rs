//! The matrix: one list of cells, each a test named after it.
//!
//! A cell is (provider format, content kind) x (client format, mode), plus
//! its fidelity: `Exact` when the client format can say everything the
//! recording says, or the named loss the cell asserts instead. The fidelity
//! is checked against the recording too, so a cell can neither hide a loss
//! nor claim one that does not happen. `docs/conformance.md` lays the same
//! list out as a table; `the_document_names_every_cell` keeps the two in step.

use translate::{ChatEvent, ChatResponse, Collector};

use crate::fixtures::{self, Expected, Kind, Provider};
use crate::{anthropic_client, anthropic_provider, openai_client, openai_provider, primary};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// OpenAI chat completions.
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Recorded stream -> client stream encoder -> SSE bytes.
    Stream,
    /// Recorded stream -> `Collector` -> `render_response`.
    Whole,
    /// Recorded whole JSON response -> `response_events` -> `Collector` ->
    /// `render_response`.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fidelity {
    /// Everything the recording says reaches the client.
    Exact,
    /// OpenAI output has no place for thinking signatures or redacted
    /// thinking: the cell asserts they are absent from every byte and that
    /// the reasoning text still arrives as `reasoning_content`.
    SignatureDropped,
    /// The provider's thinking has no signature: the messages-format client
    /// gets its thinking block with `signature: ""` (and no `signature_delta`).
    Unsigned,
    /// OpenAI has no field for the stop sequence that ended the answer: the
    /// cell asserts `finish_reason: "stop"` and the sequence absent.
    StopSequenceDropped,
    /// OpenAI has no cache-write count: the cell asserts the written tokens
    /// are counted in `prompt_tokens` (and not in `cached_tokens`).
    CacheWriteFolded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub provider: Provider,
    pub kind: Kind,
    pub client: Client,
    pub mode: Mode,
    pub fidelity: Fidelity,
}

/// Generates one `#[test]` per cell and the list [`CELLS`].
macro_rules! matrix {
    ($( $(#[$attr:meta])* $name:ident: $provider:ident $kind:ident => $client:ident $mode:ident $fidelity:ident; )*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                run(&CELLS.iter().find(|(n, _)| *n == stringify!($name)).unwrap().1);
            }
        )*

        /// Every cell of the matrix, by test name.
        pub const CELLS: &[(&str, Cell)] = &[
            $((
                stringify!($name),
                Cell {
                    provider: Provider::$provider,
                    kind: Kind::$kind,
                    client: Client::$client,
                    mode: Mode::$mode,
                    fidelity: Fidelity::$fidelity,
                },
            ),)*
        ];
    };
}

matrix! {
    // primary (AWS event stream) --------------------------------------------
    primary_text_to_openai_stream_cache_write_folded: Primary Text => OpenAi Stream CacheWriteFolded;
    primary_text_to_openai_whole_cache_write_folded: Primary Text => OpenAi Whole CacheWriteFolded;
    primary_text_to_anthropic_stream: Primary Text => Anthropic Stream Exact;
    primary_text_to_anthropic_whole: Primary Text => Anthropic Whole Exact;

    primary_tools_to_openai_stream: Primary Tools => OpenAi Stream Exact;
    primary_tools_to_openai_whole: Primary Tools => OpenAi Whole Exact;
    primary_tools_to_anthropic_stream: Primary Tools => Anthropic Stream Exact;
    primary_tools_to_anthropic_whole: Primary Tools => Anthropic Whole Exact;

    primary_thinking_to_openai_stream_signature_dropped: Primary Thinking => OpenAi Stream SignatureDropped;
    primary_thinking_to_openai_whole_signature_dropped: Primary Thinking => OpenAi Whole SignatureDropped;
    primary_thinking_to_anthropic_stream: Primary Thinking => Anthropic Stream Exact;
    primary_thinking_to_anthropic_whole: Primary Thinking => Anthropic Whole Exact;

    primary_thinking_tags_to_openai_stream: Primary ThinkingTags => OpenAi Stream Exact;
    primary_thinking_tags_to_openai_whole: Primary ThinkingTags => OpenAi Whole Exact;
    primary_thinking_tags_to_anthropic_stream_unsigned: Primary ThinkingTags => Anthropic Stream Unsigned;
    primary_thinking_tags_to_anthropic_whole_unsigned: Primary ThinkingTags => Anthropic Whole Unsigned;

    // OpenAI chat-completions provider (SSE chunks, JSON response) -----------
    openai_text_to_openai_stream: OpenAi Text => OpenAi Stream Exact;
    openai_text_to_openai_whole: OpenAi Text => OpenAi Whole Exact;
    openai_text_json_to_openai_whole: OpenAi Text => OpenAi Json Exact;
    openai_text_to_anthropic_stream: OpenAi Text => Anthropic Stream Exact;
    openai_text_to_anthropic_whole: OpenAi Text => Anthropic Whole Exact;
    openai_text_json_to_anthropic_whole: OpenAi Text => Anthropic Json Exact;

    openai_tools_to_openai_stream: OpenAi Tools => OpenAi Stream Exact;
    openai_tools_to_openai_whole: OpenAi Tools => OpenAi Whole Exact;
    openai_tools_json_to_openai_whole: OpenAi Tools => OpenAi Json Exact;
    openai_tools_to_anthropic_stream: OpenAi Tools => Anthropic Stream Exact;
    openai_tools_to_anthropic_whole: OpenAi Tools => Anthropic Whole Exact;
    openai_tools_json_to_anthropic_whole: OpenAi Tools => Anthropic Json Exact;

    openai_tools_interleaved_to_openai_stream: OpenAi ToolsInterleaved => OpenAi Stream Exact;
    openai_tools_interleaved_to_openai_whole: OpenAi ToolsInterleaved => OpenAi Whole Exact;
    openai_tools_interleaved_to_anthropic_stream: OpenAi ToolsInterleaved => Anthropic Stream Exact;
    openai_tools_interleaved_to_anthropic_whole: OpenAi ToolsInterleaved => Anthropic Whole Exact;

    openai_thinking_to_openai_stream: OpenAi Thinking => OpenAi Stream Exact;
    openai_thinking_to_openai_whole: OpenAi Thinking => OpenAi Whole Exact;
    openai_thinking_json_to_openai_whole: OpenAi Thinking => OpenAi Json Exact;
    openai_thinking_to_anthropic_stream_unsigned: OpenAi Thinking => Anthropic Stream Unsigned;
    openai_thinking_to_anthropic_whole_unsigned: OpenAi Thinking => Anthropic Whole Unsigned;
    openai_thinking_json_to_anthropic_whole_unsigned: OpenAi Thinking => Anthropic Json Unsigned;

    // Anthropic messages provider (SSE events, JSON response) ----------------
    anthropic_text_to_openai_stream_stop_sequence_dropped: Anthropic Text => OpenAi Stream StopSequenceDropped;
    anthropic_text_to_openai_whole_stop_sequence_dropped: Anthropic Text => OpenAi Whole StopSequenceDropped;
    anthropic_text_json_to_openai_whole_stop_sequence_dropped: Anthropic Text => OpenAi Json StopSequenceDropped;
    anthropic_text_to_anthropic_stream: Anthropic Text => Anthropic Stream Exact;
    anthropic_text_to_anthropic_whole: Anthropic Text => Anthropic Whole Exact;
    anthropic_text_json_to_anthropic_whole: Anthropic Text => Anthropic Json Exact;

    anthropic_tools_to_openai_stream_cache_write_folded: Anthropic Tools => OpenAi Stream CacheWriteFolded;
    anthropic_tools_to_openai_whole_cache_write_folded: Anthropic Tools => OpenAi Whole CacheWriteFolded;
    anthropic_tools_json_to_openai_whole_cache_write_folded: Anthropic Tools => OpenAi Json CacheWriteFolded;
    anthropic_tools_to_anthropic_stream: Anthropic Tools => Anthropic Stream Exact;
    anthropic_tools_to_anthropic_whole: Anthropic Tools => Anthropic Whole Exact;
    anthropic_tools_json_to_anthropic_whole: Anthropic Tools => Anthropic Json Exact;

    anthropic_thinking_to_openai_stream_signature_dropped: Anthropic Thinking => OpenAi Stream SignatureDropped;
    anthropic_thinking_to_openai_whole_signature_dropped: Anthropic Thinking => OpenAi Whole SignatureDropped;
    anthropic_thinking_json_to_openai_whole_signature_dropped: Anthropic Thinking => OpenAi Json SignatureDropped;
    anthropic_thinking_to_anthropic_stream: Anthropic Thinking => Anthropic Stream Exact;
    anthropic_thinking_to_anthropic_whole: Anthropic Thinking => Anthropic Whole Exact;
    anthropic_thinking_json_to_anthropic_whole: Anthropic Thinking => Anthropic Json Exact;
}

/// Runs one cell: recorded answer -> canonical events -> client format,
/// checked field by field against what the recording says.
pub fn run(cell: &Cell) {
    let expected = fixtures::expected(cell.provider, cell.kind);
    check_fidelity(cell, &expected);
    let events = match cell.mode {
        Mode::Stream | Mode::Whole => match cell.provider {
            Provider::Primary => primary::events(cell.kind),
            Provider::OpenAi => openai_provider::events(cell.kind),
            Provider::Anthropic => anthropic_provider::events(cell.kind),
        },
        Mode::Json => match cell.provider {
            Provider::Primary => panic!("the primary upstream has no whole response"),
            Provider::OpenAi => openai_provider::json_events(cell.kind),
            Provider::Anthropic => anthropic_provider::json_events(cell.kind),
        },
    };
    check_contract(&events);
    // A whole response is re-serialized by the provider, so its argument
    // text may differ from the streamed one in spacing: compare as JSON.
    let args = match cell.mode {
        Mode::Json => Args::SameJson,
        Mode::Stream | Mode::Whole => Args::SameText,
    };
    match (cell.client, cell.mode) {
        (Client::OpenAi, Mode::Stream) => openai_client::check_stream(&events, &expected),
        (Client::OpenAi, _) => openai_client::check_whole(&collect(&events), &expected, args),
        (Client::Anthropic, Mode::Stream) => anthropic_client::check_stream(&events, &expected),
        (Client::Anthropic, _) => anthropic_client::check_whole(&collect(&events), &expected),
    }
}

/// How tool-call argument text is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    SameText,
    SameJson,
}

impl Args {
    pub fn assert_eq(self, actual: &str, expected: &str) {
        match self {
            Args::SameText => assert_eq!(actual, expected, "tool arguments"),
            Args::SameJson => assert_eq!(
                serde_json::from_str::<serde_json::Value>(actual).unwrap(),
                serde_json::from_str::<serde_json::Value>(expected).unwrap(),
                "tool arguments"
            ),
        }
    }
}

/// The events folded into a whole answer.
pub fn collect(events: &[ChatEvent]) -> ChatResponse {
    let mut collector = Collector::new();
    for e in events {
        collector.push(e.clone());
    }
    collector.finish().unwrap()
}

/// The cell's fidelity is the one the recording and client imply (the
/// recordings are made so that at most one loss applies to a cell).
fn check_fidelity(cell: &Cell, expected: &Expected) {
    let mut implied = Vec::new();
    match cell.client {
        Client::OpenAi => {
            if !expected.opaque_reasoning().is_empty() {
                implied.push(Fidelity::SignatureDropped);
            }
            if expected.stop_sequence.is_some() {
                implied.push(Fidelity::StopSequenceDropped);
            }
            if expected.usage.cache_write_tokens.unwrap_or(0) > 0 {
                implied.push(Fidelity::CacheWriteFolded);
            }
        }
        Client::Anthropic => {
            if expected.has_unsigned_thinking() {
                implied.push(Fidelity::Unsigned);
            }
        }
    }
    assert!(implied.len() <= 1, "one loss per cell: {implied:?}");
    assert_eq!(
        cell.fidelity,
        implied.pop().unwrap_or(Fidelity::Exact),
        "the cell's named fidelity"
    );
}

/// The ordering contract of `ChatEvent` producers (see `model.rs`): `Start`
/// first and at most once; each tool call `ToolCallStart` (indexes from 0 in
/// order), deltas, one `ToolCallEnd`; one `Stop` after all content (only
/// `Usage` may follow); no `Error`.
pub fn check_contract(events: &[ChatEvent]) {
    let mut open: Vec<u32> = Vec::new();
    let mut started_tools = 0u32;
    let mut stopped = false;
    for (i, e) in events.iter().enumerate() {
        match e {
            ChatEvent::Start { .. } => assert_eq!(i, 0, "Start must come first"),
            ChatEvent::Usage(_) => {}
            ChatEvent::Error(err) => panic!("unexpected error event: {err:?}"),
            ChatEvent::Stop { .. } => {
                assert!(!stopped, "two Stop events");
                assert!(open.is_empty(), "Stop with tool calls still open: {open:?}");
                stopped = true;
            }
            _ if stopped => panic!("content after Stop: {e:?}"),
            ChatEvent::ToolCallStart { index, .. } => {
                assert_eq!(*index, started_tools, "tool indexes count from 0 in order");
                started_tools += 1;
                open.push(*index);
            }
            ChatEvent::ToolCallDelta { index, .. } => {
                assert!(open.contains(index), "delta for a call not open: {index}")
            }
            ChatEvent::ToolCallEnd { index } => {
                assert!(open.contains(index), "end of a call not open: {index}");
                open.retain(|i| i != index);
            }
            ChatEvent::TextDelta(_)
            | ChatEvent::ThinkingDelta(_)
            | ChatEvent::ThinkingSignature(_)
            | ChatEvent::RedactedThinking(_) => {}
        }
    }
    assert!(stopped, "no Stop event");
}

/// The stop reason word of each client format, written out independently of
/// `translate::stop`.
pub fn openai_finish_reason(reason: &translate::StopReason) -> &'static str {
    use translate::StopReason::*;
    match reason {
        EndTurn | StopSequence | PauseTurn => "stop",
        MaxTokens => "length",
        ToolUse => "tool_calls",
        ContentFilter | Refusal => "content_filter",
    }
}

pub fn anthropic_stop_reason(reason: &translate::StopReason) -> &'static str {
    use translate::StopReason::*;
    match reason {
        EndTurn => "end_turn",
        MaxTokens => "max_tokens",
        ToolUse => "tool_use",
        StopSequence => "stop_sequence",
        PauseTurn => "pause_turn",
        ContentFilter | Refusal => "refusal",
    }
}

#[test]
fn the_matrix_has_no_gap() {
    use Client::*;
    use Kind::*;
    use Mode::*;
    let rows: &[(Provider, &[Kind])] = &[
        (Provider::Primary, &[Text, Tools, Thinking, ThinkingTags]),
        (Provider::OpenAi, &[Text, Tools, ToolsInterleaved, Thinking]),
        (Provider::Anthropic, &[Text, Tools, Thinking]),
    ];
    let mut expected_cells = 0;
    for (provider, kinds) in rows {
        for kind in *kinds {
            let has_json = *provider != Provider::Primary && *kind != ToolsInterleaved;
            for client in [OpenAi, Anthropic] {
                let mut modes = vec![Stream, Whole];
                if has_json {
                    modes.push(Json);
                }
                for mode in modes {
                    expected_cells += 1;
                    let n = CELLS
                        .iter()
                        .filter(|(_, c)| {
                            c.provider == *provider
                                && c.kind == *kind
                                && c.client == client
                                && c.mode == mode
                        })
                        .count();
                    assert_eq!(n, 1, "{provider:?} {kind:?} {client:?} {mode:?}");
                }
            }
        }
    }
    assert_eq!(CELLS.len(), expected_cells);
}

#[test]
fn the_document_names_every_cell() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/conformance.md"),
    )
    .unwrap();
    for (name, _) in CELLS {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/conformance.md lacks `{name}`"
        );
    }
    let others = [
        crate::requests::CELLS,
        crate::stop_reasons::CELLS,
        crate::errors::CELLS,
    ];
    for name in others.concat() {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/conformance.md lacks `{name}`"
        );
    }
}
