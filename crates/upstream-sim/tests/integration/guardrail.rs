//! The guardrail service's answers: `NONE`, each kind of finding, masking
//! with one output per block, directives combined and filtered by source,
//! `times`, a slow answer, and the call counts.

use std::time::{Duration, Instant};

use serde_json::json;
use upstream_sim::{Service, DEFAULT_BLOCKED_MESSAGE};

use crate::common::*;
use crate::guardrail_support::*;

#[tokio::test]
async fn no_directive_is_action_none() {
    let sim = sim().await;
    let a = assess(&sim, &body("INPUT", &["What is the capital of France?"])).await;
    assert_eq!(a["action"], "NONE");
    assert_eq!(a["outputs"], json!([]));
    let assessments = a["assessments"].as_array().unwrap();
    assert_eq!(assessments.len(), 1);
    assert_eq!(
        assessments[0]["invocationMetrics"]["guardrailCoverage"]["textCharacters"],
        json!({"guarded": 30, "total": 30})
    );
    assert_eq!(a["usage"]["topicPolicyUnits"], 1);
    assert_eq!(sim.guardrail_calls(), (1, 0));
    let recorded = sim.requests();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].service, Service::Guardrail);
    assert_eq!(
        recorded[0].path,
        "/guardrail-service/guardrail/g1/version/DRAFT/apply"
    );
}

#[tokio::test]
async fn each_kind_of_violation_blocks() {
    let sim = sim().await;
    let cases = [
        (
            "content type=INSULTS",
            "contentPolicy",
            "filters",
            "type",
            "INSULTS",
        ),
        (
            "topic name=investment_advice",
            "topicPolicy",
            "topics",
            "name",
            "investment_advice",
        ),
        (
            "word match=badword",
            "wordPolicy",
            "customWords",
            "match",
            "badword",
        ),
        (
            "word match=badword managed=true",
            "wordPolicy",
            "managedWordLists",
            "type",
            "PROFANITY",
        ),
        (
            "pii type=EMAIL match=jane@example.com action=BLOCKED",
            "sensitiveInformationPolicy",
            "piiEntities",
            "match",
            "jane@example.com",
        ),
        (
            "regex name=ssn match=123-45-6789",
            "sensitiveInformationPolicy",
            "regexes",
            "name",
            "ssn",
        ),
    ];
    for (spec, policy, list, field, value) in cases {
        let text = format!("sim: guardrail {spec}\nmy ssn is 123-45-6789, mail jane@example.com");
        let a = assess(&sim, &body("INPUT", &[&text])).await;
        assert_eq!(a["action"], "GUARDRAIL_INTERVENED", "{spec}");
        assert_eq!(a["actionReason"], "Guardrail blocked.", "{spec}");
        assert_eq!(
            a["outputs"],
            json!([{"text": DEFAULT_BLOCKED_MESSAGE}]),
            "{spec}"
        );
        let found = &a["assessments"][0][policy][list][0];
        assert_eq!(found[field], value, "{spec}");
        assert_eq!(found["detected"], true, "{spec}");
        assert!(a["assessments"][0]["invocationMetrics"].is_object());
    }
    assert_eq!(sim.guardrail_stats().errors, 0);
}

#[tokio::test]
async fn pii_masking_answers_one_output_per_block() {
    let sim = sim().await;
    let texts = [
        "sim: guardrail pii type=EMAIL match=jane@example.com",
        "write to jane@example.com today",
        "nothing to mask",
    ];
    let a = assess(&sim, &body("OUTPUT", &texts)).await;
    assert_eq!(a["action"], "GUARDRAIL_INTERVENED");
    assert_eq!(
        a["outputs"],
        json!([
            {"text": "sim: guardrail pii type=EMAIL match={EMAIL}"},
            {"text": "write to {EMAIL} today"},
            {"text": "nothing to mask"}
        ])
    );
    let pii = &a["assessments"][0]["sensitiveInformationPolicy"]["piiEntities"];
    assert_eq!(pii[0]["action"], "ANONYMIZED");
    // Without `match`, e-mail addresses are found by a scan.
    let a = assess(
        &sim,
        &body(
            "INPUT",
            &["sim: guardrail pii\nask bob@corp.example or amy@x.io."],
        ),
    )
    .await;
    assert_eq!(
        a["outputs"],
        json!([{"text": "sim: guardrail pii\nask {EMAIL} or {EMAIL}."}])
    );
}

