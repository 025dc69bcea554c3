//! Failed password sign-ins per email (spec 3.3, 5.7), kept in the store so
//! the lockout holds across restarts and replicas. Unknown emails are counted
//! too, so the answers do not reveal which accounts exist.
//!
//! Rule: a failure more than `window` after the previous one starts a new
//! count at 1; `threshold` failures lock the email until `window` has passed
//! since the last failure. Attempts refused while locked are not counted (the
//! lock is not prolonged by them). A successful sign-in clears the count.

use super::clock::now;
use super::{with_pool, Store, StoreError};

/// The login-failures repository.
pub struct LoginFailures<'a> {
    store: &'a Store,
}

impl<'a> LoginFailures<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        LoginFailures { store }
    }

    /// Seconds until `email` is unlocked, or `None` when it is not locked.
    pub async fn locked_for(
        &self,
        email: &str,
        threshold: u32,
        window_secs: i64,
    ) -> Result<Option<u64>, StoreError> {
        let row: Option<(i64, i64)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT failures, last_failure_at FROM login_failures WHERE email = $1")
                .bind(email)
                .fetch_optional(p)
                .await?
        });
        Ok(row.and_then(|(failures, last)| {
            lock_remaining(failures, last, now(), threshold, window_secs)
        }))
    }

    /// Count one failure for `email`; returns the seconds of lockout it
    /// causes (`Some` when this failure reached the threshold).
    pub async fn record(
        &self,
        email: &str,
        threshold: u32,
        window_secs: i64,
    ) -> Result<Option<u64>, StoreError> {
        let now = now();
        // One statement, so concurrent failures on any replica all count.
        let failures: i64 = with_pool!(self.store, p => {
            sqlx::query_scalar(
                "INSERT INTO login_failures (email, failures, first_failure_at, last_failure_at) \
                 VALUES ($1, 1, $2, $2) \
                 ON CONFLICT (email) DO UPDATE SET \
                   failures = CASE WHEN login_failures.last_failure_at <= $3 THEN 1 \
                                   ELSE login_failures.failures + 1 END, \
                   first_failure_at = CASE WHEN login_failures.last_failure_at <= $3 THEN $2 \
                                   ELSE login_failures.first_failure_at END, \
                   last_failure_at = $2 \
                 RETURNING failures",
            )
            .bind(email)
            .bind(now)
            .bind(now.saturating_sub(window_secs))
            .fetch_one(p)
            .await?
        });
        Ok(lock_remaining(failures, now, now, threshold, window_secs))
    }

    /// Forget the failures of `email` (after a successful sign-in).
    pub async fn clear(&self, email: &str) -> Result<(), StoreError> {
        with_pool!(self.store, p => {
            sqlx::query("DELETE FROM login_failures WHERE email = $1")
                .bind(email)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(())
    }

    /// Delete counters whose last failure is older than `window_secs`.
    pub async fn delete_stale(&self, window_secs: i64) -> Result<u64, StoreError> {
        let cutoff = now().saturating_sub(window_secs);
        let done = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM login_failures WHERE last_failure_at <= $1")
                .bind(cutoff)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(done)
    }
}

/// Seconds of lockout left for `failures` with the last at `last`, at `now`.
fn lock_remaining(
    failures: i64,
    last: i64,
    now: i64,
    threshold: u32,
    window_secs: i64,
) -> Option<u64> {
    let until = last.saturating_add(window_secs);
    (failures >= i64::from(threshold) && until > now)
        .then(|| u64::try_from(until - now).unwrap_or(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::lock_remaining;

    #[test]
    fn locked_only_at_the_threshold_and_inside_the_window() {
        assert_eq!(lock_remaining(4, 100, 100, 5, 900), None);
        assert_eq!(lock_remaining(5, 100, 100, 5, 900), Some(900));
        assert_eq!(lock_remaining(7, 100, 400, 5, 900), Some(600));
        assert_eq!(lock_remaining(5, 100, 1000, 5, 900), None);
        assert_eq!(lock_remaining(5, 100, 999, 5, 900), Some(1));
    }
}
