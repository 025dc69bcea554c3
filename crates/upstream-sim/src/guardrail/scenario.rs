//! What the guardrail finds: the [`GuardrailScenario`] type and its text form,
//! the `sim: guardrail …` lines of the shared directive grammar
//! ([`crate::directive`]) read from the texts of an `ApplyGuardrail` call.
//!
//! # Grammar
//!
//! ```text
//! line := "sim:" WS "guardrail" [WS spec]
//! spec := [NAME | "scenario=" NAME] (WS KEY "=" VALUE)*
//! NAME := none | content | topic | word | pii | regex | status
//! ```
//!
//! The name may also follow keys (`sim: guardrail source=OUTPUT pii`). A
//! line without a name is `none`. Every `sim: guardrail` line of every
//! content block of a call is read; those that apply to the call (its
//! `source`, their `times`) combine: each adds its finding to the one
//! assessment, a block wins over masking, and the first `status` line
//! answers an error instead. An unknown name or key, a key of another name,
//! or a bad value is a 400 `ValidationException`.
//!
//! | name | keys (defaults after `=`) |
//! |---|---|
//! | `none` | the text passes: action `NONE` (also with no guardrail line at all) |
//! | `content` | `type`=`HATE` (or `INSULTS`, `SEXUAL`, `VIOLENCE`, `MISCONDUCT`, `PROMPT_ATTACK`), `confidence`=`HIGH` (or `NONE`, `LOW`, `MEDIUM`): blocked by a content filter |
//! | `topic` | `name`=`investment_advice`: blocked by a denied topic |
//! | `word` | `match` (required), `managed`=`false`: blocked by a custom word (a managed `PROFANITY` list's when `managed`) when a text holds `match` |
//! | `pii` | `type`=`EMAIL` (any `[A-Z_]+`), `match` (default: every e-mail address found), `action`=`ANONYMIZED` (or `BLOCKED`): each occurrence found is masked as `{TYPE}`, or blocks |
//! | `regex` | `name`=`regex`, `match` (required), `action`=`BLOCKED` (or `ANONYMIZED`, masked as `{name}`): a regex match, when a text holds `match` |
//! | `status` | `code`=`500`, `error_type` (default per code: 400 `ValidationException`, 403 `AccessDeniedException`, 404 `ResourceNotFoundException`, 429 `ThrottlingException`, 503 `ServiceUnavailableException`, other 5xx `InternalServerException`): an error instead of an assessment |
//!
//! Keys of every name:
//!
//! | key | meaning |
//! |---|---|
//! | `source` | `INPUT` or `OUTPUT`: the line applies to calls of that source only (default: both) |
//! | `header_delay` | wait before the status line (the longest of the lines that apply) |
//! | `delay` | wait before the body (headers already sent) |
//! | `times=N` | the line applies to the first N calls (of its source) with its key |
//! | `key=S` | the key `times` counts under (default: the line's canonical text) |
//!
//! (`interval` is read, as on every directive, and has no effect: the answer
//! is one JSON body.)

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::directive::{
    self, common_keys, err, Directive, FaultKeys, Key, Out, ScenarioParseError, Shaped,
};

/// The name `sim: guardrail` lines are addressed with.
pub const TARGET: &str = "guardrail";

/// Which side of a conversation a call checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The user's prompt, before the model.
    Input,
    /// The model's answer.
    Output,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Input => "INPUT",
            Source::Output => "OUTPUT",
        }
    }
}

impl FromStr for Source {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "INPUT" => Ok(Source::Input),
            "OUTPUT" => Ok(Source::Output),
            _ => Err(()),
        }
    }
}

/// What one line finds. Words left `None` take the defaults of the module
/// docs (the `DEFAULT_*` constants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardrailKind {
    /// Nothing: the text passes.
    None,
    /// A content filter of `filter` type at `confidence`.
    Content {
        filter: Option<String>,
        confidence: Option<String>,
    },
    /// A denied topic.
    Topic { name: Option<String> },
    /// A custom word, or a managed word list's when `managed`.
    Word {
        matched: Option<String>,
        managed: bool,
    },
    /// Sensitive information of `entity` type: `matched`, or every e-mail address.
    Pii {
        entity: Option<String>,
        matched: Option<String>,
        action: Option<String>,
    },
    /// A regex of the guardrail matched `matched`.
    Regex {
        name: Option<String>,
        matched: Option<String>,
        action: Option<String>,
    },
    /// An HTTP error instead of an assessment.
    Status {
        code: u16,
        error_type: Option<String>,
    },
}

