//! Token estimates, for usage when a provider reports none.
//!
//! Two counters:
//! - [`count_text`], the one the hot path uses: a single pass over the bytes
//!   that mimics how the `cl100k_base` BPE splits text (words with their
//!   leading space, digit groups of three, punctuation runs, newlines, one or
//!   more tokens per non-ASCII character), driven by a table of byte classes.
//!   It allocates nothing and costs about 14-17 instructions (under a
//!   nanosecond) per byte of English prose, code or JSON, about 6 per byte of
//!   CJK text (`benches/tokens.rs`; docs/benchmarks.md). On English prose,
//!   code, JSON and CJK text it lands within 10 % of the real BPE count, on
//!   URL-heavy or accented text within 20 % (the calibration test pins every
//!   sample inside 0.85-1.2x).
//! - `count_text_bpe` (test builds only), the real `cl100k_base` BPE
//!   (tiktoken-rs, a dev-dependency, vocabulary embedded in that crate): exact
//!   for OpenAI models but roughly a thousand times slower, so it is kept for
//!   the calibration test and never ships.
//!
//! Claude models use their own tokenizer, which is not public; it yields
//! somewhat more tokens than `cl100k_base`, so [`CLAUDE_CORRECTION`] scales
//! counts for Claude-family models. These are estimates and are reported as
//! such in the docs; exact provider figures always win (see `Usage::merge`).
//!
//! Per-message overheads follow OpenAI's published accounting for chat
//! (about 4 tokens per message, 3 to prime the reply), and images count a flat
//! [`IMAGE_TOKENS`] since their real cost depends on resolution.

use crate::model::{ChatRequest, ContentPart, ImageSource, ToolResultContent};

/// Flat estimate for one image.
pub const IMAGE_TOKENS: u32 = 1_600;
/// Tokens added per message for role and separators.
const PER_MESSAGE: u32 = 4;
/// Tokens that prime the assistant's reply.
const REPLY_PRIMING: u32 = 3;
/// Multiplier applied for Claude-family models (their tokenizer is finer).
pub const CLAUDE_CORRECTION: f64 = 1.15;

/// Estimated `cl100k_base` tokens in `text`, in one pass without allocation.
///
/// The text is taken as runs of one kind (a word, a digit group, a stretch
/// of whitespace, a punctuation run, one other character); each byte costs
/// one load from [`CLASSES`].
pub fn count_text(text: &str) -> u32 {
    let mut rest = text.as_bytes();
    // Costs are kept in tenths of a token so that fractional habits of the
    // BPE (merged punctuation, CJK characters) can be expressed.
    let mut tenths: usize = 0;
    while let Some(&first) = rest.first() {
        let (len, cost) = match class_of(first) {
            Class::Letter => {
                let len = letter_run(rest);
                (len, 10 * word_tokens(len))
            }
            Class::Digit => {
                let len = run_of(rest, Class::Digit);
                (len, 10 * len.div_ceil(3))
            }
            Class::Punct => {
                // Punctuation runs (`":"`, `"},{"`, `();`) merge into one
                // token per few characters.
                let len = run_of(rest, Class::Punct);
                (len, 10 * len.div_ceil(4))
            }
            // A single space or tab before a word, the most common run of
            // all, is glued to the token after it.
            Class::Blank if rest.get(1).is_some_and(|&b| !class_of(b).is_space()) => (1, 0),
            Class::Blank | Class::Newline | Class::OtherSpace => whitespace(rest),
            Class::Control => (1, 10),
            // Accented Latin and friends usually merge with their word.
            Class::Lead2 => (2, 5),
            // CJK: most common characters are one token, rarer ones two or three.
            Class::Lead3 => (3, 8),
            // Emoji and other astral characters: about one token.
            Class::Lead4 => (4, 10),
            // Never first in a `str`; counted like the lead of a short character.
            Class::Continuation => (1, 5),
        };
        tenths += cost;
        rest = rest.get(len..).unwrap_or_default();
    }
    saturate(tenths.div_ceil(10))
}

/// What a byte is to the estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// ASCII letter.
    Letter,
    /// ASCII digit.
    Digit,
    /// Space or tab: whitespace that makes up indentation.
    Blank,
    /// `\n`.
    Newline,
    /// Other ASCII whitespace (`\r`, form feed).
    OtherSpace,
    /// ASCII punctuation.
    Punct,
    /// Any other ASCII byte (control characters, DEL).
    Control,
    /// First byte of a 2-, 3- or 4-byte UTF-8 character.
    Lead2,
    Lead3,
    Lead4,
    /// A later byte of a multi-byte UTF-8 character.
    Continuation,
}

impl Class {
    fn is_space(self) -> bool {
        matches!(self, Class::Blank | Class::Newline | Class::OtherSpace)
    }
}

/// The class of every byte, built at compile time.
static CLASSES: [Class; 256] = {
    let mut table = [Class::Control; 256];
    let mut b: u8 = 0;
    loop {
        table[b as usize] = classify(b);
        if b == u8::MAX {
            break;
        }
        b += 1;
    }
    table
};

const fn classify(b: u8) -> Class {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
        b'0'..=b'9' => Class::Digit,
        b' ' | b'\t' => Class::Blank,
        b'\n' => Class::Newline,
        b'\r' | 0x0C => Class::OtherSpace,
        b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~' => Class::Punct,
        0x00..=0x7F => Class::Control,
        0x80..=0xBF => Class::Continuation,
        0xC0..=0xDF => Class::Lead2,
        0xE0..=0xEF => Class::Lead3,
        0xF0..=0xFF => Class::Lead4,
    }
}

