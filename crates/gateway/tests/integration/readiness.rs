//! `GET /ready`, the readiness probe (docs/operations.md): open without a
//! key, 200 while the replica can serve; in full deployment 503 `not_ready`
//! (the spec's error format) while its store fails or hangs, and 200 again
//! once the store answers, while `/health` (liveness) stays 200 throughout.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::both_stores;
use crate::common::*;

async fn get(url: String) -> (u16, Value) {
    let resp = client().get(url).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

fn assert_ready(status: u16, body: &Value) {
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ready");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert!(body["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert_eq!(body.as_object().unwrap().len(), 3, "{body}");
}

fn assert_not_ready(status: u16, body: &Value, says: &str) {
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["type"], "not_ready");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{message}");
    assert_eq!(body["error"].as_object().unwrap().len(), 2, "{body}");
}

#[tokio::test]
async fn proxy_mode_is_ready_without_a_key() {
    let env = ProxyEnv::start(&[]).await;
    let (status, body) = get(env.url("/ready")).await;
    assert_ready(status, &body);
    env.gateway.stop().await.unwrap();
}

/// Run `sql` on the test's database from a connection of its own (not a
/// `Store`: opening one would migrate).
async fn execute(db: &TestDb, sql: &str) {
    use sqlx::Connection as _;
    if db.backend == "postgres" {
        let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut conn).await.unwrap();
        conn.close().await.unwrap();
    } else {
        let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut conn).await.unwrap();
        conn.close().await.unwrap();
    }
}

async fn readiness_follows_the_store(db: TestDb) {
    let env = FullEnv::start(db, &[]).await;
    let (status, body) = get(env.url("/ready")).await;
    assert_ready(status, &body);

    // The table the probe reads is gone: the store fails every such query.
    execute(
        &env.db,
        "ALTER TABLE _sqlx_migrations RENAME TO _sqlx_migrations_away",
    )
    .await;
    let (status, body) = get(env.url("/ready")).await;
    assert_not_ready(status, &body, "database");
    let (status, body) = get(env.url("/health")).await;
    assert_eq!(status, 200, "liveness does not depend on the store: {body}");

    execute(
        &env.db,
        "ALTER TABLE _sqlx_migrations_away RENAME TO _sqlx_migrations",
    )
    .await;
    let (status, body) = get(env.url("/ready")).await;
    assert_ready(status, &body);
    env.gateway.stop().await.unwrap();
}

both_stores!(readiness_follows_the_store);

#[tokio::test]
async fn a_hung_database_is_not_ready_within_two_seconds() {
    let Some(db) = TestDb::postgres().await else {
        eprintln!("TEST_DATABASE_URL is not set: the hung-database test is skipped");
        return;
    };
    let env = FullEnv::start(db, &[]).await;
    // Another session holds the table the probe reads: the query waits.
    let mut holder = <sqlx::PgConnection as sqlx::Connection>::connect(&env.db.url)
        .await
        .unwrap();
    let mut tx = sqlx::Connection::begin(&mut holder).await.unwrap();
    sqlx::query("LOCK TABLE _sqlx_migrations IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *tx)
        .await
        .unwrap();

    let started = Instant::now();
    let (status, body) = get(env.url("/ready")).await;
    let took = started.elapsed();
    assert_not_ready(status, &body, "did not answer within 2s");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(5),
        "{took:?}"
    );

    tx.rollback().await.unwrap();
    let (status, body) = get(env.url("/ready")).await;
    assert_ready(status, &body);
    env.gateway.stop().await.unwrap();
}
