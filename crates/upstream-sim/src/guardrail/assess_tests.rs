use serde_json::json;

use super::*;

const BLOCKED: &str = "Sorry, the model cannot answer this question.";

fn lines(specs: &[&str]) -> Vec<GuardrailScenario> {
    specs.iter().map(|s| s.parse().unwrap()).collect()
}

fn texts(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| (*s).to_owned()).collect()
}

fn run(t: &[&str], specs: &[&str]) -> Value {
    answer(&texts(t), &lines(specs), BLOCKED, 12)
}

#[test]
fn nothing_found_is_none() {
    let a = run(&["hello there"], &[]);
    assert_eq!(a["action"], "NONE");
    assert_eq!(a["actionReason"], "No action.");
    assert_eq!(a["outputs"], json!([]));
    let metrics = &a["assessments"][0]["invocationMetrics"];
    assert_eq!(a["assessments"][0].as_object().unwrap().len(), 1);
    assert_eq!(metrics["guardrailProcessingLatency"], 12);
    assert_eq!(metrics["usage"], a["usage"]);
    assert_eq!(
        a["usage"],
        json!({"topicPolicyUnits": 1, "contentPolicyUnits": 1, "wordPolicyUnits": 1,
            "sensitiveInformationPolicyUnits": 1, "sensitiveInformationPolicyFreeUnits": 0,
            "contextualGroundingPolicyUnits": 0})
    );
    assert_eq!(
        a["guardrailCoverage"],
        json!({"textCharacters": {"guarded": 11, "total": 11}})
    );
    // A pii line that finds nothing, and a word not in the text.
    let a = run(
        &["no address"],
        &["pii", "pii match=x@y.z", "word match=zzz", "none"],
    );
    assert_eq!(a["action"], "NONE");
}

#[test]
fn each_blocking_policy() {
    let cases = [
        (
            "content type=VIOLENCE confidence=MEDIUM",
            "contentPolicy",
            json!({"filters": [{"type": "VIOLENCE", "confidence": "MEDIUM",
                "filterStrength": "HIGH", "action": "BLOCKED", "detected": true}]}),
        ),
        (
            "topic",
            "topicPolicy",
            json!({"topics": [{"name": "investment_advice", "type": "DENY",
                "action": "BLOCKED", "detected": true}]}),
        ),
        (
            "word match=badword",
            "wordPolicy",
            json!({"customWords": [{"match": "badword", "action": "BLOCKED", "detected": true}],
                "managedWordLists": []}),
        ),
        (
            "word match=badword managed=true",
            "wordPolicy",
            json!({"customWords": [], "managedWordLists": [{"match": "badword",
                "action": "BLOCKED", "detected": true, "type": "PROFANITY"}]}),
        ),
        (
            "regex name=ssn match=123-45-6789",
            "sensitiveInformationPolicy",
            json!({"piiEntities": [], "regexes": [{"name": "ssn", "match": "123-45-6789",
                "regex": "123-45-6789", "action": "BLOCKED", "detected": true}]}),
        ),
        (
            "pii type=EMAIL match=jane@example.com action=BLOCKED",
            "sensitiveInformationPolicy",
            json!({"piiEntities": [{"match": "jane@example.com", "type": "EMAIL",
                "action": "BLOCKED", "detected": true}], "regexes": []}),
        ),
    ];
    for (spec, policy, expected) in cases {
        let a = run(&["a badword, 123-45-6789 and jane@example.com"], &[spec]);
        assert_eq!(a["action"], "GUARDRAIL_INTERVENED", "{spec}");
        assert_eq!(a["actionReason"], "Guardrail blocked.");
        assert_eq!(a["outputs"], json!([{"text": BLOCKED}]), "{spec}");
        let assessment = a["assessments"][0].as_object().unwrap();
        assert_eq!(assessment[policy], expected, "{spec}");
        assert_eq!(assessment.len(), 2, "{spec}: only {policy} and the metrics");
    }
}

#[test]
fn masks_give_one_output_per_block() {
    let a = run(
        &[
            "mail jane@example.com.",
            "none here",
            "jane@example.com and again jane@example.com",
        ],
        &["pii match=jane@example.com"],
    );
    assert_eq!(a["action"], "GUARDRAIL_INTERVENED");
    assert_eq!(a["actionReason"], "Guardrail masked.");
    assert_eq!(
        a["outputs"],
        json!([{"text": "mail {EMAIL}."}, {"text": "none here"},
            {"text": "{EMAIL} and again {EMAIL}"}])
    );
    let pii = &a["assessments"][0]["sensitiveInformationPolicy"]["piiEntities"];
    assert_eq!(
        pii,
        &json!([{"match": "jane@example.com", "type": "EMAIL", "action": "ANONYMIZED",
            "detected": true}])
    );
    // Without `match`: every address found; a regex masks with its name.
    let a = run(
        &["to <a@b.io>, cc c.d@e.org; ssn 123-45-6789"],
        &["pii", "regex name=ssn match=123-45-6789 action=ANONYMIZED"],
    );
    assert_eq!(
        a["outputs"],
        json!([{"text": "to <{EMAIL}>, cc {EMAIL}; ssn {ssn}"}])
    );
    assert_eq!(
        a["assessments"][0]["sensitiveInformationPolicy"]["piiEntities"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_block_and_a_mask_combine_into_a_block() {
    let a = run(
        &["jane@example.com"],
        &["content type=HATE", "pii match=jane@example.com"],
    );
    assert_eq!(a["outputs"], json!([{"text": BLOCKED}]));
    let assessment = &a["assessments"][0];
    assert!(assessment.get("contentPolicy").is_some());
    assert!(assessment.get("sensitiveInformationPolicy").is_some());
}

#[test]
fn e_mail_scan() {
    let found = emails(&texts(&[
        "jane@example.com, bob@x.org. not@dot nor @a.b nor a@.b; match=jane@example.com",
    ]));
    assert_eq!(found, ["jane@example.com", "bob@x.org"]);
}

#[test]
fn units_count_started_thousands() {
    let long = "x".repeat(2001);
    let a = run(&[&long], &[]);
    assert_eq!(a["usage"]["contentPolicyUnits"], 3);
    assert_eq!(a["guardrailCoverage"]["textCharacters"]["total"], 2001);
}
