//! The guardrail service's SigV4 check: a good signature (with a plain id,
//! a percent-encoded ARN, a session token), and each refusal as the service
//! words it: a wrong signature, an unknown key, a stale date, a wrong scope,
//! an unsigned session token, no signature at all; then accept-any.

use upstream_sim::{DEFAULT_GUARDRAIL_ACCESS_KEY_ID, DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY};

use crate::common::*;
use crate::guardrail_support::*;

#[tokio::test]
async fn default_credentials_and_an_arn_identifier() {
    let sim = sim().await;
    assert_eq!(
        sim.guardrail_credentials(),
        (
            DEFAULT_GUARDRAIL_ACCESS_KEY_ID.to_owned(),
            DEFAULT_GUARDRAIL_SECRET_ACCESS_KEY.to_owned()
        )
    );
    assert!(sim.guardrail_url().ends_with("/guardrail-service"));
    let signer = Signer::of(&sim);
    let b = body("INPUT", &["sim: guardrail topic"]);
    let resp = apply_with(&sim, ARN_SEGMENT, "12", &b, Some(&signer), &[]).await;
    assert_eq!(resp.status(), 200);
    let a: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(a["action"], "GUARDRAIL_INTERVENED");
    let path = &sim.requests()[0].path;
    assert!(path.contains(ARN_SEGMENT), "{path}");
    // The same ARN sent undecoded is not one path segment: no such operation.
    let resp = apply_with(&sim, ARN, "12", &b, Some(&signer), &[]).await;
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn session_tokens_must_be_signed() {
    let sim = sim().await;
    let mut signer = Signer::of(&sim);
    signer.session_token = Some("IQoJb3JpZ2luX2VjEtemporary".into());
    let b = body("OUTPUT", &["fine"]);
    let resp = apply_with(&sim, "g1", "1", &b, Some(&signer), &[]).await;
    assert_eq!(resp.status(), 200);
    let plain = Signer::of(&sim);
    let token = [("x-amz-security-token", "IQoJunsigned")];
    let resp = apply_with(&sim, "g1", "1", &b, Some(&plain), &token).await;
    let (status, kind, message) = refusal(resp).await;
    assert_eq!((status, kind.as_str()), (403, "InvalidSignatureException"));
    assert!(message.contains("x-amz-security-token"), "{message}");
}

#[tokio::test]
async fn a_wrong_signature_is_refused() {
    let sim = sim().await;
    let mut signer = Signer::of(&sim);
    signer.secret = "not-the-secret".into();
    let resp = apply_with(&sim, "g1", "1", &body("INPUT", &["a"]), Some(&signer), &[]).await;
    let (status, kind, message) = refusal(resp).await;
    assert_eq!((status, kind.as_str()), (403, "InvalidSignatureException"));
    assert!(message.starts_with("The request signature we calculated does not match"));
    // What the service signed: the ARN encoded a second time.
    let signer = Signer::of(&sim);
    let extra = [("content-type", "text/plain")];
    let resp = apply_with(
        &sim,
        ARN_SEGMENT,
        "1",
        &body("INPUT", &["a"]),
        Some(&signer),
        &extra,
    )
    .await;
    let (status, _, message) = refusal(resp).await;
    assert_eq!(status, 403);
    assert!(message.contains("arn%253Aaws%253Abedrock"), "{message}");
    assert_eq!(sim.guardrail_calls(), (2, 0));
    assert_eq!(sim.guardrail_stats().errors, 2);
}

#[tokio::test]
async fn unknown_keys_stale_dates_and_bad_scopes_are_refused() {
    let sim = sim().await;
    let b = body("INPUT", &["a"]);
    let mut unknown = Signer::of(&sim);
    unknown.access_key_id = "AKIDNOBODY".into();
    let resp = apply_with(&sim, "g1", "1", &b, Some(&unknown), &[]).await;
    let (status, kind, _) = refusal(resp).await;
    assert_eq!(
        (status, kind.as_str()),
        (403, "UnrecognizedClientException")
    );

    let mut stale = Signer::of(&sim);
    stale.at -= 6 * 60;
    let resp = apply_with(&sim, "g1", "1", &b, Some(&stale), &[]).await;
    let (status, kind, message) = refusal(resp).await;
    assert_eq!((status, kind.as_str()), (403, "InvalidSignatureException"));
    assert!(message.starts_with("Signature expired"), "{message}");

    let mut other_service = Signer::of(&sim);
    other_service.service = "bedrock-runtime".into();
    let resp = apply_with(&sim, "g1", "1", &b, Some(&other_service), &[]).await;
    let (status, _, message) = refusal(resp).await;
    assert_eq!(status, 403);
    assert!(message.contains("correct service: 'bedrock'"), "{message}");

    let mut other_region = Signer::of(&sim);
    other_region.region = "eu-central-1".into();
    let resp = apply_with(&sim, "g1", "1", &b, Some(&other_region), &[]).await;
    assert_eq!(resp.status(), 200, "any well-formed region is accepted");
    other_region.region = "mars".into();
    let resp = apply_with(&sim, "g1", "1", &b, Some(&other_region), &[]).await;
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn unsigned_calls_are_refused_unless_any_is_accepted() {
    let sim = sim().await;
    let b = body("INPUT", &["a"]);
    let resp = apply_with(&sim, "g1", "1", &b, None, &[]).await;
    let (status, kind, message) = refusal(resp).await;
    assert_eq!(
        (status, kind.as_str()),
        (403, "MissingAuthenticationTokenException")
    );
    assert_eq!(message, "Missing Authentication Token");
    let garbled = [("authorization", "AWS4-HMAC-SHA256 Credential=x")];
    let resp = apply_with(&sim, "g1", "1", &b, None, &garbled).await;
    let (status, kind, _) = refusal(resp).await;
    assert_eq!(
        (status, kind.as_str()),
        (403, "IncompleteSignatureException")
    );

    sim.update_guardrail(|c| c.accept_any_signature = true);
    let mut wrong = Signer::of(&sim);
    wrong.secret = "whatever".into();
    wrong.access_key_id = "AKIDANY".into();
    let resp = apply_with(&sim, "g1", "1", &b, Some(&wrong), &[]).await;
    assert_eq!(resp.status(), 200);
    // Still a signed shape: no Authorization at all is refused.
    let resp = apply_with(&sim, "g1", "1", &b, None, &[]).await;
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn another_key_pair_from_the_config() {
    let mut config = upstream_sim::SimConfig::default();
    config
        .guardrail
        .credentials
        .push(("AKIDSECOND".into(), "second-secret".into()));
    let sim = sim_with(config).await;
    let mut signer = Signer::of(&sim);
    signer.access_key_id = "AKIDSECOND".into();
    signer.secret = "second-secret".into();
    let resp = apply_with(&sim, "g1", "1", &body("INPUT", &["a"]), Some(&signer), &[]).await;
    assert_eq!(resp.status(), 200);
}
