use super::*;
use crate::model::StopReason;

#[test]
fn cut_json_is_recognised() {
    for cut in [
        r#"{"path":"a.txt","content":"hello wor"#,
        r#"{"path":"a.txt","#,
        r#"{"a":[1,2"#,
        r#"{"a":{"b":"#,
        r#"["x""#,
        r#"{"s":"with \" escaped quote"#,
        "{",
    ] {
        assert!(looks_cut_off(cut), "{cut}");
    }
    for whole in [
        "",
        "  ",
        "{}",
        r#"{"a":"}"}"#,
        r#"{"a":[1,{"b":null}]}"#,
        // Malformed but closed: not a truncation.
        r#"{"a" 1}"#,
        r#"{"a":1}}"#,
        r#"{"a":1]"#,
        "hello",
    ] {
        assert!(!looks_cut_off(whole), "{whole}");
    }
}

#[test]
fn a_completion_signal_means_complete() {
    assert_eq!(detect(true, true, []), None);
    assert_eq!(detect(true, false, []), None);
    // Nothing at all produced is not a truncation either.
    assert_eq!(detect(false, false, []), None);
}

#[test]
fn text_without_a_signal_is_cut_content() {
    assert_eq!(
        detect(false, true, []),
        Some(Truncation {
            content: true,
            tools: vec![]
        })
    );
}

#[test]
fn complete_tool_calls_end_an_answer_even_without_a_signal() {
    assert_eq!(
        detect(false, true, [("t1", "f", r#"{"a":1}"#), ("t2", "g", "")]),
        None
    );
}

#[test]
fn cut_tool_arguments_are_reported_even_with_a_signal() {
    let t = detect(
        true,
        true,
        [
            ("t1", "read", r#"{"a":1}"#),
            ("t2", "write", r#"{"content":"abc"#),
        ],
    )
    .unwrap();
    assert!(!t.content);
    assert_eq!(
        t.tools,
        vec![TruncatedTool {
            id: "t2".into(),
            name: "write".into(),
            received_bytes: 15
        }]
    );
}

#[test]
fn detect_response_reads_a_collected_answer() {
    let resp = ChatResponse {
        content: vec![ContentPart::Thinking {
            thinking: "hmm".into(),
            signature: None,
        }],
        stop_reason: Some(StopReason::EndTurn),
        ..ChatResponse::default()
    };
    assert!(detect_response(&resp, false).unwrap().content);
    assert_eq!(detect_response(&resp, true), None);
    assert_eq!(detect_response(&ChatResponse::default(), false), None);
}

fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentPart::Text {
            text: text.into(),
            cache_control: None,
        }],
        name: None,
    }
}

#[test]
fn content_recovery_appends_the_partial_answer_and_a_system_notice() {
    let mut req = ChatRequest {
        messages: vec![user("Write a long story.")],
        ..ChatRequest::default()
    };
    let partial = ChatResponse {
        content: vec![ContentPart::Text {
            text: "Once upon a".into(),
            cache_control: None,
        }],
        ..ChatResponse::default()
    };
    let t = detect_response(&partial, false).unwrap();
    inject_recovery(&mut req, &partial, &t);
    assert_eq!(req.messages.len(), 3);
    assert_eq!(req.messages[1].role, Role::Assistant);
    assert_eq!(req.messages[1].content, partial.content);
    assert_eq!(req.messages[2], user(content_notice()));
    assert!(content_notice().starts_with("[System Notice]"));
}

#[test]
fn tool_recovery_answers_every_call_with_an_error_result() {
    let mut req = ChatRequest {
        messages: vec![user("Create both files.")],
        ..ChatRequest::default()
    };
    let partial = ChatResponse {
        content: vec![
            ContentPart::Text {
                text: "Writing.".into(),
                cache_control: None,
            },
            ContentPart::ToolUse {
                id: "t1".into(),
                name: "write".into(),
                arguments: r#"{"path":"a"}"#.into(),
            },
            ContentPart::ToolUse {
                id: "t2".into(),
                name: "write".into(),
                arguments: r#"{"path":"b","content":"lo"#.into(),
            },
        ],
        ..ChatResponse::default()
    };
    let t = detect_response(&partial, false).unwrap();
    assert!(!t.content);
    inject_recovery(&mut req, &partial, &t);
    assert_eq!(req.messages.len(), 3);
    assert_eq!(req.messages[1].content.len(), 3);
    let ContentPart::ToolResult {
        tool_use_id,
        content,
        is_error,
    } = &req.messages[2].content[1]
    else {
        panic!("not a tool result")
    };
    assert_eq!(tool_use_id, "t2");
    assert!(is_error);
    let ToolResultContent::Text(text) = &content[0] else {
        panic!()
    };
    assert!(text.starts_with("[API Limitation]") && text.contains("`write`"));
    let ContentPart::ToolResult {
        tool_use_id,
        content,
        ..
    } = &req.messages[2].content[0]
    else {
        panic!("not a tool result")
    };
    assert_eq!(tool_use_id, "t1");
    assert_eq!(
        content,
        &vec![ToolResultContent::Text(SIBLING_NOTICE.into())]
    );
    assert_eq!(req.messages[2].content.len(), 2);
}

#[test]
fn the_system_addition_names_both_notices() {
    let s = system_addition();
    assert!(s.contains("[System Notice]") && s.contains("[API Limitation]"));
}
