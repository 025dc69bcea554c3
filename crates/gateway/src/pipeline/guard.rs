//! Guardrails around one chat request (spec 4.4 item 4): the input check
//! before any provider sees the request, the output check of a collected
//! answer, and the `guardrail_warning` a redacted answer carries.
//!
//! Input: every text the client sent is checked by the profiles of the
//! rules that match the request (and its sample); a block is 403
//! `guardrail_blocked` with no upstream call, a redaction rewrites the
//! texts and the request is converted (a native relay would forward the
//! client's bytes). Output: a non-streaming answer is collected, checked
//! and written masked or refused; streams are checked on input only.

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use translate::ChatResponse;

use crate::error::GatewayError;
use crate::guardrails::expression::RequestFacts;
use crate::guardrails::service::{Source, Violation};
use crate::guardrails::{texts, AnswerGuard, CallSettings, GuardrailWarning, Outcome};
use crate::providers::ChatCall;
use crate::state::AppState;
use crate::turn::Turn;

/// The header of an answer whose text a guardrail masked.
pub(crate) static X_GUARDRAIL_ACTION: HeaderName = HeaderName::from_static("x-guardrail-action");

/// Check the request's input (guardrails are on and have rules); what its
/// answer still needs, when anything.
pub(crate) async fn check_input(
    app: &AppState,
    turn: &Turn,
    call: &mut ChatCall,
) -> Result<Option<AnswerGuard>, GatewayError> {
    let engine = app.guardrails();
    let (plan, settings, outcome) = {
        let req = &call.request;
        let sent = texts::request_texts(req);
        let plan = engine.plan(&RequestFacts {
            model: &req.model,
            api_format: turn.reply.format.as_str(),
            message_count: req.messages.len(),
            has_tools: !req.tools.is_empty(),
            is_streaming: req.stream,
            content_length: texts::content_length(&sent),
        });
        if plan.is_empty() {
            return Ok(None);
        }
        let settings = CallSettings {
            http: app.http().clone(),
            endpoint: app.config().upstream.guardrail_endpoint.clone(),
            timeout: turn.rt.guardrail_timeout,
        };
        let outcome = engine
            .check(&settings, &plan.input, Source::Input, &sent)
            .await;
        (plan, settings, outcome)
    };
    let input_redacted = match outcome {
        Outcome::Pass => Vec::new(),
        Outcome::Blocked(violations) => return Err(blocked("input", violations)),
        Outcome::Redacted { texts, violations } => {
            tracing::info!(
                violations = violations.len(),
                "guardrail masked the request's text"
            );
            texts::replace_request_texts(&mut call.request, texts);
            call.relay_natively = false;
            violations
        }
    };
    let output = if call.request.stream {
        Vec::new()
    } else {
        plan.output
    };
    if !output.is_empty() {
        // The answer must be read to be checked.
        call.relay_natively = false;
    } else if input_redacted.is_empty() {
        return Ok(None);
    }
    Ok(Some(AnswerGuard {
        engine: engine.clone(),
        settings,
        output,
        input_redacted,
    }))
}

/// Check a collected answer; the warning it carries when a guardrail
/// masked the input or the answer.
pub(crate) async fn check_output(
    guard: &AnswerGuard,
    answer: &mut ChatResponse,
) -> Result<Option<GuardrailWarning>, GatewayError> {
    let mut masked = guard.input_redacted.clone();
    let sent = texts::answer_texts(&answer.content);
    let outcome = guard
        .engine
        .check(&guard.settings, &guard.output, Source::Output, &sent)
        .await;
    match outcome {
        Outcome::Pass => {}
        Outcome::Blocked(violations) => return Err(blocked("output", violations)),
        Outcome::Redacted { texts, violations } => {
            texts::replace_answer_texts(&mut answer.content, texts);
            masked.extend(violations);
        }
    }
    Ok((!masked.is_empty()).then(|| GuardrailWarning::new(masked)))
}

/// A JSON answer object with the `guardrail_warning` member added.
pub(crate) fn with_warning(body: Bytes, warning: &GuardrailWarning) -> Bytes {
    let Ok(member) = serde_json::to_vec(warning) else {
        return body;
    };
    // `body` is one serialized JSON object: the member goes before its `}`.
    let Some(end) = body.iter().rposition(|&b| b == b'}') else {
        return body;
    };
    let mut out = Vec::with_capacity(body.len() + member.len() + 24);
    out.extend_from_slice(&body[..end]);
    if body[..end].iter().rev().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(b"\"guardrail_warning\":");
    out.extend_from_slice(&member);
    out.extend_from_slice(&body[end..]);
    Bytes::from(out)
}

/// Mark a response whose text a guardrail masked.
pub(crate) fn mark_redacted(response: &mut Response) {
    response.headers_mut().insert(
        X_GUARDRAIL_ACTION.clone(),
        HeaderValue::from_static("redacted"),
    );
}

fn blocked(stage: &'static str, violations: Vec<Violation>) -> GatewayError {
    tracing::info!(
        stage,
        violations = violations.len(),
        "guardrail blocked the request"
    );
    GatewayError::GuardrailBlocked {
        stage,
        violations: serde_json::to_value(violations).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guardrails::service::ViolationKind;

    #[test]
    fn the_warning_joins_the_answer_object() {
        let warning = GuardrailWarning::new(vec![Violation {
            kind: ViolationKind::Pii,
            name: "EMAIL".into(),
            action: "ANONYMIZED".into(),
            detail: "sensitive information".into(),
        }]);
        let body = with_warning(Bytes::from_static(br#"{"id":"x","choices":[]}"#), &warning);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["id"], "x");
        assert_eq!(v["guardrail_warning"]["type"], "guardrail_warning");
        assert_eq!(v["guardrail_warning"]["violations"][0]["kind"], "pii");
        let empty = with_warning(Bytes::from_static(b"{}"), &warning);
        assert!(serde_json::from_slice::<serde_json::Value>(&empty).is_ok());
    }
}
