//! The verifier against the public AWS SigV4 test suite (credentials
//! `AKIDEXAMPLE`, region `us-east-1`, service `service`, 2015-08-30 12:36:00
//! UTC), then each refusal.

use super::*;

const AKID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// 20150830T123600Z.
const T: u64 = 1_440_938_160;
const HOST: (&str, &str) = ("Host", "example.amazonaws.com");

fn creds(session_token: Option<&str>) -> Credentials<'_> {
    Credentials {
        access_key_id: AKID,
        secret_access_key: SECRET,
        session_token,
    }
}

fn secret_of(akid: &str) -> Option<String> {
    (akid == AKID).then(|| SECRET.to_owned())
}

fn request<'a>(
    method: &'a str,
    path: &'a str,
    query: &'a str,
    headers: &'a [(&'a str, &'a str)],
    body: &'a [u8],
) -> SignableRequest<'a> {
    SignableRequest {
        method,
        path,
        query,
        headers,
        body,
    }
}

/// Sign `req` as the suite does and check the signature; then the verifier
/// must accept the signed request, at the same time and 4 minutes off.
fn suite_case(req: SignableRequest<'_>, token: Option<&str>, expected: &str) {
    let added = sign(&req, &creds(token), "us-east-1", "service", T);
    let auth = &added.last().unwrap().1;
    assert!(
        auth.ends_with(&format!("Signature={expected}")),
        "{} {}: {auth}",
        req.method,
        req.path
    );
    let mut headers: Vec<(&str, &str)> = req.headers.to_vec();
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case("x-amz-date"));
    headers.extend(added.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    let signed = SignableRequest {
        headers: &headers,
        ..req
    };
    for now in [T, T - 240, T + 240] {
        let verified = verify(&signed, "service", secret_of, now).unwrap();
        assert_eq!(verified.access_key_id, AKID);
        assert_eq!(
            verified.scope.path(),
            "20150830/us-east-1/service/aws4_request"
        );
    }
}

#[test]
fn post_vanilla() {
    let headers = [HOST, ("X-Amz-Date", "20150830T123600Z")];
    let req = request("POST", "/", "", &headers, b"");
    let signed = ["host".to_owned(), "x-amz-date".to_owned()];
    assert_eq!(
        canonical_request(&req, &signed).unwrap(),
        "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n\
         host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    suite_case(
        req,
        None,
        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
    );
    let added = sign(&req, &creds(None), "us-east-1", "service", T);
    assert_eq!(
        added.last().unwrap().1,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
         SignedHeaders=host;x-amz-date, \
         Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    );
}

#[test]
fn post_x_www_form_urlencoded() {
    let headers = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        HOST,
        ("Content-Length", "13"),
        ("X-Amz-Date", "20150830T123600Z"),
        (
            "x-amz-content-sha256",
            "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
        ),
    ];
    let req = request("POST", "/", "", &headers, b"Param1=value1");
    let scope = Scope::new("20150830", "us-east-1", "service");
    let signed: Vec<String> = "content-length;content-type;host;x-amz-content-sha256;x-amz-date"
        .split(';')
        .map(str::to_owned)
        .collect();
    let sts = string_to_sign(
        "20150830T123600Z",
        &scope,
        &canonical_request(&req, &signed).unwrap(),
    );
    assert_eq!(
        sts,
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\
         b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb"
    );
    assert_eq!(
        signature(&signing_key(SECRET, &scope), &sts),
        "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"
    );
    suite_case(
        req,
        None,
        "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b",
    );
}

#[test]
fn more_suite_vectors() {
    let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
    suite_case(
        request("GET", "/", "", &[HOST], b""),
        Some(token),
        "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8",
    );
    let trim = [
        HOST,
        ("My-Header1", " value1"),
        ("My-Header2", " \"a   b   c\""),
    ];
    suite_case(
        request("GET", "/", "", &trim, b""),
        None,
        "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
    );
    let duplicate = [
        HOST,
        ("My-Header1", "value2"),
        ("My-Header1", "value2"),
        ("My-Header1", "value1"),
    ];
    suite_case(
        request("GET", "/", "", &duplicate, b""),
        None,
        "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
    );
    let query = "Param-3=Value3&Param=Value2&%E1%88%B4=Value1";
    suite_case(
        request("GET", "/", query, &[HOST], b""),
        None,
        "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac",
    );
    for (path, sig) in [
        (
            "//example//",
            "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84",
        ),
        (
            "/example1/example2/../..",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
        ),
        (
            "/ሴ",
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
        ),
    ] {
        suite_case(request("GET", path, "", &[HOST], b""), None, sig);
    }
}

