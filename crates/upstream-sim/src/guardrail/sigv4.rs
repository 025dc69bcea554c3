//! AWS Signature Version 4 (`AWS4-HMAC-SHA256`), written here with `hmac`
//! and `sha2` so that it checks the gateway's signer (the `aws-sigv4` crate)
//! instead of sharing its understanding. The pure parts take the request as a
//! [`SignableRequest`] and the time as an argument: [`canonical_request`],
//! [`string_to_sign`], [`signing_key`], [`signature`]. [`verify`] checks a
//! request as the service does; [`sign`] makes the headers a client adds (for
//! tests).
//!
//! The canonical URI is the path as sent (already percent-encoded by the
//! client), normalized (`.`, `..` and empty segments removed) and then
//! URI-encoded once more, as AWS does for every service but S3: an ARN sent
//! as `arn%3Aaws%3A…%2F…` is signed as `arn%253Aaws%253A…%252F…` (the
//! `aws-sigv4` crate's default `PercentEncodingMode::Double`). The payload
//! hash is the SHA-256 of the body (no `x-amz-content-sha256` is needed).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::http::{amz_date, parse_amz_date};

/// The only algorithm the service accepts.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The last part of every credential scope.
pub const TERMINATOR: &str = "aws4_request";
/// How far `x-amz-date` may be from the service's clock, in seconds.
pub const MAX_SKEW_SECS: u64 = 300;

type HmacSha256 = Hmac<Sha256>;

/// A request as the signature covers it.
#[derive(Debug, Clone, Copy)]
pub struct SignableRequest<'a> {
    pub method: &'a str,
    /// The path as sent (percent-encoded as on the wire), without the query.
    pub path: &'a str,
    /// The raw query, without `?` (empty when none).
    pub query: &'a str,
    /// The headers as sent; names in any case, a name may repeat.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

impl SignableRequest<'_> {
    /// Every value of a header (name compared case-insensitively), in order.
    fn values(&self, name: &str) -> impl Iterator<Item = &str> {
        let name = name.to_owned();
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(&name))
            .map(|(_, v)| *v)
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.values(name).next()
    }
}

/// Who signs: an access key pair and, for temporary credentials, a session token.
#[derive(Debug, Clone, Copy)]
pub struct Credentials<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub session_token: Option<&'a str>,
}

/// The credential scope: `date/region/service/aws4_request`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `YYYYMMDD`.
    pub date: String,
    pub region: String,
    pub service: String,
    pub terminator: String,
}

impl Scope {
    pub fn new(date: &str, region: &str, service: &str) -> Self {
        Scope {
            date: date.to_owned(),
            region: region.to_owned(),
            service: service.to_owned(),
            terminator: TERMINATOR.to_owned(),
        }
    }

    /// `date/region/service/terminator`.
    pub fn path(&self) -> String {
        let Scope {
            date,
            region,
            service,
            terminator,
        } = self;
        format!("{date}/{region}/{service}/{terminator}")
    }
}

/// The parts of an `Authorization: AWS4-HMAC-SHA256 …` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorization {
    pub access_key_id: String,
    pub scope: Scope,
    /// As listed (lower-case, sorted by a well-behaved client).
    pub signed_headers: Vec<String>,
    /// Hex, as sent.
    pub signature: String,
}

/// Why the service refuses a signature (all are HTTP 403).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigError {
    /// No `Authorization` header.
    Missing,
    /// A malformed `Authorization` header or `x-amz-date`.
    Incomplete(String),
    /// An access key id the service does not know.
    UnknownKey,
    /// A scope, date or signed-header list the service refuses.
    Invalid(String),
    /// The signature is not the one the service computed from these.
    Mismatch {
        canonical_request: String,
        string_to_sign: String,
    },
}

