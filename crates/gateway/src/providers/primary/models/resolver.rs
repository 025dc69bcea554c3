//! Model-name resolution for the primary provider (spec 4.4 item 1, protocol
//! doc 1.11, fixing 10.1 item 12). Pure functions over the set of known ids.
//!
//! Order of the checks (all case-insensitive):
//! 1. the name is a known id as it is (`claude-sonnet-4.5`, `deepseek-3.2`, `auto`);
//! 2. the name, unwrapped from other vendors' spellings and normalized, is a
//!    known id: `claude-sonnet-4-5`, `claude-sonnet-4-5-20250929`,
//!    `claude-haiku-4-5-latest`, `claude-haiku-4.5-20251001`,
//!    `anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-sonnet-4-5@20250929`;
//! 3. the normalized name is a legacy model the upstream knows under an
//!    internal id (`claude-3-7-sonnet-20250219` -> `CLAUDE_3_7_SONNET_20250219_V1_0`);
//! 4. otherwise the name is refused (`invalid_model`), never silently `auto`.

/// Legacy models the upstream accepts under internal ids it does not list.
pub const HIDDEN_MODELS: [(&str, &str); 1] =
    [("claude-3.7-sonnet", "CLAUDE_3_7_SONNET_20250219_V1_0")];

const FAMILIES: [&str; 3] = ["haiku", "sonnet", "opus"];

/// What a name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A known id, spelled as the known set spells it.
    Known(String),
    /// A hidden legacy id.
    Hidden(&'static str),
}

/// Resolve `name` against `lookup` (which maps a lower-case id to the id as listed).
pub fn resolve<'a>(name: &str, lookup: impl Fn(&str) -> Option<&'a str>) -> Option<Resolution> {
    let lower = name.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return None;
    }
    if let Some(id) = lookup(&lower) {
        return Some(Resolution::Known(id.to_owned()));
    }
    let normalized = normalize(&lower);
    if let Some(id) = lookup(&normalized) {
        return Some(Resolution::Known(id.to_owned()));
    }
    HIDDEN_MODELS
        .iter()
        .find(|(alias, _)| *alias == normalized)
        .map(|(_, id)| Resolution::Hidden(id))
}

/// The canonical (upstream-style) spelling of a lower-case model name; names
/// that follow no known pattern come back unwrapped but otherwise unchanged.
pub fn normalize(lower: &str) -> String {
    let name = unwrap_vendor(lower);
    normalize_claude(name).unwrap_or_else(|| name.to_owned())
}

