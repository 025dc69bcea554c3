//! One call to the cloud guardrail service (AWS Bedrock `ApplyGuardrail`,
//! upstream-protocols.md section 8): the texts to check go out as one
//! content block each, signed with the profile's keys ([`sign`]), bounded
//! by the caller's timeout; the answer is read into a [`Verdict`].

pub mod sign;
pub mod verdict;

use std::time::{Duration, SystemTime};

use serde::Serialize;

pub use sign::AwsKeys;
pub use verdict::{Action, Verdict, Violation, ViolationKind};

/// Whose text is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "GuardrailSource"))]
pub enum Source {
    /// What the client sent.
    Input,
    /// What the model answered.
    Output,
}

/// Where and as whom one profile calls the service.
#[derive(Debug, Clone)]
pub struct Target {
    pub guardrail_id: String,
    pub guardrail_version: String,
    pub region: String,
    pub keys: AwsKeys,
}

/// Why a call gave no verdict. Every one of these fails open.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("the guardrail service did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the guardrail service could not be reached: {0}")]
    Unreachable(String),
    #[error("the guardrail service answered {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("the guardrail service's answer could not be read: {0}")]
    BadAnswer(String),
    #[error("the profile cannot be called: {0}")]
    BadProfile(String),
}

/// The largest answer read (a verdict is a few kilobytes).
const ANSWER_LIMIT: usize = 1 << 20;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApplyRequest<'a> {
    source: Source,
    content: Vec<ContentBlock<'a>>,
    output_scope: &'static str,
}

#[derive(Serialize)]
struct ContentBlock<'a> {
    text: TextBlock<'a>,
}

#[derive(Serialize)]
struct TextBlock<'a> {
    text: &'a str,
}

/// Check `texts` (one content block each, in order) with one profile.
pub async fn apply(
    http: &reqwest::Client,
    endpoint: Option<&str>,
    target: &Target,
    source: Source,
    texts: &[&str],
    timeout: Duration,
) -> Result<Verdict, ServiceError> {
    if !sign::valid_region(&target.region)
        || !sign::valid_guardrail_id(&target.guardrail_id)
        || !sign::valid_version(&target.guardrail_version)
    {
        return Err(ServiceError::BadProfile(
            "region, guardrail id or version is not valid".to_owned(),
        ));
    }
    let url = sign::apply_url(
        endpoint,
        &target.region,
        &target.guardrail_id,
        &target.guardrail_version,
    );
    let body = serde_json::to_vec(&ApplyRequest {
        source,
        content: texts
            .iter()
            .map(|text| ContentBlock {
                text: TextBlock { text },
            })
            .collect(),
        output_scope: "INTERVENTIONS",
    })
    .map_err(|e| ServiceError::BadProfile(e.to_string()))?;
    let signed = sign::signature_headers(
        &sign::Unsigned {
            method: "POST",
            url: &url,
            headers: &[("content-type", "application/json")],
            body: &body,
        },
        &target.keys,
        &target.region,
        sign::SERVICE,
        SystemTime::now(),
    )
    .map_err(ServiceError::BadProfile)?;
    let mut request = http
        .post(&url)
        .header("content-type", "application/json")
        .body(body);
    for (name, value) in signed {
        request = request.header(name, value);
    }
    let call = async {
        let response = request
            .send()
            .await
            .map_err(|e| ServiceError::Unreachable(without_url(&e)))?;
        let status = response.status();
        let bytes = read_limited(response).await?;
        if !status.is_success() {
            return Err(ServiceError::Refused {
                status: status.as_u16(),
                message: error_message(&bytes),
            });
        }
        serde_json::from_slice::<verdict::ApplyAnswer>(&bytes)
            .map(verdict::ApplyAnswer::verdict)
            .map_err(|e| ServiceError::BadAnswer(e.to_string()))
    };
    tokio::time::timeout(timeout, call)
        .await
        .map_err(|_| ServiceError::Timeout(timeout))?
}

/// The body, refused past [`ANSWER_LIMIT`].
async fn read_limited(mut response: reqwest::Response) -> Result<Vec<u8>, ServiceError> {
    let mut out = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ServiceError::Unreachable(without_url(&e)))?
    {
        if out.len() + chunk.len() > ANSWER_LIMIT {
            return Err(ServiceError::BadAnswer(
                "the answer is too large".to_owned(),
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The service's error `message`, or the start of the body.
fn error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        #[serde(alias = "Message")]
        message: String,
    }
    serde_json::from_slice::<ErrorBody>(body).map_or_else(
        |_| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
        |e| e.message,
    )
}

/// A transport error without its URL (which names the guardrail).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the guardrail service");
    }
    text
}