impl SigError {
    /// The `x-amzn-ErrorType` of the refusal.
    pub fn error_type(&self) -> &'static str {
        match self {
            SigError::Missing => "MissingAuthenticationTokenException",
            SigError::Incomplete(_) => "IncompleteSignatureException",
            SigError::UnknownKey => "UnrecognizedClientException",
            SigError::Invalid(_) | SigError::Mismatch { .. } => "InvalidSignatureException",
        }
    }

    /// The `message` of the refusal (a mismatch shows what the service
    /// signed, as AWS does, so a failing client can compare).
    pub fn message(&self) -> String {
        match self {
            SigError::Missing => "Missing Authentication Token".to_owned(),
            SigError::Incomplete(m) | SigError::Invalid(m) => m.clone(),
            SigError::UnknownKey => {
                "The security token included in the request is invalid.".to_owned()
            }
            SigError::Mismatch {
                canonical_request,
                string_to_sign,
            } => format!(
                "The request signature we calculated does not match the signature you \
                 provided. Check your AWS Secret Access Key and signing method. Consult the \
                 service documentation for details.\n\nThe Canonical String for this request \
                 should have been\n'{canonical_request}'\n\nThe String-to-Sign should have \
                 been\n'{string_to_sign}'\n"
            ),
        }
    }
}

/// Parse `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
pub fn parse_authorization(value: &str) -> Result<Authorization, SigError> {
    let value = value.trim();
    let (algorithm, params) = value.split_once(' ').unwrap_or((value, ""));
    if algorithm != ALGORITHM {
        let m = format!("Unsupported Authorization Type: '{algorithm}'.");
        return Err(SigError::Incomplete(m));
    }
    let param = |name: &str| {
        params.split(',').find_map(|p| {
            let (k, v) = p.trim().split_once('=')?;
            (k == name && !v.is_empty()).then_some(v)
        })
    };
    let names = ["Credential", "SignedHeaders", "Signature"];
    let found = names.map(param);
    let [Some(credential), Some(signed), Some(signature)] = found else {
        let missing: String = names
            .iter()
            .zip(found)
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| format!("Authorization header requires '{k}' parameter. "))
            .collect();
        return Err(SigError::Incomplete(format!(
            "{missing}Authorization={value}"
        )));
    };
    let parts: Vec<&str> = credential.split('/').collect();
    let [access_key_id, date, region, service, terminator] = parts[..] else {
        return Err(SigError::Incomplete(format!(
            "Credential should be AKID/YYYYMMDD/region/service/aws4_request, not '{credential}'."
        )));
    };
    Ok(Authorization {
        access_key_id: access_key_id.to_owned(),
        scope: Scope {
            terminator: terminator.to_owned(),
            ..Scope::new(date, region, service)
        },
        signed_headers: signed.split(';').map(str::to_owned).collect(),
        signature: signature.to_owned(),
    })
}

/// URI-encode as SigV4 does: every byte but `A-Z a-z 0-9 - _ . ~` becomes
/// `%XX` (upper-case hex); `/` too unless `keep_slash`.
pub fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || (keep_slash && b == b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The canonical URI of a path as sent: normalized, then encoded again.
pub fn canonical_uri(path: &str) -> String {
    uri_encode(&normalize_path(path), true)
}

/// RFC 3986 dot-segment removal, also dropping empty segments; the result
/// starts with `/` and keeps a trailing `/`.
fn normalize_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = format!("/{}", segments.join("/"));
    let trailing = ["/", "/.", "/.."].iter().any(|end| path.ends_with(end));
    if trailing && !out.ends_with('/') {
        out.push('/');
    }
    out
}

/// The canonical query: pairs decoded, encoded again, sorted.
pub fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (uri_encode(&k, false), uri_encode(&v, false)))
        .collect();
    pairs.sort();
    let pairs: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join("&")
}

