//! The primary API's state: settings fixed at start ([`ApiSettings`]), the
//! scenario queue, pre-encoded answers, stream counters, and the OIDC
//! service whose access tokens it accepts.

use std::sync::{Arc, Mutex, MutexGuard};

use super::cache::FrameCache;
use super::models::{ModelCatalog, ModelInfo};
use super::scenario::Scenario;
use super::select::ScenarioBook;
use crate::oidc::store::OidcStore;
use crate::oidc::OidcState;
use crate::state::{lock, Switches};
use crate::stats::StreamCounters;

/// Settings of the primary API that do not change while running.
#[derive(Debug)]
pub(crate) struct ApiSettings {
    pub models: ModelCatalog,
    pub max_input_bytes: usize,
    pub require_profile_arn: bool,
}

impl ApiSettings {
    pub fn new(models: Vec<ModelInfo>, max_input_bytes: usize, require_profile_arn: bool) -> Self {
        ApiSettings {
            models: ModelCatalog::new(models),
            max_input_bytes,
            require_profile_arn,
        }
    }
}

#[derive(Debug)]
pub(crate) struct PrimaryState {
    pub api: ApiSettings,
    pub streams: Arc<StreamCounters>,
    /// Pre-encoded content of answers that do not depend on the request.
    pub frames: FrameCache,
    switches: Arc<Switches>,
    scenarios: Mutex<ScenarioBook>,
    oidc: Arc<OidcState>,
}

impl PrimaryState {
    pub fn new(
        api: ApiSettings,
        default_scenario: Option<Scenario>,
        switches: Arc<Switches>,
        oidc: Arc<OidcState>,
    ) -> Self {
        PrimaryState {
            api,
            streams: Arc::new(StreamCounters::default()),
            frames: FrameCache::default(),
            switches,
            scenarios: Mutex::new(ScenarioBook::new(default_scenario)),
            oidc,
        }
    }

    pub fn scenarios(&self) -> MutexGuard<'_, ScenarioBook> {
        lock(&self.scenarios)
    }

    /// The OIDC store, whose access tokens the API accepts.
    pub fn oidc(&self) -> MutexGuard<'_, OidcStore> {
        self.oidc.store()
    }

    pub fn accepts_any_token(&self) -> bool {
        self.switches.accepts_any_token()
    }
}
