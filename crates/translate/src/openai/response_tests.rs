use proptest::prelude::*;

use super::*;
use crate::answer_strategies::{meta, response};
use crate::model::Usage;

fn written(resp: &ChatResponse, meta: &ResponseMeta) -> String {
    let mut out = Vec::new();
    write_response(resp, meta, &mut out);
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn a_text_answer_is_written_as_serde_writes_the_typed_object() {
    let resp = ChatResponse {
        content: vec![
            ContentPart::Thinking {
                thinking: "Let me think.".into(),
                signature: Some("sig".into()),
            },
            ContentPart::Text {
                text: "Hello, \"world\"\n".into(),
                cache_control: None,
            },
        ],
        stop_reason: Some(StopReason::EndTurn),
        usage: Usage {
            input_tokens: Some(12),
            output_tokens: Some(5),
            cache_read_tokens: Some(3),
            cache_write_tokens: None,
        },
        ..ChatResponse::default()
    };
    let meta = ResponseMeta {
        id: "chatcmpl-1".into(),
        model: "claude-sonnet-4.5".into(),
        created: 1_700_000_000,
    };
    assert_eq!(
        written(&resp, &meta),
        concat!(
            r#"{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"#,
            r#""model":"claude-sonnet-4.5","choices":[{"index":0,"message":{"role":"assistant","#,
            r#""content":"Hello, \"world\"\n","reasoning_content":"Let me think."},"#,
            r#""finish_reason":"stop"}],"usage":{"prompt_tokens":15,"completion_tokens":5,"#,
            r#""total_tokens":20,"prompt_tokens_details":{"cached_tokens":3}}}"#
        )
    );
}

#[test]
fn an_answer_of_only_tool_calls_has_null_content_and_finishes_with_tool_calls() {
    let resp = ChatResponse {
        content: vec![ContentPart::ToolUse {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
        }],
        ..ChatResponse::default()
    };
    let meta = ResponseMeta {
        id: "chatcmpl-2".into(),
        model: "m".into(),
        created: 1,
    };
    let body: serde_json::Value = serde_json::from_str(&written(&resp, &meta)).unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        serde_json::Value::Null
    );
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"Paris"}"#
    );
}

proptest! {
    /// The hand-written body is byte for byte the typed object's.
    #[test]
    fn the_written_body_is_the_typed_objects(resp in response(), meta in meta()) {
        let typed = serde_json::to_string(&render_response(&resp, &meta)).unwrap();
        prop_assert_eq!(written(&resp, &meta), typed);
    }
}
