//! The answer of an `ApplyGuardrail` call from the lines that apply to it:
//! each line's finding goes into one assessment (only the policies that found
//! something appear), a block answers the guardrail's blocked message, masks
//! alone answer every block's text with each match replaced by `{TYPE}`, and
//! no finding is action `NONE` with no outputs. Usage and coverage count the
//! characters of the texts.

use serde_json::{json, Map, Value};

use super::scenario::{
    GuardrailKind, GuardrailScenario, DEFAULT_CONFIDENCE, DEFAULT_FILTER, DEFAULT_PII_ACTION,
    DEFAULT_PII_TYPE, DEFAULT_REGEX_ACTION, DEFAULT_REGEX_NAME, DEFAULT_TOPIC,
};

/// Characters per policy unit.
const CHARS_PER_UNIT: usize = 1000;

/// What the lines found, by policy.
#[derive(Debug, Default)]
struct Findings {
    filters: Vec<Value>,
    topics: Vec<Value>,
    custom_words: Vec<Value>,
    managed_words: Vec<Value>,
    pii: Vec<Value>,
    regexes: Vec<Value>,
    blocked: bool,
    /// Each match to mask and its placeholder, in the order found.
    masks: Vec<(String, String)>,
}

impl Findings {
    /// Record a sensitive-information finding: it blocks, or masks `found`.
    fn act(&mut self, action: &str, found: &str, placeholder: String) {
        if action == "BLOCKED" {
            self.blocked = true;
        } else {
            self.masks.push((found.to_owned(), placeholder));
        }
    }

    fn add(&mut self, line: &GuardrailScenario, texts: &[String]) {
        let holds = |m: &str| texts.iter().any(|t| t.contains(m));
        match &line.kind {
            GuardrailKind::None | GuardrailKind::Status { .. } => {}
            GuardrailKind::Content { filter, confidence } => {
                self.filters.push(json!({
                    "type": filter.as_deref().unwrap_or(DEFAULT_FILTER),
                    "confidence": confidence.as_deref().unwrap_or(DEFAULT_CONFIDENCE),
                    "filterStrength": "HIGH",
                    "action": "BLOCKED",
                    "detected": true,
                }));
                self.blocked = true;
            }
            GuardrailKind::Topic { name } => {
                self.topics.push(json!({
                    "name": name.as_deref().unwrap_or(DEFAULT_TOPIC),
                    "type": "DENY",
                    "action": "BLOCKED",
                    "detected": true,
                }));
                self.blocked = true;
            }
            GuardrailKind::Word { matched, managed } => {
                let Some(word) = matched.as_deref().filter(|w| holds(w)) else {
                    return;
                };
                let mut found = json!({"match": word, "action": "BLOCKED", "detected": true});
                if *managed {
                    found["type"] = json!("PROFANITY");
                    self.managed_words.push(found);
                } else {
                    self.custom_words.push(found);
                }
                self.blocked = true;
            }
            GuardrailKind::Pii {
                entity,
                matched,
                action,
            } => {
                let entity = entity.as_deref().unwrap_or(DEFAULT_PII_TYPE);
                let action = action.as_deref().unwrap_or(DEFAULT_PII_ACTION);
                let found = match matched {
                    Some(m) if holds(m) => vec![m.clone()],
                    Some(_) => Vec::new(),
                    None => emails(texts),
                };
                for m in found {
                    self.pii.push(json!({
                        "match": m, "type": entity, "action": action, "detected": true,
                    }));
                    self.act(action, &m, format!("{{{entity}}}"));
                }
            }
            GuardrailKind::Regex {
                name,
                matched,
                action,
            } => {
                let Some(m) = matched.as_deref().filter(|m| holds(m)) else {
                    return;
                };
                let name = name.as_deref().unwrap_or(DEFAULT_REGEX_NAME);
                let action = action.as_deref().unwrap_or(DEFAULT_REGEX_ACTION);
                self.regexes.push(json!({
                    "name": name, "match": m, "regex": m, "action": action, "detected": true,
                }));
                self.act(action, m, format!("{{{name}}}"));
            }
        }
    }

