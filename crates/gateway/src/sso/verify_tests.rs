//! Tokens signed by the simulator's key code (the `rsa` crate) and verified
//! here (`jsonwebtoken`, ring): two implementations checking each other.

use serde_json::{json, Map, Value};
use upstream_sim::idp::keys::{compact_jws, Keys};

use super::*;
use crate::sso::jwks::parse_key_set;

const ISS: &str = "https://idp.example";
const CLIENT: &str = "client-1";
const NONCE: &str = "nonce-abc";

fn expectations() -> Expectations<'static> {
    Expectations {
        issuer: ISS,
        client_id: CLIENT,
        nonce: NONCE,
        leeway: Duration::from_secs(60),
        max_age: Duration::from_secs(600),
    }
}

fn good_claims() -> Map<String, Value> {
    let now = unix_now();
    json!({
        "iss": ISS, "sub": "1234567890", "aud": CLIENT,
        "iat": now, "exp": now + 3600, "nonce": NONCE,
        "email": "Ann@Corp.example", "email_verified": true, "name": "Ann",
    })
    .as_object()
    .cloned()
    .unwrap()
}

fn with(changes: Value) -> Map<String, Value> {
    let mut c = good_claims();
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            c.remove(k);
        } else {
            c.insert(k.clone(), v.clone());
        }
    }
    c
}

struct Fixture {
    keys: Keys,
    decoding: DecodingKey,
}

fn fixture() -> Fixture {
    let keys = Keys::load().unwrap();
    let set = json!({"keys": [keys.first.jwk()]}).to_string();
    let decoding = (*parse_key_set(set.as_bytes()).unwrap()["sim-key-1"]).clone();
    Fixture { keys, decoding }
}

fn sign(f: &Fixture, claims: Map<String, Value>) -> String {
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": "sim-key-1"});
    compact_jws(&header, &Value::Object(claims), Some(&f.keys.first))
}

fn check(f: &Fixture, claims: Map<String, Value>) -> Result<VerifiedIdentity, SsoError> {
    let token = sign(f, claims);
    read_header(&token)?;
    verify(&token, &f.decoding, &expectations())
}

fn problem(result: Result<VerifiedIdentity, SsoError>) -> TokenProblem {
    match result {
        Err(SsoError::InvalidToken(p)) => p,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[test]
fn a_good_token_gives_the_identity() {
    let f = fixture();
    let id = check(&f, good_claims()).unwrap();
    assert_eq!(id.subject, "1234567890");
    assert_eq!(id.email, "Ann@Corp.example");
    assert_eq!(id.email_domain(), "corp.example");
    assert_eq!(id.name.as_deref(), Some("Ann"));
}

#[test]
fn header_checks() {
    let f = fixture();
    let token = sign(&f, good_claims());
    assert_eq!(
        read_header(&token).unwrap().kid.as_deref(),
        Some("sim-key-1")
    );
    let none = compact_jws(&json!({"alg": "none"}), &Value::Object(good_claims()), None);
    assert!(matches!(
        read_header(&none),
        Err(SsoError::InvalidToken(TokenProblem::Algorithm))
    ));
    let hs = compact_jws(
        &json!({"alg": "HS256"}),
        &Value::Object(good_claims()),
        None,
    );
    assert!(matches!(
        read_header(&hs),
        Err(SsoError::InvalidToken(TokenProblem::Algorithm))
    ));
    for bad in ["", "a.b", "a.b.c.d", "!!!.b.c"] {
        assert!(
            matches!(
                read_header(bad),
                Err(SsoError::InvalidToken(TokenProblem::Malformed))
            ),
            "{bad}"
        );
    }
}

#[test]
fn forged_and_tampered_signatures_are_refused() {
    let f = fixture();
    let header = json!({"alg": "RS256", "kid": "sim-key-1"});
    let forged = compact_jws(&header, &Value::Object(good_claims()), Some(&f.keys.second));
    assert_eq!(
        problem(verify(&forged, &f.decoding, &expectations())),
        TokenProblem::Signature
    );
    let genuine = sign(&f, good_claims());
    let mut parts: Vec<&str> = genuine.split('.').collect();
    let other = URL_SAFE_NO_PAD
        .encode(Value::Object(with(json!({"email": "boss@corp.example"}))).to_string());
    parts[1] = &other;
    let tampered = parts.join(".");
    assert_eq!(
        problem(verify(&tampered, &f.decoding, &expectations())),
        TokenProblem::Signature
    );
}

#[test]
fn claim_checks() {
    let f = fixture();
    let now = unix_now();
    let cases = [
        (json!({"exp": now - 120}), TokenProblem::Expired),
        (json!({"iss": "https://evil.example"}), TokenProblem::Issuer),
        (json!({"aud": "someone-else"}), TokenProblem::Audience),
        (
            json!({"aud": ["someone-else", "x"]}),
            TokenProblem::Audience,
        ),
        (
            json!({"aud": [CLIENT, "other"]}),
            TokenProblem::AuthorizedParty,
        ),
        (json!({"azp": "other"}), TokenProblem::AuthorizedParty),
        (json!({"nonce": "replayed"}), TokenProblem::Nonce),
        (
            json!({"nonce": null}),
            TokenProblem::MissingClaim("nonce".into()),
        ),
        (json!({"iat": now + 600}), TokenProblem::IssuedAt),
        (json!({"iat": now - 3600}), TokenProblem::IssuedAt),
        (
            json!({"iat": null}),
            TokenProblem::MissingClaim("iat".into()),
        ),
        (
            json!({"exp": null}),
            TokenProblem::MissingClaim("exp".into()),
        ),
        (
            json!({"sub": null}),
            TokenProblem::MissingClaim("sub".into()),
        ),
    ];
    for (change, expected) in cases {
        let got = problem(check(&f, with(change.clone())));
        assert_eq!(got, expected, "{change}");
    }
}

#[test]
fn leeway_and_accepted_variants() {
    let f = fixture();
    let now = unix_now();
    // Expired 30 s ago, inside the 60 s leeway; issued 30 s ahead of our clock.
    assert!(check(&f, with(json!({"exp": now - 30, "iat": now + 30}))).is_ok());
    // Several audiences with azp = us.
    assert!(check(&f, with(json!({"aud": [CLIENT, "other"], "azp": CLIENT}))).is_ok());
    // email_verified as a string.
    assert!(check(&f, with(json!({"email_verified": "true"}))).is_ok());
}

#[test]
fn unverified_or_missing_email_is_refused() {
    let f = fixture();
    for change in [
        json!({"email_verified": false}),
        json!({"email_verified": null}),
        json!({"email_verified": "false"}),
        json!({"email": null}),
        json!({"email": "not-an-email"}),
    ] {
        assert!(
            matches!(
                check(&f, with(change.clone())),
                Err(SsoError::EmailNotVerified)
            ),
            "{change}"
        );
    }
}
