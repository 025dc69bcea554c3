//! The `ApplyGuardrail` request as the service validates it: the path's
//! guardrail identifier (an id or a full ARN) and version (`DRAFT` or
//! 1-99999999), and the body (`source`, `content` text blocks with optional
//! `qualifiers`, optional `outputScope`). Every refusal is a 400
//! `ValidationException` in the service's wording.

use serde_json::Value;

use super::error::GuardrailError;
use super::scenario::Source;

/// The pattern of `guardrailIdentifier`, as the service prints it.
const ID_PATTERN: &str =
    "(([a-z0-9]+)|(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:guardrail/[a-z0-9]+))";
/// The pattern of `guardrailVersion`.
const VERSION_PATTERN: &str = "(([1-9][0-9]{0,7})|(DRAFT))";
/// The qualifiers a text block may carry.
pub const QUALIFIERS: &[&str] = &["grounding_source", "query", "guard_content"];
/// The values of `outputScope`.
pub const OUTPUT_SCOPES: &[&str] = &["INTERVENTIONS", "FULL"];

/// A valid call: its source and the text of each content block, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyRequest {
    pub source: Source,
    pub texts: Vec<String>,
}

fn refuse<T>(constraint: String) -> Result<T, GuardrailError> {
    Err(GuardrailError::validation(format!(
        "1 validation error detected: {constraint}"
    )))
}

fn pattern<T>(value: &str, at: &str, pattern: &str) -> Result<T, GuardrailError> {
    refuse(format!(
        "Value '{value}' at '{at}' failed to satisfy constraint: Member must satisfy regular \
         expression pattern: {pattern}"
    ))
}

fn not_null<T>(at: &str) -> Result<T, GuardrailError> {
    refuse(format!(
        "Value null at '{at}' failed to satisfy constraint: Member must not be null"
    ))
}

fn enum_value<T>(value: &Value, at: &str, allowed: &[&str]) -> Result<T, GuardrailError> {
    let shown = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    refuse(format!(
        "Value '{shown}' at '{at}' failed to satisfy constraint: Member must satisfy enum value \
         set: [{}]",
        allowed.join(", ")
    ))
}

fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `[a-z0-9]+`, or `arn:aws[-partition]:bedrock:<region>:<12 digits>:guardrail/<id>`.
fn valid_identifier(id: &str) -> bool {
    if is_word(id) {
        return true;
    }
    let parts: Vec<&str> = id.splitn(6, ':').collect();
    let [arn, partition, service, region, account, resource] = parts[..] else {
        return false;
    };
    let partition_ok = partition
        .strip_prefix("aws")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('-') && rest.len() > 1);
    let region_ok = (1..=20).contains(&region.len())
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let account_ok = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
    arn == "arn"
        && partition_ok
        && service == "bedrock"
        && region_ok
        && account_ok
        && resource.strip_prefix("guardrail/").is_some_and(is_word)
}

/// `DRAFT`, or 1 to 99999999 without leading zeros.
fn valid_version(version: &str) -> bool {
    version == "DRAFT"
        || (1..=8).contains(&version.len())
            && !version.starts_with('0')
            && version.bytes().all(|b| b.is_ascii_digit())
}

/// Check the path's identifier (decoded) and version.
pub fn check_path(identifier: &str, version: &str) -> Result<(), GuardrailError> {
    if !valid_identifier(identifier) {
        return pattern(identifier, "guardrailIdentifier", ID_PATTERN);
    }
    if !valid_version(version) {
        return pattern(version, "guardrailVersion", VERSION_PATTERN);
    }
    Ok(())
}

/// The source a body names, if any (calls are counted by it before anything
/// else is checked).
pub fn source_of(body: Option<&Value>) -> Option<Source> {
    body?.get("source")?.as_str()?.parse().ok()
}

/// The text of content block `n` (1-based, as the service counts).
fn block_text(block: &Value, n: usize) -> Result<String, GuardrailError> {
    let at = format!("content.{n}.member.text");
    let Some(text) = block.get("text").filter(|t| !t.is_null()) else {
        return not_null(&at);
    };
    if let Some(qualifiers) = text.get("qualifiers").filter(|q| !q.is_null()) {
        let Some(list) = qualifiers.as_array() else {
            return refuse(format!("Value at '{at}.qualifiers' must be a list"));
        };
        if let Some(bad) = list
            .iter()
            .find(|q| q.as_str().is_none_or(|q| !QUALIFIERS.contains(&q)))
        {
            return enum_value(bad, &format!("{at}.qualifiers"), QUALIFIERS);
        }
    }
    match text.get("text").and_then(Value::as_str) {
        Some(t) => Ok(t.to_owned()),
        None => not_null(&format!("{at}.text")),
    }
}

/// Validate a body (`None` when it was not JSON).
pub fn parse_body(body: Option<&Value>) -> Result<ApplyRequest, GuardrailError> {
    let Some(body) = body.filter(|b| b.is_object()) else {
        return Err(GuardrailError::serialization());
    };
    let source = match body.get("source") {
        None | Some(Value::Null) => return not_null("source"),
        Some(v) => match v.as_str().and_then(|s| s.parse().ok()) {
            Some(source) => source,
            None => return enum_value(v, "source", &["INPUT", "OUTPUT"]),
        },
    };
    if let Some(scope) = body.get("outputScope").filter(|s| !s.is_null()) {
        if scope.as_str().is_none_or(|s| !OUTPUT_SCOPES.contains(&s)) {
            return enum_value(scope, "outputScope", OUTPUT_SCOPES);
        }
    }
    let Some(content) = body.get("content").filter(|c| !c.is_null()) else {
        return not_null("content");
    };
    let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
    if blocks.is_empty() {
        return refuse(
            "Value '[]' at 'content' failed to satisfy constraint: Member must have length \
             greater than or equal to 1"
                .to_owned(),
        );
    }
    let texts = blocks
        .iter()
        .enumerate()
        .map(|(i, block)| block_text(block, i + 1))
        .collect::<Result<_, _>>()?;
    Ok(ApplyRequest { source, texts })
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