#[test]
fn paths_are_encoded_twice() {
    // The suite's `double-url-encode` and `double-encode-path` vectors.
    assert_eq!(
        canonical_uri(
            "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-west-2%3A892717189312%3Afunction%3Amy-rusty-fun/invocations"
        ),
        "/2015-03-31/functions/arn%253Aaws%253Alambda%253Aus-west-2%253A892717189312%253Afunction%253Amy-rusty-fun/invocations"
    );
    assert_eq!(
        canonical_uri("/test/@connections/JBDvjfGEIAMCERw%3D"),
        "/test/%40connections/JBDvjfGEIAMCERw%253D"
    );
    // A guardrail ARN as the gateway sends it.
    assert_eq!(
        canonical_uri("/guardrail/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aguardrail%2Fab12/version/DRAFT/apply"),
        "/guardrail/arn%253Aaws%253Abedrock%253Aus-east-1%253A123456789012%253Aguardrail%252Fab12/version/DRAFT/apply"
    );
    assert_eq!(canonical_uri(""), "/");
    assert_eq!(canonical_uri("/a/./b/../c/"), "/a/c/");
    assert_eq!(canonical_uri("/a/b/.."), "/a/");
}

/// A request signed for `bedrock` in `eu-west-1` at `T`.
fn bedrock_request(extra: &[(&str, &str)], token: Option<&str>) -> Vec<(String, String)> {
    let mut headers = vec![HOST, ("content-type", "application/json")];
    headers.extend_from_slice(extra);
    let req = request("POST", "/guardrail/g1/version/1/apply", "", &headers, b"{}");
    let mut all: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    all.extend(sign(&req, &creds(token), "eu-west-1", "bedrock", T));
    all
}

fn check(headers: &[(String, String)], now: u64) -> Result<Authorization, SigError> {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let req = request("POST", "/guardrail/g1/version/1/apply", "", &headers, b"{}");
    verify(&req, "bedrock", secret_of, now)
}

fn set(headers: &mut [(String, String)], name: &str, value: &str) {
    let h = headers.iter_mut().find(|(n, _)| n == name).unwrap();
    h.1 = value.to_owned();
}

fn replace_in(headers: &mut [(String, String)], name: &str, from: &str, to: &str) {
    let h = headers.iter_mut().find(|(n, _)| n == name).unwrap();
    h.1 = h.1.replace(from, to);
}

#[test]
fn a_good_signature_and_a_session_token() {
    assert!(check(&bedrock_request(&[], None), T).is_ok());
    let with_token = bedrock_request(&[], Some("FwoGZXIvYXdzEJr//token"));
    let verified = check(&with_token, T).unwrap();
    assert!(verified
        .signed_headers
        .contains(&"x-amz-security-token".to_owned()));
}