fn class_of(b: u8) -> Class {
    CLASSES[usize::from(b)]
}

/// Length of the run of `class` that `bytes` starts with.
fn run_of(bytes: &[u8], class: Class) -> usize {
    bytes
        .iter()
        .position(|&b| class_of(b) != class)
        .unwrap_or(bytes.len())
}

/// [`run_of`] for [`Class::Letter`], the commonest run, eight bytes a step:
/// the high bit of each byte of a word is set where the byte is an ASCII
/// letter (a byte below 0x80 that, with bit 5 set, lies in `a..=z`), and the
/// run ends at the first byte without it.
fn letter_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut len = 0;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // Bytes of 0x80 and above are never letters: their high bit is
        // cleared from the sums (no carry crosses a byte, every byte of
        // `folded` is below 0x80) and from the result.
        let folded = (x | (ONES * 0x20)) & LOWS;
        let at_least_a = folded + ONES * (0x80 - u64::from(b'a'));
        let above_z = folded + ONES * (0x80 - u64::from(b'z') - 1);
        let letters = at_least_a & !above_z & !x & !LOWS;
        let others = !letters & !LOWS;
        if others != 0 {
            return len + others.trailing_zeros() as usize / 8;
        }
        len += 8;
    }
    len + run_of(words.remainder(), Class::Letter)
}

/// Length and cost in tenths of the whitespace run `bytes` starts with.
fn whitespace(bytes: &[u8]) -> (usize, usize) {
    let mut len: usize = 0;
    let mut newline = false;
    // Spaces and tabs at the end of the run so far.
    let mut indent = 0;
    for &b in bytes {
        match class_of(b) {
            Class::Blank => indent += 1,
            Class::Newline => {
                newline = true;
                indent = 0;
            }
            Class::OtherSpace => indent = 0,
            _ => break,
        }
        len += 1;
    }
    let cost = if newline {
        // A line break usually merges with the punctuation before it; the
        // indentation after it is a token of its own.
        5 + if indent > 1 { 10 } else { 0 }
    } else if len == 1 && len < bytes.len() {
        // A single space is glued to the token after it.
        0
    } else {
        10 * len.div_ceil(4)
    };
    (len, cost)
}

/// Tokens of an ASCII word of `len` letters: common words are one token,
/// longer ones split into pieces of about six letters.
fn word_tokens(len: usize) -> usize {
    if len <= 9 {
        1
    } else {
        1 + (len - 9).div_ceil(6)
    }
}

/// Estimated prompt tokens of a whole request: system, messages, tools.
pub fn estimate_request(req: &ChatRequest) -> u32 {
    let mut total: u32 = REPLY_PRIMING;
    for block in &req.system {
        total = total.saturating_add(PER_MESSAGE + count_text(&block.text));
    }
    for msg in &req.messages {
        total = total.saturating_add(PER_MESSAGE);
        if let Some(name) = &msg.name {
            total = total.saturating_add(count_text(name));
        }
        for part in &msg.content {
            total = total.saturating_add(count_part(part));
        }
    }
    for tool in &req.tools {
        let schema = tool.input_schema.to_string();
        total = total
            .saturating_add(PER_MESSAGE)
            .saturating_add(count_text(&tool.name))
            .saturating_add(tool.description.as_deref().map_or(0, count_text))
            .saturating_add(count_text(&schema));
    }
    if is_claude(&req.model) {
        scale(total, CLAUDE_CORRECTION)
    } else {
        total
    }
}

/// Estimated completion tokens of generated text; `claude`: the model is of
/// the Claude family ([`is_claude`]), whose counts are scaled as the
/// prompt's are in [`estimate_request`].
pub fn estimate_output(claude: bool, text: &str) -> u32 {
    let n = count_text(text);
    if claude {
        scale(n, CLAUDE_CORRECTION)
    } else {
        n
    }
}

fn count_part(part: &ContentPart) -> u32 {
    match part {
        ContentPart::Text { text, .. } => count_text(text),
        ContentPart::Image(_) => IMAGE_TOKENS,
        ContentPart::ToolUse {
            id,
            name,
            arguments,
        } => count_text(id) + count_text(name) + count_text(arguments),
        ContentPart::ToolResult {
            tool_use_id,
            content,
            ..
        } => content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text(t) => count_text(t),
                ToolResultContent::Image(ImageSource::Base64 { .. } | ImageSource::Url(_)) => {
                    IMAGE_TOKENS
                }
                ToolResultContent::Json(v) => count_text(&v.to_string()),
            })
            .fold(count_text(tool_use_id), u32::saturating_add),
        ContentPart::Thinking { thinking, .. } => count_text(thinking),
        // Opaque encrypted reasoning: about four bytes per token of base64.
        ContentPart::RedactedThinking { data } => saturate(data.len() / 4),
    }
}

/// Whether `model` (optionally `vendor/`-prefixed) is of the Claude family.
pub fn is_claude(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    m.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("claude"))
}

fn scale(n: u32, factor: f64) -> u32 {
    let scaled = (f64::from(n) * factor).ceil();
    if scaled >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        scaled as u32
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
