//! What the guardrail service answered, read into a [`Verdict`]: the
//! action the gateway takes (none, block, redact), the violations found,
//! and the service's output texts (the masked text of a redaction).
//!
//! The service says `GUARDRAIL_INTERVENED` both when it blocks and when it
//! only masks (PII `ANONYMIZED`); the difference is in the assessments: an
//! intervention with any `BLOCKED` finding blocks, one whose findings are
//! all `ANONYMIZED` redacts (upstream-protocols.md 8.3; the reference
//! blocked on both, 10.6).

use serde::{Deserialize, Serialize};

/// The gateway's reading of one check (spec 2.8 `GuardrailAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailAction"))]
pub enum Action {
    /// Nothing found; the text goes on unchanged.
    None,
    /// Blocked.
    Intervened,
    /// Masked: the text goes on as the service rewrote it.
    Redacted,
}

/// Kinds of finding (interfaces-full.md section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ViolationKind"))]
pub enum ViolationKind {
    ContentPolicy,
    TopicPolicy,
    WordPolicy,
    Pii,
}

/// One finding: `name` is the filter, topic, word or PII type; `action`
/// the service's (`BLOCKED`, `ANONYMIZED`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Violation {
    pub kind: ViolationKind,
    pub name: String,
    pub action: String,
    pub detail: String,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub action: Action,
    pub violations: Vec<Violation>,
    /// The service's output texts (for a redaction, the masked texts in
    /// the order of the content blocks sent).
    pub outputs: Vec<String>,
}

/// The answer's JSON, as far as the gateway reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ApplyAnswer {
    action: String,
    #[serde(default)]
    outputs: Vec<OutputText>,
    #[serde(default)]
    assessments: Vec<Assessment>,
}