/// One `sim: guardrail` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardrailScenario {
    pub kind: GuardrailKind,
    /// The calls it applies to; `None`: both sources.
    pub source: Option<Source>,
    pub header_delay: Duration,
    pub first_delay: Duration,
    pub interval: Duration,
    /// Applies to the first `times` calls with its key.
    pub times: Option<u32>,
    /// The key `times` counts under; default: the canonical text.
    pub key: Option<String>,
}

/// `content` `type`.
pub const DEFAULT_FILTER: &str = "HATE";
/// `content` `confidence`.
pub const DEFAULT_CONFIDENCE: &str = "HIGH";
/// `topic` `name`.
pub const DEFAULT_TOPIC: &str = "investment_advice";
/// `pii` `type`.
pub const DEFAULT_PII_TYPE: &str = "EMAIL";
/// `pii` `action`.
pub const DEFAULT_PII_ACTION: &str = "ANONYMIZED";
/// `regex` `name`.
pub const DEFAULT_REGEX_NAME: &str = "regex";
/// `regex` `action`.
pub const DEFAULT_REGEX_ACTION: &str = "BLOCKED";

/// Content filter types.
pub const FILTER_TYPES: &[&str] = &[
    "HATE",
    "INSULTS",
    "SEXUAL",
    "VIOLENCE",
    "MISCONDUCT",
    "PROMPT_ATTACK",
];
/// Filter confidences.
pub const CONFIDENCES: &[&str] = &["NONE", "LOW", "MEDIUM", "HIGH"];
/// What a sensitive-information finding does.
pub const ACTIONS: &[&str] = &["ANONYMIZED", "BLOCKED"];

impl GuardrailScenario {
    pub fn new(kind: GuardrailKind) -> Self {
        GuardrailScenario {
            kind,
            source: None,
            header_delay: Duration::ZERO,
            first_delay: Duration::ZERO,
            interval: Duration::ZERO,
            times: None,
            key: None,
        }
    }

    /// Whether the line applies to a call of `source`.
    pub fn applies_to(&self, source: Source) -> bool {
        self.source.is_none_or(|s| s == source)
    }

    /// The values a parsed line must have beyond what the keys check.
    fn check(&self) -> Result<(), ScenarioParseError> {
        let one_of = |key: &str, v: &Option<String>, allowed: &[&str]| match v {
            Some(v) if !allowed.contains(&v.as_str()) => {
                err(format!("{key}={v}: one of {}", allowed.join(", ")))
            }
            _ => Ok(()),
        };
        let required = |name: &str, v: &Option<String>| match v {
            None => err(format!("{name} needs match=")),
            Some(_) => Ok(()),
        };
        match &self.kind {
            GuardrailKind::Content { filter, confidence } => {
                one_of("type", filter, FILTER_TYPES)?;
                one_of("confidence", confidence, CONFIDENCES)
            }
            GuardrailKind::Word { matched, .. } => required("word", matched),
            GuardrailKind::Pii { entity, action, .. } => {
                let bad = entity.as_deref().is_some_and(|e| {
                    e.is_empty() || !e.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                });
                if bad {
                    return err(format!("type={}: [A-Z_]+", entity.as_deref().unwrap_or("")));
                }
                one_of("action", action, ACTIONS)
            }
            GuardrailKind::Regex {
                matched, action, ..
            } => {
                required("regex", matched)?;
                one_of("action", action, ACTIONS)
            }
            GuardrailKind::None | GuardrailKind::Topic { .. } | GuardrailKind::Status { .. } => {
                Ok(())
            }
        }
    }
}

/// The keys of a sensitive-information finding: its label (`type` of `pii`,
/// `name` of `regex`), `match`, `action`.
fn sensitive<'a>(
    label: Key<'a>,
    matched: &'a mut Option<String>,
    action: &'a mut Option<String>,
) -> Vec<Key<'a>> {
    vec![
        label,
        Key::word("match", matched),
        Key::word("action", action),
    ]
}

