//! The `profileArn` of IAM Identity Center (organization) accounts.
//!
//! Such accounts must name their profile on every chat and model-listing
//! call ("profileArn is required" otherwise; protocol doc 1.1, 10.1 item 4).
//! After sign-in the gateway asks the upstream once with
//! `AmazonCodeWhispererService.ListAvailableProfiles` (awsJson1_0 over
//! `POST /`) and keeps the profile whose region is the API region (else the
//! first) with the credentials. Builder ID (individual) accounts need none,
//! and a failed lookup never stops the start: calls then go without it.

use std::time::Duration;

use reqwest::header::{HeaderValue, CONTENT_TYPE};
use serde::Deserialize;

/// The operation, as the service names it in `X-Amz-Target`.
const TARGET: &str = "AmazonCodeWhispererService.ListAvailableProfiles";

#[derive(Debug, Deserialize)]
struct ProfilesPage {
    #[serde(default)]
    profiles: Vec<Profile>,
}

#[derive(Debug, Deserialize)]
struct Profile {
    arn: String,
}

/// The region field of an ARN (`arn:aws:codewhisperer:<region>:<account>:profile/<id>`).
fn arn_region(arn: &str) -> Option<&str> {
    arn.split(':').nth(3).filter(|r| !r.is_empty())
}

/// The profile to use among `arns`: the first in `api_region`, else the first.
pub fn choose(arns: &[String], api_region: &str) -> Option<String> {
    arns.iter()
        .find(|a| arn_region(a) == Some(api_region))
        .or_else(|| arns.first())
        .cloned()
}

/// Ask the upstream for the account's profiles; `None` when it has none or
/// the call fails (logged).
pub async fn discover(
    http: &reqwest::Client,
    api_endpoint: &str,
    access_token: &str,
    api_region: &str,
    timeout: Duration,
) -> Option<String> {
    let url = format!("{}/", api_endpoint.trim_end_matches('/'));
    let sent = http
        .post(url)
        .bearer_auth(access_token)
        .header(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-amz-json-1.0"),
        )
        .header("x-amz-target", TARGET)
        .body(r#"{"maxResults":10}"#)
        .timeout(timeout)
        .send()
        .await;
    let response = match sent {
        Ok(r) if r.status().is_success() => r,
        Ok(r) => {
            tracing::warn!(
                status = r.status().as_u16(),
                "listing the upstream profiles failed; calls go without a profileArn"
            );
            return None;
        }
        Err(e) => {
            tracing::warn!(
                "listing the upstream profiles failed ({e}); calls go without a profileArn"
            );
            return None;
        }
    };
    let page: ProfilesPage = match response.json().await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("unreadable profile list ({e}); calls go without a profileArn");
            return None;
        }
    };
    let arns: Vec<String> = page.profiles.into_iter().map(|p| p.arn).collect();
    let chosen = choose(&arns, api_region);
    match &chosen {
        Some(arn) => tracing::info!(profile_arn = %arn, "using the account's upstream profile"),
        None => tracing::info!("the account lists no upstream profile"),
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_a_profile_in_the_api_region() {
        let arns = vec![
            "arn:aws:codewhisperer:eu-central-1:1:profile/A".to_owned(),
            "arn:aws:codewhisperer:us-east-1:1:profile/B".to_owned(),
        ];
        assert_eq!(
            choose(&arns, "us-east-1").as_deref(),
            Some("arn:aws:codewhisperer:us-east-1:1:profile/B")
        );
        assert_eq!(
            choose(&arns, "ap-south-1").as_deref(),
            Some("arn:aws:codewhisperer:eu-central-1:1:profile/A")
        );
        assert_eq!(choose(&[], "us-east-1"), None);
    }
}
