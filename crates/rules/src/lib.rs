//! The front end of the guardrail rules (spec 2.8): a rule's CEL
//! expression compiled and type-checked once, then evaluated over the facts
//! of each request. Its own crate, with nothing but `cel` and `serde`, so
//! the fuzz workspace (`fuzz/`, target `cel_rules`) can link it without the
//! gateway; the gateway re-exports it as `guardrails::expression`.

mod expression;

pub use expression::{ExpressionError, RequestFacts, RequestScope, RuleExpression, VARIABLES};
