//! `GET /_ui/api/providers/rate-limits` (interfaces-full.md 2): per account
//! the caller can use (their own, then the enabled pool's), what the
//! provider's rate-limit headers last said on this replica, whether it
//! rests after a 429, and its 429s of the last hour. Nulls where nothing
//! was seen yet.

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use super::extract::SessionUser;
use super::providers::{cooldown_until, AccountSource};
use crate::error::GatewayError;
use crate::providers::rate_limits::Window;
use crate::state::AppState;
use crate::store::clock::{now, rfc3339};
use crate::store::ids::ProviderAccountId;

/// One account's windows.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "RateLimitInfo"))]
pub(crate) struct RateLimitView {
    #[cfg_attr(test, ts(type = "ProviderId"))]
    provider: String,
    account_id: ProviderAccountId,
    source: AccountSource,
    limit_requests: Option<u64>,
    remaining_requests: Option<u64>,
    reset_requests_at: Option<String>,
    limit_tokens: Option<u64>,
    remaining_tokens: Option<u64>,
    reset_tokens_at: Option<String>,
    cooldown_until: Option<String>,
    recent_429: usize,
}

/// `GET /_ui/api/providers/rate-limits`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub(crate) struct RateLimitList {
    accounts: Vec<RateLimitView>,
}

/// `GET /_ui/api/providers/rate-limits`.
pub(crate) async fn list(
    State(app): State<AppState>,
    who: SessionUser,
) -> Result<Json<RateLimitList>, GatewayError> {
    let store = app.store()?.provider_accounts();
    let mut usable = store.list_for_user(who.user.id, None).await?;
    usable.extend(store.list_pool().await?.into_iter().filter(|a| a.enabled));
    let limits = app.accounts().rate_limits();
    let cooldowns = app.accounts().cooldowns();
    let at = now();
    let accounts = usable
        .into_iter()
        .map(|a| {
            let seen = limits.seen(a.id).unwrap_or_default();
            let (requests, tokens) = (seen.requests, seen.tokens);
            let reset = |w: Window| w.reset_at.map(rfc3339);
            RateLimitView {
                account_id: a.id,
                source: if a.pool {
                    AccountSource::Pool
                } else {
                    AccountSource::User
                },
                limit_requests: requests.limit,
                remaining_requests: requests.remaining,
                reset_requests_at: reset(requests),
                limit_tokens: tokens.limit,
                remaining_tokens: tokens.remaining,
                reset_tokens_at: reset(tokens),
                cooldown_until: cooldown_until(cooldowns, a.id),
                recent_429: seen.recent_429(at),
                provider: a.provider,
            }
        })
        .collect();
    Ok(Json(RateLimitList { accounts }))
}
