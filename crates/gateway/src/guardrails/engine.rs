//! The guardrails as requests see them: the enabled rules, compiled, each
//! with its enabled profiles and their keys decrypted, swapped whole when
//! an administrator changes one (here at once, on other replicas at the
//! `guardrails` announcement). With guardrails off, or no rule, a request
//! pays one atomic load.
//!
//! Per request, [`Guardrails::plan`] evaluates every rule once over the
//! request's facts and draws its sample, giving the profiles that check
//! the input and those that check the output. [`Guardrails::check`] runs
//! one stage's profiles concurrently and reads their verdicts together:
//! any block blocks; otherwise a redaction rewrites the texts (a second
//! redacting profile checks the first one's result again, so no mask is
//! lost). Every service failure fails open, counted and logged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use rand::Rng as _;

use super::expression::{RequestFacts, RequestScope, RuleExpression};
use super::service::{self, Action, AwsKeys, Source, Target, Violation};
use crate::store::guardrails::{Profile, ProfileKeys};
use crate::store::ids::GuardrailProfileId;
use crate::store::{Store, StoreError};
use crate::telemetry;

/// One enabled profile, ready to call.
#[derive(Debug)]
pub struct LoadedProfile {
    pub id: GuardrailProfileId,
    pub name: String,
    pub target: Target,
}

#[derive(Debug)]
struct LoadedRule {
    name: String,
    expression: RuleExpression,
    input: bool,
    output: bool,
    /// Percent of matching requests checked.
    sampling: u8,
    profiles: Vec<Arc<LoadedProfile>>,
}

/// The profiles that check one request, per stage.
#[derive(Debug, Default)]
pub struct Plan {
    pub input: Vec<Arc<LoadedProfile>>,
    pub output: Vec<Arc<LoadedProfile>>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.output.is_empty()
    }
}

/// What one stage's check decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Blocked(Vec<Violation>),
    /// The texts as the service masked them (same order and number as
    /// checked).
    Redacted {
        texts: Vec<String>,
        violations: Vec<Violation>,
    },
}

/// What every call shares.
#[derive(Debug, Clone)]
pub struct CallSettings {
    pub http: reqwest::Client,
    /// `GUARDRAIL_ENDPOINT`, when set.
    pub endpoint: Option<String>,
    pub timeout: Duration,
}

/// The live guardrails of this replica.
#[derive(Debug, Default)]
pub struct Guardrails {
    rules: ArcSwap<Vec<LoadedRule>>,
    fail_opens: AtomicU64,
    blocked: AtomicU64,
    redacted: AtomicU64,
}

/// Counters since start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailCounters"))]
pub struct Counters {
    pub blocked: u64,
    pub redacted: u64,
    pub fail_opens: u64,
}

