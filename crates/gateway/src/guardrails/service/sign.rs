//! The address of an `ApplyGuardrail` call and its SigV4 signature.
//!
//! Every part of the URL that comes from a profile is checked before it
//! becomes part of one (the region is a host name label; an unchecked one
//! would let a profile point the gateway's signed request anywhere), and
//! the guardrail identifier, which may be an ARN, is percent-encoded as a
//! path segment (the reference did not, 10.6). Signing is the `aws-sigv4`
//! crate's, with its defaults for a non-S3 service: the path encoded again
//! in the canonical request, the session token signed when there is one.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;

/// The SigV4 service name of the guardrail runtime.
pub(super) const SERVICE: &str = "bedrock";

/// A region as AWS names them: `us-east-1`, `us-gov-west-1`, `ap-southeast-2`.
pub fn valid_region(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    region.len() <= 32
        && parts.len() >= 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && region.bytes().last().is_some_and(|b| b.is_ascii_digit())
        && parts[0].bytes().all(|b| b.is_ascii_lowercase())
}

/// A guardrail identifier: an id (`[a-z0-9]+`) or its ARN
/// (`arn:<partition>:bedrock:<region>:<account>:guardrail/<id>`).
pub fn valid_guardrail_id(id: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    if plain(id) {
        return true;
    }
    let parts: Vec<&str> = id.split(':').collect();
    matches!(
        parts.as_slice(),
        ["arn", partition, "bedrock", region, account, resource]
            if partition.starts_with("aws")
                && partition.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                && valid_region(region)
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit())
                && resource.strip_prefix("guardrail/").is_some_and(plain)
    )
}

/// A guardrail version: `DRAFT` or 1 to 99999999.
pub fn valid_version(version: &str) -> bool {
    version == "DRAFT"
        || (version.len() <= 8
            && version.bytes().all(|b| b.is_ascii_digit())
            && version.parse::<u32>().is_ok_and(|n| n >= 1))
}

/// The apply URL: the service's regional endpoint, or `endpoint` (tests,
/// private endpoints) with the same path.
pub(super) fn apply_url(endpoint: Option<&str>, region: &str, id: &str, version: &str) -> String {
    let base = match endpoint {
        Some(e) => e.trim_end_matches('/').to_owned(),
        None => format!("https://bedrock-runtime.{region}.amazonaws.com"),
    };
    format!(
        "{base}/guardrail/{}/version/{version}/apply",
        encode_segment(id)
    )
}

/// Percent-encode everything but the unreserved characters (RFC 3986).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The credentials of one profile.
#[derive(Clone)]
pub struct AwsKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for AwsKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsKeys")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// A request to sign: `headers` are its own headers to sign.
pub(super) struct Unsigned<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// The headers to add to `request` so that it carries a SigV4 signature:
/// `x-amz-date`, `x-amz-security-token` (with a session token) and
/// `authorization`.
pub(super) fn signature_headers(
    request: &Unsigned<'_>,
    keys: &AwsKeys,
    region: &str,
    service: &str,
    at: SystemTime,
) -> Result<Vec<(String, String)>, String> {
    let Unsigned {
        method,
        url,
        headers,
        body,
    } = *request;
    let identity = Credentials::new(
        &keys.access_key_id,
        &keys.secret_access_key,
        keys.session_token.clone(),
        None,
        "guardrail profile",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(at)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let request = SignableRequest::new(
        method,
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| e.to_string())?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The AWS SigV4 test suite's credentials and time.
    fn example_keys(session_token: Option<&str>) -> AwsKeys {
        AwsKeys {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: session_token.map(str::to_owned),
        }
    }

    fn suite_time() -> SystemTime {
        // 2015-08-30T12:36:00Z
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160)
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn post_vanilla_vector() {
        let h = signature_headers(
            &Unsigned {
                method: "POST",
                url: "https://example.amazonaws.com/",
                headers: &[("host", "example.amazonaws.com")],
                body: b"",
            },
            &example_keys(None),
            "us-east-1",
            "service",
            suite_time(),
        )
        .unwrap();
        assert_eq!(header(&h, "x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(
            header(&h, "authorization"),
            Some("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
        );
    }

    #[test]
    fn form_body_vector() {
        let h = signature_headers(
            &Unsigned {
                method: "POST",
                url: "https://example.amazonaws.com/",
                headers: &[
                    ("content-type", "application/x-www-form-urlencoded"),
                    ("host", "example.amazonaws.com"),
                    ("content-length", "13"),
                    (
                        "x-amz-content-sha256",
                        "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
                    ),
                ],
                body: b"Param1=value1",
            },
            &example_keys(None),
            "us-east-1",
            "service",
            suite_time(),
        )
        .unwrap();
        assert!(header(&h, "authorization").unwrap().ends_with(
            "SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, Signature=d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"
        ), "{h:?}");
    }

    #[test]
    fn session_token_vector() {
        let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
        let h = signature_headers(
            &Unsigned {
                method: "GET",
                url: "https://example.amazonaws.com/",
                headers: &[("host", "example.amazonaws.com")],
                body: b"",
            },
            &example_keys(Some(token)),
            "us-east-1",
            "service",
            suite_time(),
        )
        .unwrap();
        assert_eq!(header(&h, "x-amz-security-token"), Some(token));
        assert!(header(&h, "authorization").unwrap().ends_with(
            "SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
        ), "{h:?}");
    }

    #[test]
    fn regions_ids_and_versions_are_checked() {
        for ok in [
            "us-east-1",
            "eu-central-2",
            "us-gov-west-1",
            "ap-southeast-2",
        ] {
            assert!(valid_region(ok), "{ok}");
        }
        for bad in [
            "",
            "us-east",
            "US-EAST-1",
            "us-east-1.evil.com",
            "us--1",
            "x-y-z",
            "169.254.169.254",
            "us-east-1/",
            "a-b-1#",
        ] {
            assert!(!valid_region(bad), "{bad}");
        }
        assert!(valid_guardrail_id("abc123xyz"));
        assert!(valid_guardrail_id(
            "arn:aws:bedrock:us-east-1:123456789012:guardrail/abc123"
        ));
        for bad in [
            "",
            "ABC",
            "a/b",
            "arn:aws:bedrock:us-east-1:1234:guardrail/abc",
            "arn:aws:s3:us-east-1:123456789012:guardrail/abc",
            "../x",
        ] {
            assert!(!valid_guardrail_id(bad), "{bad}");
        }
        assert!(valid_version("DRAFT") && valid_version("1") && valid_version("99999999"));
        for bad in ["0", "100000000", "draft", "1.0", "", "-1"] {
            assert!(!valid_version(bad), "{bad}");
        }
    }

    #[test]
    fn urls_encode_the_identifier() {
        assert_eq!(
            apply_url(None, "us-west-2", "abc", "DRAFT"),
            "https://bedrock-runtime.us-west-2.amazonaws.com/guardrail/abc/version/DRAFT/apply"
        );
        assert_eq!(
            apply_url(Some("http://127.0.0.1:9/sim/"), "us-west-2", "arn:aws:bedrock:us-west-2:123456789012:guardrail/abc", "3"),
            "http://127.0.0.1:9/sim/guardrail/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aguardrail%2Fabc/version/3/apply"
        );
    }
}
