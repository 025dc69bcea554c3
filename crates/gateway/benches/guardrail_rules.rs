//! Guardrail rule expressions (CEL) on the `/v1` path (issue 16; target:
//! under 2 µs per rule).
//!
//! - `guardrail_rules/scope`: building the `request` variable of one
//!   request (once per request, shared by every rule);
//! - `guardrail_rules/evaluate/<rule>`: one rule over that scope, for a
//!   simple comparison, the reference's example (three conditions), a
//!   string function, and a list membership;
//! - `guardrail_rules/compile`: parsing and checking one expression (once,
//!   when a rule is saved or loaded).
//!
//! Run: `cargo bench -p gateway --bench guardrail_rules`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use gateway::guardrails::expression::{RequestFacts, RequestScope, RuleExpression};

const RULES: &[(&str, &str)] = &[
    ("comparison", "request.message_count > 10"),
    (
        "three_conditions",
        r#"request.api_format == "openai" && request.content_length > 1000 && !request.is_streaming"#,
    ),
    ("starts_with", r#"request.model.startsWith("claude")"#),
    (
        "in_list",
        r#"request.model in ["gpt-4o", "claude-sonnet-4.5", "claude-opus-4"]"#,
    ),
];

fn facts() -> RequestFacts<'static> {
    RequestFacts {
        model: "claude-sonnet-4.5",
        api_format: "openai",
        message_count: 4,
        has_tools: true,
        is_streaming: false,
        content_length: 2400,
    }
}

fn rules(c: &mut Criterion) {
    let facts = facts();
    c.bench_function("guardrail_rules/scope", |b| {
        b.iter(|| RequestScope::new(black_box(&facts)))
    });
    let scope = RequestScope::new(&facts);
    for (name, source) in RULES {
        let Ok(rule) = RuleExpression::compile(source) else {
            continue;
        };
        c.bench_function(&format!("guardrail_rules/evaluate/{name}"), |b| {
            b.iter(|| rule.matches(black_box(&scope)))
        });
    }
    c.bench_function("guardrail_rules/compile", |b| {
        b.iter(|| RuleExpression::compile(black_box(RULES[1].1)).is_ok())
    });
}

criterion_group!(benches, rules);
criterion_main!(benches);