impl Guardrails {
    /// Read the rules and profiles from the store again.
    pub async fn reload(&self, store: &Store) -> Result<(), StoreError> {
        let repo = store.guardrails();
        let mut profiles: Vec<Arc<LoadedProfile>> = Vec::new();
        for p in repo.profiles().await?.into_iter().filter(|p| p.enabled) {
            match repo.keys(p.id).await {
                Ok(keys) => profiles.push(Arc::new(LoadedProfile {
                    id: p.id,
                    name: p.name.clone(),
                    target: stored_target(p, keys),
                })),
                Err(e) => {
                    tracing::warn!(profile = %p.name, "guardrail profile skipped: its keys cannot be read ({e})")
                }
            }
        }
        let mut rules = Vec::new();
        for r in repo.rules().await?.into_iter().filter(|r| r.enabled) {
            let expression = match RuleExpression::compile(&r.cel_expression) {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!(rule = %r.name, "guardrail rule skipped: {e}");
                    continue;
                }
            };
            let linked: Vec<Arc<LoadedProfile>> = profiles
                .iter()
                .filter(|p| r.profile_ids.contains(&p.id))
                .cloned()
                .collect();
            if linked.is_empty() || r.sampling_rate <= 0 {
                continue;
            }
            rules.push(LoadedRule {
                name: r.name,
                expression,
                input: matches!(r.apply_to.as_str(), "Input" | "Both"),
                output: matches!(r.apply_to.as_str(), "Output" | "Both"),
                sampling: u8::try_from(r.sampling_rate.clamp(0, 100)).unwrap_or(100),
                profiles: linked,
            });
        }
        self.rules.store(Arc::new(rules));
        Ok(())
    }

    /// Whether any rule could check a request.
    pub fn is_empty(&self) -> bool {
        self.rules.load().is_empty()
    }

    /// Enabled rules with at least one enabled profile.
    pub fn active_rules(&self) -> usize {
        self.rules.load().len()
    }

    /// Which profiles check this request: each rule's expression over
    /// `facts`, then its sample. A rule whose expression fails is skipped.
    pub fn plan(&self, facts: &RequestFacts<'_>) -> Plan {
        let rules = self.rules.load();
        let mut plan = Plan::default();
        if rules.is_empty() {
            return plan;
        }
        let scope = RequestScope::new(facts);
        for rule in rules.iter() {
            match rule.expression.matches(&scope) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    tracing::warn!(rule = %rule.name, "guardrail rule skipped: {e}");
                    continue;
                }
            }
            if rule.sampling < 100 && rand::thread_rng().gen_range(0..100) >= rule.sampling {
                continue;
            }
            for (wanted, list) in [
                (rule.input, &mut plan.input),
                (rule.output, &mut plan.output),
            ] {
                if wanted {
                    for p in &rule.profiles {
                        if !list.iter().any(|q| q.id == p.id) {
                            list.push(p.clone());
                        }
                    }
                }
            }
        }
        plan
    }

    /// Check `texts` with `profiles` (one stage); the outcome is counted in
    /// the stage's metrics.
    pub async fn check(
        &self,
        settings: &CallSettings,
        profiles: &[Arc<LoadedProfile>],
        source: Source,
        texts: &[&str],
    ) -> Outcome {
        if profiles.is_empty() || texts.is_empty() {
            return Outcome::Pass;
        }
        let output = matches!(source, Source::Output);
        // With traces on, the check is an internal span of the request.
        let mut span = telemetry::traces::current().map(|request| {
            request.internal(if output {
                "guardrails output"
            } else {
                "guardrails input"
            })
        });
        let outcome = self.decide(settings, profiles, source, texts).await;
        let action = match &outcome {
            Outcome::Pass => 0,
            Outcome::Blocked(_) => 1,
            Outcome::Redacted { .. } => 2,
        };
        let stage = usize::from(output);
        telemetry::meters().guardrail_verdict(stage, action);
        if let Some(span) = &mut span {
            use telemetry::traces::AttrValue;
            let stage = if output { "output" } else { "input" };
            let verdict = ["pass", "blocked", "redacted"][action];
            span.attribute("gateway.guardrail.stage", AttrValue::Str(stage.to_owned()));
            span.attribute(
                "gateway.guardrail.action",
                AttrValue::Str(verdict.to_owned()),
            );
        }
        outcome
    }

    async fn decide(
        &self,
        settings: &CallSettings,
        profiles: &[Arc<LoadedProfile>],
        source: Source,
        texts: &[&str],
    ) -> Outcome {
        let calls = profiles
            .iter()
            .map(|p| self.call(settings, p, source, texts));
        let verdicts = futures::future::join_all(calls).await;
        let mut blocked = false;
        let mut violations = Vec::new();
        let mut redactions = Vec::new();
        for (profile, verdict) in profiles.iter().zip(verdicts) {
            let Some(verdict) = verdict else { continue };
            match verdict.action {
                Action::None => {}
                Action::Intervened => {
                    blocked = true;
                    violations.extend(verdict.violations);
                }
                Action::Redacted => redactions.push((profile, verdict)),
            }
        }
        if blocked {
            for (_, v) in redactions {
                violations.extend(v.violations);
            }
            return self.blocked(violations);
        }
        let mut redactions = redactions.into_iter();
        let Some((first, verdict)) = redactions.next() else {
            return Outcome::Pass;
        };
        let mut current = match placed(first, verdict.outputs, texts.len()) {
            Some(t) => t,
            None => return self.blocked(verdict.violations),
        };
        violations = verdict.violations;
        for (profile, _) in redactions {
            let now: Vec<&str> = current.iter().map(String::as_str).collect();
            let Some(again) = self.call(settings, profile, source, &now).await else {
                continue;
            };
            match again.action {
                Action::None => {}
                Action::Intervened => {
                    violations.extend(again.violations);
                    return self.blocked(violations);
                }
                Action::Redacted => match placed(profile, again.outputs, now.len()) {
                    Some(t) => {
                        current = t;
                        violations.extend(again.violations);
                    }
                    None => {
                        violations.extend(again.violations);
                        return self.blocked(violations);
                    }
                },
            }
        }
        self.redacted.fetch_add(1, Ordering::Relaxed);
        Outcome::Redacted {
            texts: current,
            violations,
        }
    }

    /// One profile's verdict; a failure is logged and counted (fail open).
    async fn call(
        &self,
        settings: &CallSettings,
        profile: &LoadedProfile,
        source: Source,
        texts: &[&str],
    ) -> Option<service::Verdict> {
        match service::apply(
            &settings.http,
            settings.endpoint.as_deref(),
            &profile.target,
            source,
            texts,
            settings.timeout,
        )
        .await
        {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail_opens.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(profile = %profile.name, ?source, "guardrail check failed open: {e}");
                None
            }
        }
    }

    fn blocked(&self, violations: Vec<Violation>) -> Outcome {
        self.blocked.fetch_add(1, Ordering::Relaxed);
        Outcome::Blocked(violations)
    }

    /// Counters since start.
    pub fn counters(&self) -> Counters {
        Counters {
            blocked: self.blocked.load(Ordering::Relaxed),
            redacted: self.redacted.load(Ordering::Relaxed),
            fail_opens: self.fail_opens.load(Ordering::Relaxed),
        }
    }
}

/// The call a stored profile makes, with its decrypted keys.
pub fn stored_target(profile: Profile, keys: ProfileKeys) -> Target {
    Target {
        guardrail_id: profile.guardrail_id,
        guardrail_version: profile.guardrail_version,
        region: profile.region,
        keys: AwsKeys {
            access_key_id: profile.access_key_id,
            secret_access_key: keys.secret_access_key.expose().to_owned(),
            session_token: keys.session_token.map(|t| t.expose().to_owned()),
        },
    }
}

/// A redaction's texts when they can be put back (one per text checked);
/// otherwise the text cannot be forwarded masked, and it is blocked.
fn placed(profile: &LoadedProfile, outputs: Vec<String>, expected: usize) -> Option<Vec<String>> {
    if outputs.len() == expected {
        Some(outputs)
    } else {
        tracing::warn!(
            profile = %profile.name,
            "the guardrail masked the text but returned {} texts for {expected}; blocked rather than forwarded unmasked",
            outputs.len()
        );
        None
    }
}