impl Shaped for GuardrailScenario {
    fn named(name: &str) -> Result<Self, ScenarioParseError> {
        use GuardrailKind as K;
        let kind = match name {
            "none" => K::None,
            "content" => K::Content {
                filter: None,
                confidence: None,
            },
            "topic" => K::Topic { name: None },
            "word" => K::Word {
                matched: None,
                managed: false,
            },
            "pii" => K::Pii {
                entity: None,
                matched: None,
                action: None,
            },
            "regex" => K::Regex {
                name: None,
                matched: None,
                action: None,
            },
            "status" => K::Status {
                code: directive::defaults::STATUS_CODE,
                error_type: None,
            },
            other => return err(format!("unknown guardrail scenario '{other}'")),
        };
        Ok(GuardrailScenario::new(kind))
    }

    fn kind_keys(&mut self) -> (&'static str, Vec<Key<'_>>) {
        use GuardrailKind as K;
        match &mut self.kind {
            K::None => ("none", vec![]),
            K::Content { filter, confidence } => (
                "content",
                vec![
                    Key::word("type", filter),
                    Key::word("confidence", confidence),
                ],
            ),
            K::Topic { name } => ("topic", vec![Key::word("name", name)]),
            K::Word { matched, managed } => (
                "word",
                vec![Key::word("match", matched), Key::off("managed", managed)],
            ),
            K::Pii {
                entity,
                matched,
                action,
            } => ("pii", sensitive(Key::word("type", entity), matched, action)),
            K::Regex {
                name,
                matched,
                action,
            } => ("regex", sensitive(Key::word("name", name), matched, action)),
            K::Status { code, error_type } => (
                "status",
                vec![Key::status_code(code), Key::word("error_type", error_type)],
            ),
        }
    }
}

common_keys!(GuardrailScenario);

impl Directive for GuardrailScenario {
    const DEFAULT_NAME: &'static str = "none";
    const FAULT_KEYS: &'static [&'static str] = &[];

    fn own_keys(&mut self) -> Vec<Key<'_>> {
        Vec::new()
    }

    /// `source=INPUT|OUTPUT`.
    fn set_other(&mut self, key: &str, v: &str) -> Result<bool, ScenarioParseError> {
        if key != "source" {
            return Ok(false);
        }
        match v.parse() {
            Ok(source) => self.source = Some(source),
            Err(()) => return err(format!("source={v}: INPUT or OUTPUT")),
        }
        Ok(true)
    }

    fn write_other(&self, o: &mut Out<'_, '_>) -> fmt::Result {
        o.some("source", self.source.map(Source::as_str))
    }

    fn set_fault(&mut self, _faults: &FaultKeys<'_>) -> Result<(), ScenarioParseError> {
        Ok(())
    }

    fn write_fault(&self, _o: &mut Out<'_, '_>) -> fmt::Result {
        Ok(())
    }
}

/// `spec` with its name first: a bare word after keys moves to the front.
fn name_first(spec: &str) -> Cow<'_, str> {
    let mut words: Vec<&str> = spec.split_ascii_whitespace().collect();
    match words.iter().position(|w| !w.contains('=')) {
        Some(i) if i > 0 => {
            let name = words.remove(i);
            words.insert(0, name);
            Cow::Owned(words.join(" "))
        }
        _ => Cow::Borrowed(spec),
    }
}

impl FromStr for GuardrailScenario {
    type Err = ScenarioParseError;

    /// Parse the text after `sim: guardrail` (see the module docs).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let s: GuardrailScenario = directive::parse(&name_first(spec))?;
        s.check()?;
        Ok(s)
    }
}

impl fmt::Display for GuardrailScenario {
    /// The canonical text (without `sim: guardrail`): only non-default values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        directive::write(self, f)
    }
}

/// Every guardrail line of `texts`, in order; the first bad one is an error.
pub fn parse_lines<'a>(
    texts: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<GuardrailScenario>, ScenarioParseError> {
    texts
        .into_iter()
        .flat_map(|text| directive::lines_for(text, TARGET))
        .map(str::parse)
        .collect()
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
