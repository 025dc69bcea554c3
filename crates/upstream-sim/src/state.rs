//! What every simulated service shares at run time, below all of them: the
//! switch that makes them accept any credential ([`Switches`]), and the lock
//! helper their stores use. Each service keeps its own state in its own
//! module; `server` composes them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Lock a mutex, ignoring poisoning: a panicked handler leaves consistent maps.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run-time switches every service reads.
#[derive(Debug, Default)]
pub(crate) struct Switches {
    accept_any_token: AtomicBool,
}

impl Switches {
    pub fn new(accept_any_token: bool) -> Self {
        Switches {
            accept_any_token: AtomicBool::new(accept_any_token),
        }
    }

    /// Accept any non-empty credential (benchmarks, manual runs).
    pub fn accepts_any_token(&self) -> bool {
        self.accept_any_token.load(Ordering::Relaxed)
    }

    pub fn set_accept_any_token(&self, accept: bool) {
        self.accept_any_token.store(accept, Ordering::Relaxed);
    }
}
