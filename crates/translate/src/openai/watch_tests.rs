use proptest::prelude::*;
use serde_json::{json, Value};
use wire::sse::SseEvent;

use super::*;

fn ev(data: &str) -> SseEvent {
    SseEvent {
        data: data.to_owned(),
        ..SseEvent::default()
    }
}

fn started() -> StreamWatch {
    let mut w = StreamWatch::new(true);
    let first = r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#;
    assert!(w.observe(&ev(first)).substantive);
    w
}

#[test]
fn after_the_start_content_chunks_are_recognised_without_parsing() {
    for plain in [
        r#"{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"say \"usage\" or \"error\""},"finish_reason" : null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null}"#,
        r#"{"choices":[],"usage": null,"error" :null}"#,
    ] {
        assert!(plain_content(plain), "{plain}");
    }
    for parsed in [
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason" :
            "length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
        r#"{"error":{"message":"overloaded","type":"overloaded_error"}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"usage"},"finish_reason":null}]}"#,
    ] {
        assert!(!plain_content(parsed), "{parsed}");
    }
}

#[test]
fn a_started_stream_still_sees_its_finish_usage_and_errors() {
    let mut w = started();
    let spaced =
        r#"{ "choices" : [ { "index" : 0 , "delta" : { } , "finish_reason" : "stop" } ] }"#;
    w.observe(&ev(spaced));
    assert_eq!(w.ending(), Ending::MissingDone);
    let usage = r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}"#;
    assert!(w.observe(&ev(usage)).drop, "the unrequested usage chunk");
    assert_eq!(w.usage().output_tokens, Some(3));

    let mut w = started();
    let err = r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#;
    assert_eq!(w.observe(&ev(err)).error.map(|e| e.status), Some(429));
}

/// What the full parse of a chunk reads.
fn parsed(data: &str) -> (bool, bool, bool) {
    let chunk: LightChunk = serde_json::from_str(data).unwrap();
    let finish = chunk
        .choices
        .unwrap_or_default()
        .iter()
        .any(|c| c.finish_reason.as_deref().is_some_and(|r| !r.is_empty()));
    let error = chunk.error.is_some_and(|e| !e.is_null());
    (finish, chunk.usage.is_some(), error)
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("usage".to_owned()),
            Just("error".to_owned()),
            Just("finish_reason".to_owned()),
            Just("\"".to_owned()),
            Just("null".to_owned()),
            Just(":".to_owned()),
            "[a-z ]{0,4}",
            "\\PC{0,2}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    /// A chunk the scan lets through has nothing the full parse would read,
    /// whatever its text says and however it is spaced.
    #[test]
    fn the_scan_never_hides_what_the_parse_reads(
        content in text(),
        finish in prop::option::of(prop_oneof![Just(""), Just("stop"), Just("length")]),
        usage in prop::option::of(any::<bool>()),
        error in prop::option::of(any::<bool>()),
        pretty in any::<bool>(),
    ) {
        let mut chunk = json!({
            "id": "c",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}],
        });
        // Each of `usage` and `error`: absent, null, or a value.
        if let Some(set) = usage {
            chunk["usage"] = if set { json!({"prompt_tokens": 1, "completion_tokens": 2}) } else { Value::Null };
        }
        if let Some(set) = error {
            chunk["error"] = if set { json!({"message": content}) } else { Value::Null };
        }
        let data = if pretty {
            serde_json::to_string_pretty(&chunk).unwrap()
        } else {
            chunk.to_string()
        };
        if plain_content(&data) {
            prop_assert_eq!(parsed(&data), (false, false, false));
        }
        if usage == Some(true) || error == Some(true) || finish.is_some_and(|f| !f.is_empty()) {
            prop_assert!(!plain_content(&data));
        }
    }
}
