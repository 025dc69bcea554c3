use super::*;
use crate::primary::validate::ToolView;
use serde_json::json;

fn view<'a>(content: &'a str, tools: Vec<ToolView<'a>>) -> RequestView<'a> {
    RequestView {
        model_id: "claude-sonnet-4.5",
        content,
        tools,
        body_len: 4000,
    }
}

fn texts(events: &[SimEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            SimEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Concatenated inputs per tool id, in order, with whether each stopped.
fn tools(events: &[SimEvent]) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for e in events {
        if let SimEvent::Tool {
            id,
            name,
            input,
            stop,
        } = e
        {
            match out.iter_mut().find(|(i, _, _)| i == id) {
                Some(entry) => {
                    entry.1.push_str(input.as_deref().unwrap_or(""));
                    entry.2 |= stop;
                }
                None => out.push((
                    id.clone(),
                    format!("{name}:{}", input.as_deref().unwrap_or("")),
                    *stop,
                )),
            }
        }
    }
    out
}

#[test]
fn payloads_are_alphabetical_flat_json() {
    let tool = SimEvent::Tool {
        id: "tooluse_B7".into(),
        name: "read_file".into(),
        input: Some("{\"pa".into()),
        stop: false,
    };
    assert_eq!(
        String::from_utf8(tool.payload()).unwrap(),
        r#"{"input":"{\"pa","name":"read_file","toolUseId":"tooluse_B7"}"#
    );
    let stop = SimEvent::Tool {
        id: "tooluse_B7".into(),
        name: "read_file".into(),
        input: None,
        stop: true,
    };
    assert_eq!(
        String::from_utf8(stop.payload()).unwrap(),
        r#"{"name":"read_file","stop":true,"toolUseId":"tooluse_B7"}"#
    );
    assert_eq!(
        String::from_utf8(SimEvent::Metering { usage: 0.021 }.payload()).unwrap(),
        r#"{"unit":"credit","unitPlural":"credits","usage":0.021}"#
    );
    assert_eq!(
        String::from_utf8(SimEvent::ContextUsage { percentage: 3.2 }.payload()).unwrap(),
        r#"{"contextUsagePercentage":3.2}"#
    );
    assert_eq!(
        String::from_utf8(SimEvent::Text("Hi \"you\"".into()).payload()).unwrap(),
        r#"{"content":"Hi \"you\""}"#
    );
    let meta = SimEvent::Metadata {
        input_tokens: 10,
        output_tokens: 5,
    };
    assert_eq!(meta.event_type(), "metadataEvent");
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&meta.payload()).unwrap(),
        json!({"tokenUsage": {"outputTokens": 5, "totalTokens": 15, "uncachedInputTokens": 10}})
    );
}

#[test]
fn default_answer_mentions_the_model() {
    let events = content_events(&Scenario::default_answer(), &view("hi", vec![])).unwrap();
    assert!(texts(&events).contains("claude-sonnet-4.5"));
    assert!(events.len() > 1, "chunked");
}

#[test]
fn text_and_echo() {
    let events = content_events(&Scenario::text(500, 20), &view("hi", vec![])).unwrap();
    assert_eq!(events.len(), 25);
    assert_eq!(texts(&events).chars().count(), 500);
    let msg = "sim: echo\nWhat arrived? ünïcode 🙂";
    let events = content_events(&Scenario::echo(), &view(msg, vec![])).unwrap();
    assert_eq!(texts(&events), msg);
    assert!(content_events(&Scenario::status(429), &view("x", vec![])).is_none());
}