    fn intervened(&self) -> bool {
        self.blocked || !self.masks.is_empty()
    }

    /// The policies that found something, as an assessment's fields.
    fn policies(self) -> Map<String, Value> {
        let mut out = Map::new();
        let mut put = |policy: &str, parts: Vec<(&str, Vec<Value>)>| {
            if parts.iter().any(|(_, found)| !found.is_empty()) {
                let parts: Map<String, Value> = parts
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), Value::Array(v)))
                    .collect();
                out.insert(policy.to_owned(), Value::Object(parts));
            }
        };
        put("topicPolicy", vec![("topics", self.topics)]);
        put("contentPolicy", vec![("filters", self.filters)]);
        put(
            "wordPolicy",
            vec![
                ("customWords", self.custom_words),
                ("managedWordLists", self.managed_words),
            ],
        );
        put(
            "sensitiveInformationPolicy",
            vec![("piiEntities", self.pii), ("regexes", self.regexes)],
        );
        out
    }
}

/// Every distinct e-mail address of `texts` (a word with `@` and a dot
/// after it), in order.
pub fn emails(texts: &[String]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let separator = |c: char| c.is_whitespace() || "<>()[]{},;:\"'=".contains(c);
    for word in texts.iter().flat_map(|t| t.split(separator)) {
        let word = word.trim_end_matches(['.', '!', '?']);
        let Some((local, domain)) = word.split_once('@') else {
            continue;
        };
        let host_ok = domain
            .split_once('.')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty());
        if !local.is_empty() && host_ok && !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// `usage`: one unit per started 1000 characters for each text policy.
fn usage(chars: usize) -> Value {
    let units = chars.div_ceil(CHARS_PER_UNIT).max(1);
    json!({
        "topicPolicyUnits": units,
        "contentPolicyUnits": units,
        "wordPolicyUnits": units,
        "sensitiveInformationPolicyUnits": units,
        "sensitiveInformationPolicyFreeUnits": 0,
        "contextualGroundingPolicyUnits": 0,
    })
}

/// The 200 body for `texts` (the call's content blocks) given the lines
/// that apply; `blocked_message` is the guardrail's message for this source.
pub fn answer(
    texts: &[String],
    lines: &[GuardrailScenario],
    blocked_message: &str,
    latency_ms: u64,
) -> Value {
    let mut findings = Findings::default();
    for line in lines {
        findings.add(line, texts);
    }
    let (action, reason, outputs) = if findings.blocked {
        let outputs = vec![json!({"text": blocked_message})];
        ("GUARDRAIL_INTERVENED", "Guardrail blocked.", outputs)
    } else if findings.intervened() {
        let outputs = texts
            .iter()
            .map(|t| {
                let masked = findings
                    .masks
                    .iter()
                    .fold(t.clone(), |t, (m, placeholder)| t.replace(m, placeholder));
                json!({ "text": masked })
            })
            .collect();
        ("GUARDRAIL_INTERVENED", "Guardrail masked.", outputs)
    } else {
        ("NONE", "No action.", Vec::new())
    };
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    let usage = usage(chars);
    let coverage = json!({"textCharacters": {"guarded": chars, "total": chars}});
    let mut assessment = findings.policies();
    assessment.insert(
        "invocationMetrics".to_owned(),
        json!({
            "guardrailProcessingLatency": latency_ms,
            "usage": usage,
            "guardrailCoverage": coverage,
        }),
    );
    json!({
        "action": action,
        "actionReason": reason,
        "outputs": outputs,
        "assessments": [assessment],
        "usage": usage,
        "guardrailCoverage": coverage,
    })
}

#[cfg(test)]
#[path = "assess_tests.rs"]
mod tests;