#[tokio::test]
async fn source_filters_directives() {
    let sim = sim().await;
    // What the gateway checks: the user's message (INPUT), then the echoed
    // answer (OUTPUT), which repeats the same lines.
    let message = "sim: echo\nsim: guardrail source=OUTPUT pii match=jane@example.com\n\
                   my address is jane@example.com";
    let input = assess(&sim, &body("INPUT", &[message])).await;
    assert_eq!(input["action"], "NONE");
    let output = assess(&sim, &body("OUTPUT", &[message])).await;
    assert_eq!(output["action"], "GUARDRAIL_INTERVENED");
    let masked = output["outputs"][0]["text"].as_str().unwrap();
    assert!(masked.ends_with("my address is {EMAIL}"), "{masked}");
    assert!(!masked.contains("jane@example.com"));
    assert_eq!(sim.guardrail_calls(), (1, 1));
    sim.clear();
    assert_eq!(sim.guardrail_calls(), (0, 0));
}

#[tokio::test]
async fn directives_combine_and_a_block_wins() {
    let sim = sim().await;
    let text = "sim: guardrail content type=HATE confidence=MEDIUM\n\
                sim: guardrail pii match=jane@example.com\njane@example.com";
    let a = assess(&sim, &body("INPUT", &[text])).await;
    assert_eq!(a["outputs"], json!([{"text": DEFAULT_BLOCKED_MESSAGE}]));
    let assessment = &a["assessments"][0];
    assert_eq!(
        assessment["contentPolicy"]["filters"][0]["confidence"],
        "MEDIUM"
    );
    assert_eq!(
        assessment["sensitiveInformationPolicy"]["piiEntities"][0]["match"],
        "jane@example.com"
    );
    // The guardrail's own blocked message per source.
    sim.update_guardrail(|c| c.blocked_output_message = "Blocked answer.".into());
    let a = assess(&sim, &body("OUTPUT", &["sim: guardrail topic"])).await;
    assert_eq!(a["outputs"], json!([{"text": "Blocked answer."}]));
}

#[tokio::test]
async fn times_and_a_slow_answer() {
    let sim = sim().await;
    let text = "sim: guardrail status code=503 times=1\nsim: guardrail none header_delay=300ms";
    let resp = apply(&sim, &body("INPUT", &[text])).await;
    let (status, kind, _) = refusal(resp).await;
    assert_eq!(
        (status, kind.as_str()),
        (503, "ServiceUnavailableException")
    );
    let started = Instant::now();
    let a = assess(&sim, &body("INPUT", &[text])).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(a["action"], "NONE");
    assert!(
        a["assessments"][0]["invocationMetrics"]["guardrailProcessingLatency"]
            .as_u64()
            .unwrap()
            >= 300
    );
    sim.reset_scenarios();
    assert_eq!(apply(&sim, &body("INPUT", &[text])).await.status(), 503);
    // A body that stalls after the headers.
    let started = Instant::now();
    let resp = apply(&sim, &body("OUTPUT", &["sim: guardrail delay=200ms"])).await;
    assert_eq!(resp.status(), 200);
    let _: serde_json::Value = resp.json().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn error_statuses() {
    let sim = sim().await;
    for (code, kind) in [
        (403, "AccessDeniedException"),
        (404, "ResourceNotFoundException"),
        (429, "ThrottlingException"),
        (500, "InternalServerException"),
        (503, "ServiceUnavailableException"),
    ] {
        let text = format!("sim: guardrail status code={code}");
        let resp = apply(&sim, &body("INPUT", &[&text])).await;
        assert!(resp.headers().contains_key("x-amzn-requestid"));
        let (status, error_type, message) = refusal(resp).await;
        assert_eq!((status, error_type.as_str()), (code, kind));
        assert!(!message.is_empty());
    }
    assert_eq!(sim.guardrail_stats().errors, 5);
    let bad = apply(&sim, &body("INPUT", &["sim: guardrail frobnicate"])).await;
    let (status, kind, message) = refusal(bad).await;
    assert_eq!((status, kind.as_str()), (400, "ValidationException"));
    assert!(message.contains("unknown guardrail scenario"), "{message}");
}

#[tokio::test]
async fn requests_are_validated() {
    let sim = sim().await;
    let cases = [
        (
            json!({"source": "BOTH", "content": [{"text": {"text": "a"}}]}),
            "'source'",
        ),
        (json!({"source": "INPUT", "content": []}), "'content'"),
        (
            json!({"source": "INPUT", "content": [{"image": {}}]}),
            "content.1.member.text",
        ),
    ];
    for (b, says) in cases {
        let (status, kind, message) = refusal(apply(&sim, &b).await).await;
        assert_eq!((status, kind.as_str()), (400, "ValidationException"));
        assert!(message.contains(says), "{message}");
    }
    let signer = Signer::of(&sim);
    let resp = apply_with(&sim, "g1", "0", &body("INPUT", &["a"]), Some(&signer), &[]).await;
    let (status, _, message) = refusal(resp).await;
    assert_eq!(status, 400);
    assert!(message.contains("'guardrailVersion'"), "{message}");
    let resp = apply_with(&sim, "G-1", "1", &body("INPUT", &["a"]), Some(&signer), &[]).await;
    assert_eq!(refusal(resp).await.0, 400);
}
