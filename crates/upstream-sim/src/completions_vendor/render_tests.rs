use super::*;
use crate::primary::stream::Step;
use crate::vendor_common::answer::RequestInfo;
use crate::vendor_common::scenario::VendorScenario;
use crate::vendor_common::sse::play;
use crate::vendor_common::Vendor;
use wire::sse::SseParser;

fn meta(include_usage: bool, extra: bool) -> ChunkMeta<'static> {
    ChunkMeta {
        id: "chatcmpl-1",
        created: 1_700_000_000,
        model: "gpt-x",
        fingerprint: "fp_1",
        include_usage,
        extra,
    }
}

fn plan(s: &VendorScenario) -> Answer {
    let req = RequestInfo {
        model: "gpt-x",
        user_text: "echo me".into(),
        tools: Vec::new(),
        body_len: 80,
        cache_control: false,
    };
    Answer::plan(s, &req, Vendor::Completions, || "call_x".to_owned()).unwrap()
}

/// Data lines of a stream: JSON chunks and whether `[DONE]` ended it.
fn chunks(f: SseFrames) -> (Vec<Value>, bool) {
    let mut p = SseParser::new();
    for s in play(&VendorScenario::echo(), f, |_, _| {}) {
        if let Step::Bytes(b) = s {
            p.feed(&b);
        }
    }
    let mut out = Vec::new();
    let mut done = false;
    while let Some(e) = p.next_event().unwrap() {
        assert!(e.event.is_none());
        if e.data == "[DONE]" {
            done = true;
        } else {
            assert!(!done, "nothing after [DONE]");
            out.push(serde_json::from_str(&e.data).unwrap());
        }
    }
    (out, done)
}

#[test]
fn text_without_usage_has_no_usage_key() {
    let (c, done) = chunks(stream(&plan(&VendorScenario::echo()), &meta(false, false)));
    assert!(done);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(c[1]["choices"][0]["delta"]["content"], "echo me");
    assert_eq!(c[2]["choices"][0]["finish_reason"], "stop");
    assert!(c.iter().all(|c| c.get("usage").is_none()));
    assert!(c
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "gpt-x"));
}

#[test]
fn include_usage_adds_null_usage_and_a_usage_chunk() {
    let (c, _) = chunks(stream(
        &plan(&VendorScenario::thinking()),
        &meta(true, true),
    ));
    let last = c.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert_eq!(last["usage"]["prompt_tokens"], 20);
    assert_eq!(
        last["usage"]["completion_tokens_details"]["reasoning_tokens"],
        30
    );
    assert!(c[..c.len() - 1].iter().all(|c| c["usage"].is_null()));
    assert_eq!(c[0]["vendor_extra"]["sim"], true);
    assert!(c[1..].iter().all(|c| c.get("vendor_extra").is_none()));
    let reasoning: String = c
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning.chars().count(), 120);
}

#[test]
fn parallel_calls_sequential_and_interleaved() {
    for interleave in [false, true] {
        let mut s = VendorScenario::tools(2, 3);
        if let crate::vendor_common::scenario::VendorKind::Tools {
            interleave: i,
            preamble,
            ..
        } = &mut s.kind
        {
            *i = interleave;
            *preamble = false;
        }
        let a = plan(&s);
        let (c, _) = chunks(stream(&a, &meta(false, false)));
        // The first chunk opens call 0 and carries the role.
        let first = &c[0]["choices"][0]["delta"];
        assert_eq!(first["role"], "assistant");
        assert_eq!(first["tool_calls"][0]["id"], "call_x");
        let mut args = [String::new(), String::new()];
        let mut order = Vec::new();
        for chunk in &c {
            for tc in chunk["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let i = tc["index"].as_u64().unwrap() as usize;
                order.push(i);
                if tc.get("id").is_some() {
                    assert_eq!(tc["type"], "function");
                    assert!(tc["function"]["name"].is_string());
                }
                args[i].push_str(tc["function"]["arguments"].as_str().unwrap());
            }
        }
        for (i, a) in args.iter().enumerate() {
            let v: Value = serde_json::from_str(a).unwrap();
            assert_eq!(v, json!({"query": format!("sim-{i}")}));
        }
        let expected: Vec<usize> = if interleave {
            vec![0, 1, 0, 1, 0, 1, 0, 1]
        } else {
            vec![0, 0, 0, 0, 1, 1, 1, 1]
        };
        assert_eq!(order, expected);
        assert_eq!(
            c.last().unwrap()["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }
}

#[test]
fn response_matches_the_stream() {
    let a = plan(&VendorScenario::tools(1, 2));
    let r = response(&a, &meta(false, true));
    let msg = &r["choices"][0]["message"];
    assert_eq!(msg["content"], "Let me use the tools for that.");
    assert_eq!(
        msg["tool_calls"][0]["function"]["arguments"],
        r#"{"query":"sim-0"}"#
    );
    assert_eq!(r["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(r["object"], "chat.completion");
    assert_eq!(r["vendor_extra"]["sim"], true);
    assert_eq!(r["usage"]["total_tokens"], 20 + a.usage.output);
    let r = response(&plan(&VendorScenario::thinking()), &meta(false, false));
    assert_eq!(
        r["choices"][0]["message"]["reasoning_content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        120
    );
}

#[test]
fn cached_tokens_rules() {
    let u = |input, read| Usage {
        input,
        cache_read: read,
        ..Usage::default()
    };
    assert_eq!(cached_tokens(&u(100, 0)), 0);
    assert_eq!(cached_tokens(&u(3000, 0)), 1408);
    assert_eq!(cached_tokens(&u(10, 50)), 50);
}
