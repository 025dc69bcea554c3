//! Rule expressions: CEL over the facts of one request (spec 2.8). The
//! front end lives in the pure `rules` crate (fuzzed on its own, `fuzz/`);
//! this module is its place in the gateway.

pub use rules::{ExpressionError, RequestFacts, RequestScope, RuleExpression, VARIABLES};
