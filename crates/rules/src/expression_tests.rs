use super::*;

fn facts() -> RequestFacts<'static> {
    RequestFacts {
        model: "claude-sonnet-4",
        api_format: "anthropic",
        message_count: 3,
        has_tools: true,
        is_streaming: false,
        content_length: 1200,
    }
}

fn eval(source: &str, facts: &RequestFacts<'_>) -> bool {
    RuleExpression::compile(source)
        .unwrap_or_else(|e| panic!("{source}: {e}"))
        .matches(&RequestScope::new(facts))
        .unwrap_or_else(|e| panic!("{source}: {e}"))
}

fn refused(source: &str) -> ExpressionError {
    match RuleExpression::compile(source) {
        Ok(_) => panic!("{source} compiled"),
        Err(e) => e,
    }
}

#[test]
fn every_variable_reads_the_request() {
    let f = facts();
    assert!(eval(r#"request.model == "claude-sonnet-4""#, &f));
    assert!(eval(r#"request.api_format == "anthropic""#, &f));
    assert!(eval("request.message_count == 3", &f));
    assert!(eval("request.has_tools", &f));
    assert!(eval("!request.is_streaming", &f));
    assert!(eval("request.content_length > 1000", &f));
    assert!(!eval("request.content_length > 5000", &f));
    let streaming = RequestFacts {
        is_streaming: true,
        api_format: "openai",
        ..facts()
    };
    assert!(eval(
        r#"request.api_format == "openai" && request.is_streaming"#,
        &streaming
    ));
}

#[test]
fn the_empty_expression_matches_everything() {
    for source in ["", "   ", "\n"] {
        let e = RuleExpression::compile(source).unwrap();
        assert!(e.is_empty());
        assert!(e.matches(&RequestScope::new(&facts())).unwrap());
    }
}

#[test]
fn functions_macros_and_lists() {
    let f = facts();
    assert!(eval(r#"request.model.startsWith("claude")"#, &f));
    assert!(eval(r#"request.model.matches("^claude-.*-4$")"#, &f));
    assert!(eval(
        r#"request.model in ["gpt-4o", "claude-sonnet-4"]"#,
        &f
    ));
    assert!(eval(
        r#"["opus", "sonnet"].exists(m, request.model.contains(m))"#,
        &f
    ));
    assert!(eval("size(request.model) == 15", &f));
    assert!(eval(
        "request.message_count > 2 ? request.has_tools : false",
        &f
    ));
    // Numbers compare across kinds.
    assert!(eval("request.content_length > 1000.5", &f));
}

#[test]
fn syntax_errors_carry_their_position() {
    let e = refused("request.model ==");
    assert_eq!(e.line, 1, "{e}");
    assert!(e.column > 1, "{e}");
    let e = refused("request.has_tools &&\n  (request.model == ");
    assert_eq!(e.line, 2, "{e}");
}

/// Found by the `cel_rules` fuzz target: an expression that ends too early
/// was refused at a column past its end (18 for 16 characters). The end of
/// input is one column past the last character.
#[test]
fn an_early_end_is_refused_just_past_the_text() {
    let e = refused("request.model ==");
    assert_eq!((e.line, e.column), (1, 17), "{e}");
    let e = refused("request.has_tools &&\n  (request.model == ");
    assert_eq!(e.line, 2, "{e}");
    assert_eq!(e.column, 21, "{e}");
    let e = refused("(");
    assert_eq!((e.line, e.column), (1, 2), "{e}");
}

#[test]
fn unknown_names_and_fields_are_refused_where_they_stand() {
    let e = refused("request.has_tools && user.admin");
    assert_eq!((e.line, e.column), (1, 22), "{e}");
    assert!(e.message.contains("unknown name 'user'"), "{e}");
    let e = refused("request.has_tools && request.temperature > 1");
    assert!(e.message.contains("no field 'temperature'"), "{e}");
    assert_eq!(e.line, 1);
    assert!(e.column >= 22, "{e}");
    // Characters, not bytes: a multi-byte string before the fault.
    let e = refused("\"é\" == request.model && nope");
    assert_eq!((e.line, e.column), (1, 26), "{e}");
}

#[test]
fn type_errors_are_refused_with_their_position() {
    let e = refused("request.has_tools && request.model > 3");
    assert!(e.message.contains("compare"), "{e}");
    assert_eq!(e.line, 1);
    assert!(e.column >= 22, "{e}");
    let e = refused(r#"request.message_count == "3""#);
    assert!(e.message.contains("one type"), "{e}");
    let e = refused("request.model && true");
    assert!(e.message.contains("booleans"), "{e}");
    let e = refused("request.content_length");
    assert!(e.message.contains("true or false"), "{e}");
    let e = refused("request.message_count.startsWith(\"a\")");
    assert!(e.message.contains("strings"), "{e}");
}

#[test]
fn unknown_functions_are_refused() {
    let e = refused("request.has_tools || frobnicate(request.model)");
    assert!(e.message.contains("frobnicate"), "{e}");
    assert_eq!(e.line, 1);
    assert!((22..=32).contains(&e.column), "{e}");
}

#[test]
fn run_time_errors_skip_the_rule_without_failing_compilation() {
    let e =
        RuleExpression::compile("request.message_count / (request.message_count - 3) > 0").unwrap();
    assert!(e.matches(&RequestScope::new(&facts())).is_err());
}

#[test]
fn long_expressions_are_refused() {
    let long = format!("request.model == \"{}\"", "a".repeat(5000));
    assert!(refused(&long).message.contains("at most"));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Pieces of CEL, so random joins reach deep into the parser.
    const PIECES: &[&str] = &[
        "request",
        ".",
        "model",
        "api_format",
        "message_count",
        "has_tools",
        "is_streaming",
        "content_length",
        "nope",
        " ",
        "\n",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "?",
        "!",
        "&&",
        "||",
        "==",
        "!=",
        "<",
        "<=",
        ">",
        ">=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "in",
        "\"a\"",
        "'b'",
        "1",
        "2.5",
        "3u",
        "-7",
        "true",
        "false",
        "null",
        "b\"x\"",
        "size",
        "startsWith",
        "matches",
        "exists",
        "all",
        "map",
        "filter",
        "has",
        "x",
        "é",
        "\"",
        "\\",
        "r'",
        "0x1F",
        ".?",
        "[?",
        "dyn",
        "type",
        "int",
        "string",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever an admin types, compiling answers (never panics), and
        /// a compiled rule evaluates without panicking.
        #[test]
        fn any_text_compiles_or_is_refused(picks in prop::collection::vec(0..PIECES.len(), 0..24)) {
            let source: String = picks.iter().map(|&i| PIECES[i]).collect();
            if let Ok(rule) = RuleExpression::compile(&source) {
                let _ = rule.matches(&RequestScope::new(&facts()));
            }
        }

        #[test]
        fn arbitrary_bytes_compile_or_are_refused(source in "\\PC{0,64}") {
            if let Ok(rule) = RuleExpression::compile(&source) {
                let _ = rule.matches(&RequestScope::new(&facts()));
            }
        }
    }
}