/// Spaces trimmed at both ends and runs of spaces collapsed to one.
fn trim_all(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for word in value.split(' ').filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn hex_sha256(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The canonical request over `signed` headers (in the order given); a
/// signed header the request lacks is an error.
pub fn canonical_request(req: &SignableRequest<'_>, signed: &[String]) -> Result<String, SigError> {
    let mut out = format!(
        "{}\n{}\n{}\n",
        req.method,
        canonical_uri(req.path),
        canonical_query(req.query)
    );
    for name in signed {
        let values: Vec<String> = req.values(name).map(trim_all).collect();
        if values.is_empty() {
            let m = format!("The header '{name}' is signed but is not in the request.");
            return Err(SigError::Invalid(m));
        }
        out.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    out.push_str(&format!("\n{}\n{}", signed.join(";"), hex_sha256(req.body)));
    Ok(out)
}

/// `AWS4-HMAC-SHA256\n<amz-date>\n<scope>\n<hex sha256 of the canonical request>`.
pub fn string_to_sign(amz_date: &str, scope: &Scope, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{amz_date}\n{}\n{}",
        scope.path(),
        hex_sha256(canonical_request.as_bytes())
    )
}

fn mac(key: &[u8]) -> HmacSha256 {
    #[expect(clippy::expect_used, reason = "HMAC takes a key of any length")]
    HmacSha256::new_from_slice(key).expect("any key length")
}

fn hmac(key: &[u8], data: &str) -> [u8; 32] {
    let mut m = mac(key);
    m.update(data.as_bytes());
    m.finalize().into_bytes().into()
}

/// The key chain: `"AWS4"+secret` → date → region → service → terminator.
pub fn signing_key(secret_access_key: &str, scope: &Scope) -> [u8; 32] {
    let k = hmac(format!("AWS4{secret_access_key}").as_bytes(), &scope.date);
    let k = hmac(&k, &scope.region);
    let k = hmac(&k, &scope.service);
    hmac(&k, &scope.terminator)
}

/// The hex signature of a string to sign.
pub fn signature(key: &[u8; 32], string_to_sign: &str) -> String {
    hex::encode(hmac(key, string_to_sign))
}

/// Whether `region` looks like one (`us-east-1`, `us-gov-west-1`).
fn valid_region(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    let letters = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase());
    let [first, middle @ .., last] = parts.as_slice() else {
        return false;
    };
    first.len() == 2
        && letters(first)
        && !middle.is_empty()
        && middle.iter().all(|p| letters(p))
        && !last.is_empty()
        && last.bytes().all(|b| b.is_ascii_digit())
}

/// The checks of the scope and the signed-header list against the request.
fn check_scope(
    req: &SignableRequest<'_>,
    auth: &Authorization,
    amz: &str,
    service: &str,
) -> Result<(), SigError> {
    let scope = &auth.scope;
    let invalid = |m: String| Err(SigError::Invalid(m));
    if scope.terminator != TERMINATOR {
        let t = &scope.terminator;
        return invalid(format!(
            "Credential should be scoped with a valid terminator: '{TERMINATOR}', not '{t}'."
        ));
    }
    if amz.get(..8) != Some(scope.date.as_str()) {
        let (d, day) = (&scope.date, amz.get(..8).unwrap_or(amz));
        return invalid(format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date \
             from HTTP: '{d}' != '{day}', from '{amz}'."
        ));
    }
    if scope.service != service {
        return invalid(format!(
            "Credential should be scoped to correct service: '{service}'."
        ));
    }
    if !valid_region(&scope.region) {
        return invalid("Credential should be scoped to a valid region.".to_owned());
    }
    let signed = |name: &str| auth.signed_headers.iter().any(|h| h == name);
    for name in ["host", "x-amz-date"] {
        if !signed(name) {
            return invalid(format!(
                "'{name}' must be a 'SignedHeader' in the AWS Authorization."
            ));
        }
    }
    if req.header("x-amz-security-token").is_some() && !signed("x-amz-security-token") {
        return invalid(
            "'x-amz-security-token' must be a 'SignedHeader' in the AWS Authorization.".to_owned(),
        );
    }
    Ok(())
}

/// Whether `amz` (at `at`) is within [`MAX_SKEW_SECS`] of `now`.
fn check_time(amz: &str, at: u64, now: u64) -> Result<(), SigError> {
    let now_text = amz_date(now);
    if now.saturating_sub(at) > MAX_SKEW_SECS {
        let edge = amz_date(now - MAX_SKEW_SECS);
        return Err(SigError::Invalid(format!(
            "Signature expired: {amz} is now earlier than {edge} ({now_text} - 5 min.)"
        )));
    }
    if at.saturating_sub(now) > MAX_SKEW_SECS {
        let edge = amz_date(now + MAX_SKEW_SECS);
        return Err(SigError::Invalid(format!(
            "Signature not yet current: {amz} is still later than {edge} ({now_text} + 5 min.)"
        )));
    }
    Ok(())
}

