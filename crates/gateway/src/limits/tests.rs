//! The limiter against both backends: the same story in this process and
//! in the Redis of the machine (`TEST_REDIS_URL`, default
//! `redis://127.0.0.1:6379`; every key here is unique to the run).

use super::policy::{Budget, BudgetPeriod};
use super::*;
use crate::store::ids::{ApiKeyId, UserId};
use crate::store::testing::{memory_store, user};
use crate::store::usage::UsageRecord;

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

fn record(owner: KeyOwner, cost: f64) -> UsageRecord {
    UsageRecord {
        user_id: owner.user_id,
        key_id: Some(owner.key_id),
        provider: "primary".into(),
        model: "m".into(),
        stream: false,
        status: 200,
        input_tokens: 10,
        output_tokens: 10,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        latency_ms: 1,
        created_at: clock::now(),
        cost_usd: Some(cost),
        requests: 1,
    }
}

async fn story(limiter: Limiter) {
    let store = memory_store().await;
    let owner = KeyOwner {
        key_id: ApiKeyId::new(),
        user_id: user(&store, "a@example.com").await,
    };
    let rpm = OwnerLimits {
        key: Limits {
            rpm: Some(3),
            tpm: Some(1000),
            budget: None,
        },
        user: Limits::default(),
    };
    // Requests per minute: the fourth in a minute is refused with headers.
    // (Two windows may be seen when the minute turns: allow one more.)
    let mut admitted = 0;
    let mut refusal = None;
    for _ in 0..8 {
        match limiter.admit(&store, owner, &rpm, 100, true).await {
            Ok(a) => {
                admitted += 1;
                let h = a.headers.expect("headers");
                assert_eq!(h.requests.unwrap().0, 3);
                assert_eq!(h.tokens.unwrap().0, 1000);
            }
            Err(r) => {
                refusal = Some(r);
                break;
            }
        }
    }
    assert!((3..=6).contains(&admitted), "{admitted}");
    let r = refusal.expect("refused");
    assert_eq!(r.error.kind(), "rate_limited");
    assert!(r.error.retry_after().is_some_and(|s| (1..=60).contains(&s)));
    assert_eq!(r.headers.unwrap().requests.unwrap().1, 0);

    // A request larger than the token limit says so.
    let owner2 = KeyOwner {
        key_id: ApiKeyId::new(),
        user_id: owner.user_id,
    };
    let r = limiter
        .admit(&store, owner2, &rpm, 5000, true)
        .await
        .unwrap_err();
    assert!(
        r.error
            .to_string()
            .contains("larger than the token rate limit"),
        "{}",
        r.error
    );
    // Other calls count requests only and never check budgets.
    assert!(limiter
        .admit(&store, owner2, &rpm, 5000, false)
        .await
        .is_ok());

    // A daily budget of the user: 1 USD; 0.75 spent in the store already.
    let budget = OwnerLimits {
        key: Limits::default(),
        user: Limits {
            budget: Some(Budget {
                usd: 1.0,
                period: Some(BudgetPeriod::Daily),
            }),
            ..Limits::default()
        },
    };
    store
        .usage()
        .insert_batch(&[record(owner2, 0.75)])
        .await
        .unwrap();
    let a = limiter
        .admit(&store, owner2, &budget, 0, true)
        .await
        .unwrap();
    assert!(a.headers.is_none(), "no rate limit, no headers");
    let charge = a.charge.expect("a budget is charged");
    // The answer cost 0.30: written, then settled.
    store
        .usage()
        .insert_batch(&[record(owner2, 0.30)])
        .await
        .unwrap();
    let mut adds = Vec::new();
    charge.settle(20, Some(0.30), &mut adds);
    limiter.settle(&adds).await;
    // With Redis, a spent amount read at the last round trip serves for a
    // second (costs are counted once a second anyway).
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let r = limiter
        .admit(&store, owner2, &budget, 0, true)
        .await
        .unwrap_err();
    assert_eq!(r.error.kind(), "budget_exceeded");
    let text = r.error.to_string();
    assert!(
        text.contains("your account") && text.contains("1.05 of 1.00 USD per day"),
        "{text}"
    );
    assert!(text.contains("resets at"), "{text}");
    // The next day the budget starts again.
    clock::shift_for_tests(86_400);
    assert!(limiter
        .admit(&store, owner2, &budget, 0, true)
        .await
        .is_ok());
    clock::shift_for_tests(-86_400);
    assert_eq!(limiter.failures(), 0);
    store.close().await;
}

#[tokio::test]
async fn in_process() {
    story(Limiter::local()).await;
}

#[tokio::test]
async fn in_redis() {
    story(Limiter::redis(&redis_url()).unwrap()).await;
}

/// Far from its limits a key is admitted from leases: a thousand requests
/// cost a handful of round trips, and the headers still count down by one.
#[tokio::test]
async fn leases_spare_round_trips_far_from_the_limit() {
    let limiter = Limiter::redis(&redis_url()).unwrap();
    let store = memory_store().await;
    let owner = KeyOwner {
        key_id: ApiKeyId::new(),
        user_id: user(&store, "b@example.com").await,
    };
    let big = OwnerLimits {
        key: Limits {
            rpm: Some(1_000_000),
            tpm: Some(100_000_000),
            budget: Some(Budget {
                usd: 1000.0,
                period: Some(BudgetPeriod::Monthly),
            }),
        },
        user: Limits::default(),
    };
    let mut last = None;
    // Tokens are leased for the requests leased, not a share of all that
    // is left: 3,000 requests of 50 stay far from 100M tokens.
    for _ in 0..3000 {
        let a = limiter.admit(&store, owner, &big, 50, true).await.unwrap();
        let remaining = a.headers.unwrap().requests.unwrap().1;
        if let Some(previous) = last {
            // A new minute starts again from the top.
            assert!(
                remaining == previous - 1 || remaining > previous,
                "{previous} -> {remaining}"
            );
        }
        last = Some(remaining);
    }
    // The spent amount is re-read once a second; the rest are leases.
    assert!(limiter.round_trips() < 30, "{}", limiter.round_trips());
    store.close().await;
}

#[tokio::test]
async fn redis_unreachable_fails_open() {
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let limiter = Limiter::redis(&format!("redis://127.0.0.1:{port}")).unwrap();
    let store = memory_store().await;
    let owner = KeyOwner {
        key_id: ApiKeyId::new(),
        user_id: UserId::new(),
    };
    let one = OwnerLimits {
        key: Limits {
            rpm: Some(1),
            ..Limits::default()
        },
        user: Limits::default(),
    };
    for _ in 0..3 {
        let a = limiter.admit(&store, owner, &one, 0, true).await.unwrap();
        assert!(a.headers.is_none() && a.charge.is_none());
    }
    assert!(limiter.failures() >= 1);
    assert!(Limiter::redis("http://nope").is_err());
    store.close().await;
}
