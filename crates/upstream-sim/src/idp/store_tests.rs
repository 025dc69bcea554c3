use super::*;
use crate::idp::config::Signing;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

const ISSUER: &str = "http://127.0.0.1:9/idp";
const REDIRECT: &str = "http://gw.example/_ui/api/auth/google/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn store() -> IdpStore {
    IdpStore::new(Keys::load().unwrap())
}

fn params(store: &IdpStore) -> AuthorizeParams {
    AuthorizeParams {
        response_type: Some("code".into()),
        client_id: Some(store.config.client_id.clone()),
        redirect_uri: Some(REDIRECT.into()),
        scope: Some("openid email profile".into()),
        state: Some("st-1".into()),
        nonce: Some("no-1".into()),
        code_challenge: Some(s256(VERIFIER)),
        code_challenge_method: Some("S256".into()),
    }
}

fn code_of(outcome: AuthorizeOutcome) -> String {
    match outcome {
        AuthorizeOutcome::Redirect { params, .. } => {
            assert!(params.contains(&("state", "st-1".to_owned())));
            params
                .into_iter()
                .find(|(k, _)| *k == "code")
                .map(|(_, v)| v)
                .expect("a code")
        }
        other => panic!("{other:?}"),
    }
}

fn error_of(outcome: AuthorizeOutcome) -> String {
    match outcome {
        AuthorizeOutcome::Redirect { params, .. } => params
            .into_iter()
            .find(|(k, _)| *k == "error")
            .map(|(_, v)| v)
            .expect("an error"),
        other => panic!("{other:?}"),
    }
}

fn claims_of(id_token: &str) -> Value {
    let part = id_token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[test]
fn rfc7636_example_challenge() {
    assert_eq!(
        s256(VERIFIER),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
}

#[test]
fn code_flow_issues_a_token_for_the_configured_user() {
    let mut s = store();
    s.config.user = IdpUser::new("ann@corp.example", true);
    let p = params(&s);
    let client = s.config.client_id.clone();
    let code = code_of(s.authorize(p));
    let tokens = s
        .exchange(ISSUER, &client, &code, Some(REDIRECT), Some(VERIFIER))
        .unwrap();
    let c = claims_of(&tokens.id_token);
    assert_eq!(c["iss"], ISSUER);
    assert_eq!(c["aud"], client.as_str());
    assert_eq!(c["email"], "ann@corp.example");
    assert_eq!(c["nonce"], "no-1");
    assert_eq!(tokens.scope, "openid email profile");
    // Single use.
    let again = s
        .exchange(ISSUER, &client, &code, Some(REDIRECT), Some(VERIFIER))
        .unwrap_err();
    assert_eq!(again.error, "invalid_grant");
}

#[test]
fn authorize_refuses_unknown_clients_and_redirects_without_redirecting() {
    let mut s = store();
    let mut p = params(&s);
    p.client_id = Some("someone-else".into());
    assert!(matches!(s.authorize(p), AuthorizeOutcome::Refuse(_)));
    s.config.redirect_uris = vec!["http://registered.example/cb".into()];
    let p = params(&s);
    assert!(matches!(s.authorize(p), AuthorizeOutcome::Refuse(_)));
}

#[test]
fn authorize_errors_go_back_to_the_client() {
    let mut s = store();
    let mut p = params(&s);
    p.code_challenge_method = Some("plain".into());
    assert_eq!(error_of(s.authorize(p)), "invalid_request");
    let mut p = params(&s);
    p.code_challenge = None;
    assert_eq!(error_of(s.authorize(p)), "invalid_request");
    let mut p = params(&s);
    p.scope = Some("email".into());
    assert_eq!(error_of(s.authorize(p)), "invalid_scope");
    let mut p = params(&s);
    p.response_type = Some("token".into());
    assert_eq!(error_of(s.authorize(p)), "unsupported_response_type");
    s.config.authorize_error = Some(OAuthError::new("access_denied", "the user said no"));
    let p = params(&s);
    assert_eq!(error_of(s.authorize(p)), "access_denied");
}

#[test]
fn exchange_checks_verifier_redirect_and_expiry() {
    let mut s = store();
    let client = s.config.client_id.clone();
    let p = params(&s);
    let code = code_of(s.authorize(p));
    let other = "x".repeat(43);
    assert_eq!(
        s.exchange(ISSUER, &client, &code, Some(REDIRECT), Some(&other))
            .unwrap_err()
            .error,
        "invalid_grant"
    );
    let p = params(&s);
    let code = code_of(s.authorize(p));
    assert!(s
        .exchange(
            ISSUER,
            &client,
            &code,
            Some("http://elsewhere/cb"),
            Some(VERIFIER)
        )
        .is_err());
    s.config.code_ttl = std::time::Duration::ZERO;
    let p = params(&s);
    let code = code_of(s.authorize(p));
    std::thread::sleep(std::time::Duration::from_millis(5));
    let err = s
        .exchange(ISSUER, &client, &code, Some(REDIRECT), Some(VERIFIER))
        .unwrap_err();
    assert!(err.description.contains("expired"), "{err:?}");
}

#[test]
fn rotation_publishes_both_keys_and_signs_with_the_new_one() {
    let mut s = store();
    assert_eq!(s.jwks()["keys"].as_array().unwrap().len(), 1);
    s.rotate_keys();
    let keys = s.jwks();
    let kids: Vec<_> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kids, ["sim-key-2", "sim-key-1"]);
    s.config.tweaks.signing = Signing::Active;
    let t = s.sign_claims(serde_json::Map::new());
    let head = t.split('.').next().unwrap();
    let head: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(head).unwrap()).unwrap();
    assert_eq!(head["kid"], "sim-key-2");
}

#[test]
fn a_configured_token_error_wins() {
    let mut s = store();
    let client = s.config.client_id.clone();
    let p = params(&s);
    let code = code_of(s.authorize(p));
    s.config.token_error = Some(OAuthError::new("invalid_grant", "nope"));
    let err = s
        .exchange(ISSUER, &client, &code, Some(REDIRECT), Some(VERIFIER))
        .unwrap_err();
    assert_eq!(err.description, "nope");
}