#[derive(Debug, Deserialize)]
struct OutputText {
    #[serde(default)]
    text: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Assessment {
    content_policy: Option<ContentPolicy>,
    topic_policy: Option<TopicPolicy>,
    word_policy: Option<WordPolicy>,
    sensitive_information_policy: Option<SensitivePolicy>,
    contextual_grounding_policy: Option<GroundingPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ContentPolicy {
    filters: Vec<Finding>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TopicPolicy {
    topics: Vec<Finding>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WordPolicy {
    custom_words: Vec<Finding>,
    managed_word_lists: Vec<Finding>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SensitivePolicy {
    pii_entities: Vec<Finding>,
    regexes: Vec<Finding>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct GroundingPolicy {
    filters: Vec<Finding>,
}

/// Every finding shape in one: each policy fills the fields it has.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Finding {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
    #[serde(rename = "match")]
    matched: Option<String>,
    confidence: Option<String>,
    filter_strength: Option<String>,
    action: Option<String>,
    detected: Option<bool>,
    threshold: Option<f64>,
    score: Option<f64>,
}

impl Finding {
    /// Whether the service acted on it (`NONE` findings appear with
    /// `outputScope: FULL`).
    fn acted(&self) -> bool {
        self.detected != Some(false) && self.action.as_deref().is_some_and(|a| a != "NONE")
    }

    fn action(&self) -> String {
        self.action.clone().unwrap_or_default()
    }
}

impl ApplyAnswer {
    /// The verdict this answer means.
    pub(super) fn verdict(self) -> Verdict {
        let mut violations = Vec::new();
        for a in self.assessments {
            a.findings(&mut violations);
        }
        let action = if self.action != "GUARDRAIL_INTERVENED" {
            Action::None
        } else if !violations.is_empty() && violations.iter().all(|v| v.action == "ANONYMIZED") {
            Action::Redacted
        } else {
            Action::Intervened
        };
        Verdict {
            action,
            violations,
            outputs: self.outputs.into_iter().map(|o| o.text).collect(),
        }
    }
}

impl Assessment {
    fn findings(self, out: &mut Vec<Violation>) {
        let mut push = |kind, name: String, f: &Finding, detail: String| {
            out.push(Violation {
                kind,
                name,
                action: f.action(),
                detail,
            });
        };
        let or =
            |v: &Option<String>, fallback: &str| v.clone().unwrap_or_else(|| fallback.to_owned());
        for f in self.content_policy.into_iter().flat_map(|p| p.filters) {
            if f.acted() {
                let detail = format!(
                    "confidence {}, filter strength {}",
                    or(&f.confidence, "unknown"),
                    or(&f.filter_strength, "unknown")
                );
                push(
                    ViolationKind::ContentPolicy,
                    or(&f.kind, "content"),
                    &f,
                    detail,
                );
            }
        }
        for f in self.topic_policy.into_iter().flat_map(|p| p.topics) {
            if f.acted() {
                let detail = format!("denied topic ({})", or(&f.kind, "DENY"));
                push(ViolationKind::TopicPolicy, or(&f.name, "topic"), &f, detail);
            }
        }
        if let Some(words) = self.word_policy {
            for f in words.custom_words {
                if f.acted() {
                    push(
                        ViolationKind::WordPolicy,
                        or(&f.matched, "word"),
                        &f,
                        "custom word".to_owned(),
                    );
                }
            }
            for f in words.managed_word_lists {
                if f.acted() {
                    let detail = format!("managed word list {}", or(&f.kind, ""));
                    push(
                        ViolationKind::WordPolicy,
                        or(&f.matched, "word"),
                        &f,
                        detail,
                    );
                }
            }
        }
        // PII: the matched text itself is the sensitive part; it is not
        // repeated in the violation (which reaches logs and clients).
        if let Some(pii) = self.sensitive_information_policy {
            for f in pii.pii_entities {
                if f.acted() {
                    push(
                        ViolationKind::Pii,
                        or(&f.kind, "PII"),
                        &f,
                        "sensitive information".to_owned(),
                    );
                }
            }
            for f in pii.regexes {
                if f.acted() {
                    push(
                        ViolationKind::Pii,
                        or(&f.name, "regex"),
                        &f,
                        "matched a sensitive-information pattern".to_owned(),
                    );
                }
            }
        }
        // Grounding has no kind of its own in the spec; its blocks are
        // reported as content policy, with the score that failed.
        for f in self
            .contextual_grounding_policy
            .into_iter()
            .flat_map(|p| p.filters)
        {
            if f.acted() {
                let detail = format!(
                    "grounding score {} below threshold {}",
                    f.score.unwrap_or_default(),
                    f.threshold.unwrap_or_default()
                );
                push(
                    ViolationKind::ContentPolicy,
                    or(&f.kind, "GROUNDING"),
                    &f,
                    detail,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(json: &str) -> Verdict {
        serde_json::from_str::<ApplyAnswer>(json).unwrap().verdict()
    }

    #[test]
    fn none_is_none() {
        let v = verdict(
            r#"{"action":"NONE","outputs":[],"assessments":[{"invocationMetrics":{"guardrailProcessingLatency":3}}]}"#,
        );
        assert_eq!(v.action, Action::None);
        assert!(v.violations.is_empty());
    }

    #[test]
    fn each_kind_of_block() {
        let v = verdict(
            r#"{"action":"GUARDRAIL_INTERVENED","actionReason":"x","outputs":[{"text":"Sorry."}],
            "assessments":[{
              "contentPolicy":{"filters":[{"type":"HATE","confidence":"HIGH","filterStrength":"HIGH","action":"BLOCKED","detected":true},
                                          {"type":"VIOLENCE","confidence":"NONE","filterStrength":"LOW","action":"NONE","detected":false}]},
              "topicPolicy":{"topics":[{"name":"investment_advice","type":"DENY","action":"BLOCKED","detected":true}]},
              "wordPolicy":{"customWords":[{"match":"badword","action":"BLOCKED","detected":true}],
                            "managedWordLists":[{"match":"darn","type":"PROFANITY","action":"BLOCKED"}]},
              "sensitiveInformationPolicy":{"piiEntities":[{"match":"jane@example.com","type":"EMAIL","action":"ANONYMIZED","detected":true}],
                                            "regexes":[{"name":"ssn","match":"123-45-6789","regex":"x","action":"BLOCKED","detected":true}]}}]}"#,
        );
        assert_eq!(v.action, Action::Intervened);
        let names: Vec<(ViolationKind, &str, &str)> = v
            .violations
            .iter()
            .map(|x| (x.kind, x.name.as_str(), x.action.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (ViolationKind::ContentPolicy, "HATE", "BLOCKED"),
                (ViolationKind::TopicPolicy, "investment_advice", "BLOCKED"),
                (ViolationKind::WordPolicy, "badword", "BLOCKED"),
                (ViolationKind::WordPolicy, "darn", "BLOCKED"),
                (ViolationKind::Pii, "EMAIL", "ANONYMIZED"),
                (ViolationKind::Pii, "ssn", "BLOCKED"),
            ]
        );
        assert!(v
            .violations
            .iter()
            .all(|x| !x.detail.contains("jane@") && !x.detail.contains("123-45")));
        assert_eq!(
            v.violations[0].detail,
            "confidence HIGH, filter strength HIGH"
        );
    }

    #[test]
    fn masking_only_is_a_redaction_with_the_outputs() {
        let v = verdict(
            r#"{"action":"GUARDRAIL_INTERVENED","outputs":[{"text":"mail {EMAIL}"},{"text":"ok"}],
            "assessments":[{"sensitiveInformationPolicy":{"piiEntities":[{"match":"a@b.c","type":"EMAIL","action":"ANONYMIZED","detected":true}]}}]}"#,
        );
        assert_eq!(v.action, Action::Redacted);
        assert_eq!(v.outputs, ["mail {EMAIL}", "ok"]);
    }

    #[test]
    fn an_intervention_without_findings_blocks() {
        let v = verdict(
            r#"{"action":"GUARDRAIL_INTERVENED","outputs":[{"text":"no"}],"assessments":[]}"#,
        );
        assert_eq!(v.action, Action::Intervened);
    }

    #[test]
    fn grounding_blocks_as_content_policy() {
        let v = verdict(
            r#"{"action":"GUARDRAIL_INTERVENED","assessments":[{"contextualGroundingPolicy":{"filters":[{"type":"GROUNDING","threshold":0.7,"score":0.2,"action":"BLOCKED"}]}}]}"#,
        );
        assert_eq!(v.action, Action::Intervened);
        assert_eq!(v.violations[0].kind, ViolationKind::ContentPolicy);
        assert!(v.violations[0].detail.contains("0.2"));
    }
}