#[test]
fn tools_use_the_offered_tools_and_split_input() {
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let offered = vec![
        ToolView {
            name: "read_file",
            schema: &schema,
        },
        ToolView {
            name: "list_dir",
            schema: &schema,
        },
    ];
    let events = content_events(&Scenario::tools(3, 4), &view("x", offered)).unwrap();
    assert_eq!(events[0], SimEvent::Text(TOOLS_PREAMBLE.into()));
    let calls = tools(&events);
    assert_eq!(calls.len(), 3);
    let names: Vec<_> = calls
        .iter()
        .map(|c| c.1.split(':').next().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["read_file", "list_dir", "read_file"]);
    for (i, (_, joined, stopped)) in calls.iter().enumerate() {
        let input = joined.split_once(':').unwrap().1;
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(input).unwrap(),
            json!({"path": format!("path-{i}")})
        );
        assert!(stopped);
    }
    // 1 opening + 4 fragments + 1 stop per call.
    assert_eq!(events.len(), 1 + 3 * 6);
}

#[test]
fn tools_without_offered_tools_and_duplicates() {
    let s: Scenario = "tools preamble=false duplicate=true fragments=2"
        .parse()
        .unwrap();
    let events = content_events(&s, &view("x", vec![])).unwrap();
    assert!(matches!(&events[0], SimEvent::Tool { name, input: None, .. } if name == "sim_tool_0"));
    // opening, 2 fragments, stop, duplicate empty input, stop
    assert_eq!(events.len(), 6);
    assert!(matches!(&events[4], SimEvent::Tool { input: Some(i), .. } if i.is_empty()));
    let forced: Scenario = "tools name=bash".parse().unwrap();
    let events = content_events(&forced, &view("x", vec![])).unwrap();
    assert!(matches!(&events[1], SimEvent::Tool { name, .. } if name == "bash"));
}

#[test]
fn thinking_and_reasoning() {
    let s: Scenario = "thinking thinking_len=30 len=10 chunk=7".parse().unwrap();
    let text = texts(&content_events(&s, &view("x", vec![])).unwrap());
    assert!(text.starts_with("<thinking>Let me think"));
    assert!(text.contains("</thinking>\n\n"));
    assert_eq!(text.chars().count(), 10 + 30 + 10 + 11 + 2);

    let s: Scenario = "reasoning thinking_len=30 len=10 chunk=10".parse().unwrap();
    let events = content_events(&s, &view("x", vec![])).unwrap();
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            SimEvent::ReasoningText(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning.chars().count(), 30);
    assert!(events
        .iter()
        .any(|e| matches!(e, SimEvent::ReasoningSignature(_))));
    assert_eq!(events[0].event_type(), "reasoningContentEvent");
    assert_eq!(texts(&events).chars().count(), 10);
}

#[test]
fn truncation_cuts_the_last_tool_input() {
    let s = Scenario::tools(2, 4);
    let mut events = content_events(&s, &view("x", vec![])).unwrap();
    truncate(&mut events);
    let calls = tools(&events);
    assert!(calls[0].2, "first call complete");
    assert!(!calls[1].2, "last call never stops");
    let cut = calls[1].1.split_once(':').unwrap().1;
    assert!(
        serde_json::from_str::<serde_json::Value>(cut).is_err(),
        "{cut}"
    );
    // Text-only answers are left alone (only the trailer goes).
    let mut text = content_events(&Scenario::text(40, 10), &view("x", vec![])).unwrap();
    truncate(&mut text);
    assert_eq!(text.len(), 4);
}

#[test]
fn trailer_follows_the_scenario() {
    let content = output_chars(&[SimEvent::Text("x".repeat(400))]);
    assert_eq!(content, 400);
    let t = trailer(&Scenario::text(1, 1), content, 4000, 200_000);
    assert_eq!(
        t,
        vec![
            SimEvent::Metering { usage: 0.05 },
            SimEvent::ContextUsage { percentage: 0.5 }
        ]
    );
    let t = trailer(
        &Scenario::text(1, 1).with_metadata(),
        content,
        4000,
        200_000,
    );
    assert_eq!(
        t[0],
        SimEvent::Metadata {
            input_tokens: 1000,
            output_tokens: 100
        }
    );
    assert!(trailer(&Scenario::text(1, 1).truncated(), content, 4000, 200_000).is_empty());
    let s: Scenario = "text metering=0 context=0".parse().unwrap();
    assert!(trailer(&s, content, 4000, 200_000).is_empty());
}