/// Parse the `Authorization` and `x-amz-date` of a request (no check of the
/// signature itself): what even an accept-any service needs.
pub fn read(req: &SignableRequest<'_>) -> Result<(Authorization, String, u64), SigError> {
    let header = req.header("authorization").ok_or(SigError::Missing)?;
    let auth = parse_authorization(header)?;
    let Some(amz) = req.header("x-amz-date") else {
        return Err(SigError::Incomplete(format!(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' \
             header. Authorization={header}"
        )));
    };
    let Some(at) = parse_amz_date(amz) else {
        return Err(SigError::Incomplete(format!(
            "Date must be in ISO-8601 'basic format'. Got '{amz}'."
        )));
    };
    Ok((auth, amz.to_owned(), at))
}

/// Check a request's signature for `service` at time `now` (Unix seconds);
/// `secret_of` gives the secret of an access key id the service knows.
pub fn verify(
    req: &SignableRequest<'_>,
    service: &str,
    secret_of: impl Fn(&str) -> Option<String>,
    now: u64,
) -> Result<Authorization, SigError> {
    let (auth, amz, at) = read(req)?;
    check_scope(req, &auth, &amz, service)?;
    let secret = secret_of(&auth.access_key_id).ok_or(SigError::UnknownKey)?;
    check_time(&amz, at, now)?;
    let canonical_request = canonical_request(req, &auth.signed_headers)?;
    let string_to_sign = string_to_sign(&amz, &auth.scope, &canonical_request);
    let key = signing_key(&secret, &auth.scope);
    let mut expected = mac(&key);
    expected.update(string_to_sign.as_bytes());
    let given = hex::decode(&auth.signature).unwrap_or_default();
    // Constant time: the comparison is the MAC's own.
    match expected.verify_slice(&given) {
        Ok(()) => Ok(auth),
        Err(_) => Err(SigError::Mismatch {
            canonical_request,
            string_to_sign,
        }),
    }
}

/// The headers a client adds to sign `req` at `now`: `x-amz-date`,
/// `x-amz-security-token` (with a session token) and `authorization`, in
/// that order. Every header of `req` is signed (it must hold `host`), with
/// those it adds; any of them already in `req` is replaced.
pub fn sign(
    req: &SignableRequest<'_>,
    creds: &Credentials<'_>,
    region: &str,
    service: &str,
    now: u64,
) -> Vec<(String, String)> {
    let amz = amz_date(now);
    let mut added = vec![("x-amz-date".to_owned(), amz.clone())];
    if let Some(token) = creds.session_token {
        added.push(("x-amz-security-token".to_owned(), token.to_owned()));
    }
    let replaced = |name: &str| {
        name.eq_ignore_ascii_case("authorization") || added.iter().any(|(a, _)| a == name)
    };
    let mut headers: Vec<(&str, &str)> = req
        .headers
        .iter()
        .filter(|(n, _)| !replaced(&n.to_ascii_lowercase()))
        .copied()
        .collect();
    headers.extend(added.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    let mut signed: Vec<String> = headers
        .iter()
        .map(|(n, _)| n.to_ascii_lowercase())
        .collect();
    signed.sort();
    signed.dedup();
    let signable = SignableRequest {
        headers: &headers,
        ..*req
    };
    let scope = Scope::new(&amz[..8], region, service);
    // Every signed header is in `headers` by construction.
    let canonical = canonical_request(&signable, &signed).unwrap_or_default();
    let sts = string_to_sign(&amz, &scope, &canonical);
    let sig = signature(&signing_key(creds.secret_access_key, &scope), &sts);
    let authorization = format!(
        "{ALGORITHM} Credential={}/{}, SignedHeaders={}, Signature={sig}",
        creds.access_key_id,
        scope.path(),
        signed.join(";")
    );
    added.push(("authorization".to_owned(), authorization));
    added
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
