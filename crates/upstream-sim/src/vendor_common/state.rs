//! The state every vendor simulator shares, one per simulator instance: live
//! settings, scenario queues, stream counters per vendor, the API listener's
//! base URL and the accept-any-token switch. Each part sits behind its own
//! lock; a vendor's own stores (OAuth tokens, code-host users) live in its
//! module and point here.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::config::VendorsConfig;
use super::scenario::VendorScenario;
use super::select::{self, VendorBook};
use super::Vendor;
use crate::state::{lock, Switches};
use crate::stats::StreamCounters;

#[derive(Debug)]
pub(crate) struct VendorState {
    settings: Mutex<VendorsConfig>,
    book: Mutex<VendorBook>,
    streams: [Arc<StreamCounters>; 4],
    switches: Arc<Switches>,
    /// The API listener's base URL (the assistant token's `endpoints.api` is below it).
    api_base: OnceLock<String>,
}

impl VendorState {
    pub fn new(config: &VendorsConfig, switches: Arc<Switches>) -> Self {
        VendorState {
            settings: Mutex::new(config.clone()),
            book: Mutex::new(VendorBook::new(config.default_scenario.clone())),
            streams: Default::default(),
            switches,
            api_base: OnceLock::new(),
        }
    }

    /// Accept any non-empty credential (the vendors' required headers are still checked).
    pub fn accepts_any_token(&self) -> bool {
        self.switches.accepts_any_token()
    }

    pub fn settings(&self) -> MutexGuard<'_, VendorsConfig> {
        lock(&self.settings)
    }

    pub fn book(&self) -> MutexGuard<'_, VendorBook> {
        lock(&self.book)
    }

    pub fn streams(&self, vendor: Vendor) -> &Arc<StreamCounters> {
        &self.streams[vendor.index()]
    }

    pub fn set_api_base(&self, url: String) {
        // Set once at start; a second call is impossible by construction.
        let _ = self.api_base.set(url);
    }

    pub fn api_base(&self) -> &str {
        self.api_base.get().map(String::as_str).unwrap_or("")
    }

    /// The scenario of one request to `vendor` whose last user text is `text`.
    pub fn choose(
        &self,
        vendor: Vendor,
        text: &str,
    ) -> Result<VendorScenario, super::scenario::VendorScenarioParseError> {
        let directives = select::parse_directives(text)?;
        Ok(self.book().choose(vendor, directives))
    }
}