#[test]
fn a_changed_request_is_a_mismatch() {
    let mut headers = bedrock_request(&[], None);
    set(&mut headers, "content-type", "text/plain");
    let err = check(&headers, T).unwrap_err();
    assert_eq!(err.error_type(), "InvalidSignatureException");
    let SigError::Mismatch {
        canonical_request, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(canonical_request.contains("content-type:text/plain"));
    assert!(err
        .message()
        .contains("does not match the signature you provided"));
    let mut headers = bedrock_request(&[], None);
    replace_in(&mut headers, "authorization", "Signature=", "Signature=00");
    assert!(matches!(check(&headers, T), Err(SigError::Mismatch { .. })));
    let mut headers = bedrock_request(&[], None);
    replace_in(&mut headers, "authorization", "Signature=", "Signature=zz");
    assert!(matches!(check(&headers, T), Err(SigError::Mismatch { .. })));
}

#[test]
fn unknown_keys_and_stale_dates() {
    let mut headers = bedrock_request(&[], None);
    replace_in(&mut headers, "authorization", AKID, "AKIDOTHER");
    let err = check(&headers, T).unwrap_err();
    assert_eq!(err, SigError::UnknownKey);
    assert_eq!(err.error_type(), "UnrecognizedClientException");
    let headers = bedrock_request(&[], None);
    let late = check(&headers, T + 301).unwrap_err();
    assert_eq!(
        late.message(),
        "Signature expired: 20150830T123600Z is now earlier than 20150830T123601Z \
         (20150830T124101Z - 5 min.)"
    );
    let early = check(&headers, T - 301).unwrap_err();
    assert!(early.message().starts_with("Signature not yet current"));
    assert_eq!(early.error_type(), "InvalidSignatureException");
}

#[test]
fn scope_and_signed_header_checks() {
    let cases: [(&str, &str, &str); 4] = [
        ("/bedrock/", "/s3/", "correct service: 'bedrock'"),
        ("/eu-west-1/", "/Europe/", "a valid region"),
        ("/20150830/", "/20150831/", "Date in Credential scope"),
        ("aws4_request", "aws5_request", "valid terminator"),
    ];
    for (from, to, says) in cases {
        let mut headers = bedrock_request(&[], None);
        replace_in(&mut headers, "authorization", from, to);
        let err = check(&headers, T).unwrap_err();
        assert!(err.message().contains(says), "{to}: {err:?}");
        assert_eq!(err.error_type(), "InvalidSignatureException");
    }
    let mut headers = bedrock_request(&[], None);
    headers.push(("x-amz-security-token".into(), "unsigned".into()));
    let err = check(&headers, T).unwrap_err();
    assert!(err.message().contains("'x-amz-security-token' must be"));
    let mut headers = bedrock_request(&[], None);
    replace_in(&mut headers, "authorization", "host;", "");
    assert!(check(&headers, T)
        .unwrap_err()
        .message()
        .contains("'host' must be"));
    let mut headers = bedrock_request(&[("x-extra", "1")], None);
    headers.retain(|(n, _)| n != "x-extra");
    assert!(check(&headers, T)
        .unwrap_err()
        .message()
        .contains("'x-extra' is signed but is not in the request"));
}

#[test]
fn missing_and_malformed_headers() {
    let mut headers = bedrock_request(&[], None);
    headers.retain(|(n, _)| n != "authorization");
    let err = check(&headers, T).unwrap_err();
    assert_eq!(err, SigError::Missing);
    assert_eq!(err.error_type(), "MissingAuthenticationTokenException");
    let mut headers = bedrock_request(&[], None);
    headers.retain(|(n, _)| n != "x-amz-date");
    assert!(check(&headers, T)
        .unwrap_err()
        .message()
        .contains("'X-Amz-Date'"));
    let mut headers = bedrock_request(&[], None);
    set(&mut headers, "x-amz-date", "2015-08-30T12:36:00Z");
    assert!(check(&headers, T)
        .unwrap_err()
        .message()
        .contains("ISO-8601 'basic format'"));
    for bad in [
        "Bearer abc",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/eu-west-1/bedrock/aws4_request",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/eu-west-1/bedrock, SignedHeaders=host, Signature=00",
    ] {
        let err = parse_authorization(bad).unwrap_err();
        assert_eq!(err.error_type(), "IncompleteSignatureException", "{bad}");
    }
    let err = parse_authorization("AWS4-HMAC-SHA256 Credential=a/b/c/d/e").unwrap_err();
    assert!(err.message().contains("requires 'SignedHeaders' parameter"));
    assert!(err.message().contains("requires 'Signature' parameter"));
    assert!(!err.message().contains("requires 'Credential'"));
}

#[test]
fn regions() {
    for ok in [
        "us-east-1",
        "us-gov-west-1",
        "ap-southeast-2",
        "eu-central-1",
    ] {
        assert!(valid_region(ok), "{ok}");
    }
    for bad in [
        "",
        "us",
        "us-east",
        "US-east-1",
        "use-east-1",
        "us--1",
        "us-east-x",
    ] {
        assert!(!valid_region(bad), "{bad}");
    }
}
