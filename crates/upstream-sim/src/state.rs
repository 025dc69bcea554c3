//! The state one simulator instance shares between its listeners, its
//! handlers and its [`crate::SimHandle`]. Each stateful part sits behind its own
//! lock or atomic so a request touches only what it needs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::config::SimConfig;
use crate::oidc::store::OidcStore;
use crate::primary::cache::FrameCache;
use crate::primary::models::ModelCatalog;
use crate::primary::select::ScenarioBook;
use crate::recorder::Recorder;
use crate::stats::StreamCounters;
use crate::vendor_common::state::VendorState;

/// Settings of the primary API that do not change while running.
#[derive(Debug)]
pub(crate) struct ApiSettings {
    pub models: ModelCatalog,
    pub max_input_bytes: usize,
    pub require_profile_arn: bool,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub api: ApiSettings,
    pub accept_any_token: AtomicBool,
    pub recorder: Arc<Recorder>,
    pub streams: Arc<StreamCounters>,
    /// Pre-encoded content of answers that do not depend on the request.
    pub frames: FrameCache,
    /// The vendor simulators (messages, completions, custom, assistant).
    pub vendors: VendorState,
    oidc: Mutex<OidcStore>,
    scenarios: Mutex<ScenarioBook>,
    /// Set once the OIDC listener is bound (its URL appears in OIDC answers).
    oidc_url: OnceLock<String>,
}

/// Lock a mutex, ignoring poisoning: a panicked handler leaves consistent maps.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub fn new(config: &SimConfig) -> Self {
        Shared {
            api: ApiSettings {
                models: ModelCatalog::new(config.models.clone()),
                max_input_bytes: config.max_input_bytes,
                require_profile_arn: config.require_profile_arn,
            },
            accept_any_token: AtomicBool::new(config.accept_any_token),
            recorder: Arc::new(Recorder::new(config.record_limit)),
            streams: Arc::new(StreamCounters::default()),
            frames: FrameCache::default(),
            vendors: VendorState::new(&config.vendors),
            oidc: Mutex::new(OidcStore::new(config.oidc.clone())),
            scenarios: Mutex::new(ScenarioBook::new(config.default_scenario.clone())),
            oidc_url: OnceLock::new(),
        }
    }

    pub fn oidc(&self) -> MutexGuard<'_, OidcStore> {
        lock(&self.oidc)
    }

    pub fn scenarios(&self) -> MutexGuard<'_, ScenarioBook> {
        lock(&self.scenarios)
    }

    pub fn accepts_any_token(&self) -> bool {
        self.accept_any_token.load(Ordering::Relaxed)
    }

    pub fn set_oidc_url(&self, url: String) {
        // Set once at start; a second call is impossible by construction.
        let _ = self.oidc_url.set(url);
    }

    pub fn oidc_url(&self) -> &str {
        self.oidc_url.get().map(String::as_str).unwrap_or("")
    }
}