/// Strip other vendors' wrappers: Bedrock (`us.anthropic.…-v1:0`) and Vertex (`…@20250929`).
fn unwrap_vendor(lower: &str) -> &str {
    let mut name = lower;
    for region in ["us.", "eu.", "apac.", "global.", "jp.", "au."] {
        if let Some(rest) = name.strip_prefix(region) {
            if rest.starts_with("anthropic.") {
                name = rest;
            }
        }
    }
    name = name.strip_prefix("anthropic.").unwrap_or(name);
    // Bedrock version suffix: -v1:0, -v2, ... (only on Claude names, so that a
    // model such as `deepseek-v3` keeps its name).
    if let Some(pos) = name.rfind("-v").filter(|_| name.starts_with("claude-")) {
        let tail = &name[pos + 2..];
        let (ver, rev) = tail.split_once(':').unwrap_or((tail, "0"));
        if is_digits(ver) && is_digits(rev) {
            name = &name[..pos];
        }
    }
    // Vertex date suffix: @20250929
    if let Some((base, date)) = name.split_once('@') {
        if is_date(date) {
            name = base;
        }
    }
    name
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_date(s: &str) -> bool {
    s.len() == 8 && is_digits(s)
}

/// `4`, `5` or `4.5` (digits, at most one dot).
fn is_version_part(s: &str) -> bool {
    match s.split_once('.') {
        Some((a, b)) => is_digits(a) && is_digits(b),
        None => is_digits(s) && s.len() <= 2,
    }
}

/// Claude names in any of the known orders, with an optional date or `latest` suffix:
/// `claude-{family}-{major}[-{minor}]` or `claude-{major}[-{minor}]-{family}`,
/// where a version may also be written dotted (`4.5`).
fn normalize_claude(name: &str) -> Option<String> {
    let mut parts: Vec<&str> = name.split('-').collect();
    if parts.first() != Some(&"claude") || parts.len() < 3 {
        return None;
    }
    if parts.last().is_some_and(|p| is_date(p) || *p == "latest") {
        parts.pop();
    }
    let body = &parts[1..];
    if let Some((family, version)) = body.split_first().filter(|(f, _)| FAMILIES.contains(f)) {
        // claude-sonnet-4-5, claude-sonnet-4, claude-sonnet-4.5
        let v = join_version(version)?;
        return Some(format!("claude-{family}-{v}"));
    }
    if let Some((family, version)) = body.split_last().filter(|(f, _)| FAMILIES.contains(f)) {
        // claude-3-7-sonnet, claude-3-opus, claude-3.5-sonnet
        let v = join_version(version)?;
        return Some(format!("claude-{v}-{family}"));
    }
    None
}

/// `["4","5"]` -> `4.5`, `["4"]` -> `4`, `["4.5"]` -> `4.5`.
fn join_version(parts: &[&str]) -> Option<String> {
    match parts {
        [major] if is_version_part(major) => Some((*major).to_owned()),
        [major, minor] if is_digits(major) && is_digits(minor) && minor.len() <= 2 => {
            Some(format!("{major}.{minor}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: [&str; 10] = [
        "auto",
        "claude-sonnet-4",
        "claude-sonnet-4.5",
        "claude-haiku-4.5",
        "claude-opus-4.5",
        "claude-opus-4.1",
        "deepseek-3.2",
        "glm-5",
        "minimax-m2.1",
        "qwen3-coder-next",
    ];

    fn lookup(lower: &str) -> Option<&'static str> {
        LISTED
            .iter()
            .copied()
            .find(|id| id.eq_ignore_ascii_case(lower))
    }

    fn known(id: &str) -> Option<Resolution> {
        Some(Resolution::Known(id.to_owned()))
    }

    #[test]
    fn the_resolution_table() {
        let table: &[(&str, Option<Resolution>)] = &[
            // Listed ids as they are, in any case.
            ("claude-sonnet-4.5", known("claude-sonnet-4.5")),
            ("Claude-Sonnet-4.5", known("claude-sonnet-4.5")),
            ("auto", known("auto")),
            ("deepseek-3.2", known("deepseek-3.2")),
            ("GLM-5", known("glm-5")),
            ("minimax-m2.1", known("minimax-m2.1")),
            ("qwen3-coder-next", known("qwen3-coder-next")),
            // Short aliases and dated names.
            ("claude-sonnet-4-5", known("claude-sonnet-4.5")),
            ("claude-sonnet-4-5-20250929", known("claude-sonnet-4.5")),
            ("claude-haiku-4-5-latest", known("claude-haiku-4.5")),
            ("claude-haiku-4.5-20251001", known("claude-haiku-4.5")),
            ("claude-opus-4-1-20250805", known("claude-opus-4.1")),
            ("claude-sonnet-4-20250514", known("claude-sonnet-4")),
            ("claude-sonnet-4-latest", known("claude-sonnet-4")),
            // Other vendors' spellings.
            (
                "anthropic.claude-sonnet-4-5-20250929-v1:0",
                known("claude-sonnet-4.5"),
            ),
            (
                "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                known("claude-haiku-4.5"),
            ),
            ("claude-sonnet-4-5@20250929", known("claude-sonnet-4.5")),
            // Legacy names.
            (
                "claude-3-7-sonnet-20250219",
                Some(Resolution::Hidden("CLAUDE_3_7_SONNET_20250219_V1_0")),
            ),
            (
                "claude-3-7-sonnet-latest",
                Some(Resolution::Hidden("CLAUDE_3_7_SONNET_20250219_V1_0")),
            ),
            // Refused: never a silent `auto`.
            ("claude-3-5-sonnet-20241022", None),
            ("claude-sonnet-9-9", None),
            ("gpt-4o", None),
            ("gpt-4", None),
            ("", None),
            ("   ", None),
            ("claude", None),
            ("sonnet", None),
        ];
        for (name, expected) in table {
            assert_eq!(&resolve(name, lookup), expected, "name {name:?}");
        }
    }

    #[test]
    fn normalization_patterns() {
        let cases = [
            ("claude-sonnet-4-5", "claude-sonnet-4.5"),
            ("claude-sonnet-4.5", "claude-sonnet-4.5"),
            ("claude-3-7-sonnet", "claude-3.7-sonnet"),
            ("claude-3-opus-20240229", "claude-3-opus"),
            ("claude-3.5-sonnet-20241022", "claude-3.5-sonnet"),
            ("claude-haiku-4-5-20251001", "claude-haiku-4.5"),
            ("claude-sonnet-4-5-thinking", "claude-sonnet-4-5-thinking"),
            ("deepseek-3.2", "deepseek-3.2"),
            ("deepseek-v3", "deepseek-v3"),
            ("claude-sonnet-20250929", "claude-sonnet-20250929"),
        ];
        for (input, out) in cases {
            assert_eq!(normalize(input), out, "input {input:?}");
        }
    }
}
