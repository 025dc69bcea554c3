//! The time budgets and rate windows are computed in: the system clock,
//! which a test can move forward (a budget's period ending, a new minute)
//! without waiting. Nothing else reads the shift.

use std::sync::atomic::{AtomicI64, Ordering};

static SHIFT_SECS: AtomicI64 = AtomicI64::new(0);

/// Unix seconds, shifted by what tests asked for.
pub fn now() -> i64 {
    crate::store::clock::now() + SHIFT_SECS.load(Ordering::Relaxed)
}

/// Move this process's limits clock forward by `secs` (tests only: every
/// gateway in the process sees it).
#[doc(hidden)]
pub fn shift_for_tests(secs: i64) {
    SHIFT_SECS.fetch_add(secs, Ordering::Relaxed);
}
