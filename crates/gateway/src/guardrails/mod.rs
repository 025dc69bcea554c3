//! Content guardrails (spec 1.8, 2.8; issue 16): rules written in CEL
//! choose which requests a profile checks, and each profile is one call to
//! the cloud guardrail service (AWS Bedrock `ApplyGuardrail`, SigV4-signed).

pub mod engine;
pub mod expression;
pub mod service;
pub mod texts;

pub use engine::{CallSettings, Guardrails, Outcome, Plan};

use std::sync::Arc;

use engine::LoadedProfile;
use service::Violation;

/// What the answer of a guarded request still needs: the profiles that
/// check a non-streaming answer, and what the input check masked (the
/// answer carries it as its warning).
#[derive(Debug)]
pub struct AnswerGuard {
    pub engine: Arc<Guardrails>,
    pub settings: CallSettings,
    pub output: Vec<Arc<LoadedProfile>>,
    pub input_redacted: Vec<Violation>,
}

/// The `guardrail_warning` member of a redacted answer (interfaces-full.md 5).
#[derive(Debug, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct GuardrailWarning {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: String,
    pub violations: Vec<Violation>,
}

impl GuardrailWarning {
    pub fn new(violations: Vec<Violation>) -> Self {
        GuardrailWarning {
            kind: "guardrail_warning",
            message: "Content redacted by guardrail policy".to_owned(),
            violations,
        }
    }
}
